//! The pickle machine: runs opcodes of protocols 0–5 into an [`Arena`], never executing code.
//!
//! Semantics follow CPython's `_pickle.c` unpickler for the data opcodes. Every length prefix
//! is checked against the bytes that remain before anything is allocated, every pop against
//! the stack (and the open MARK), every memo get against the memo. Opcodes that import, call or
//! build objects, or fetch out-of-band data, are refused by name and byte offset.

use std::borrow::Cow;
use std::collections::HashMap;

use super::super::opcodes::{self as op};
use super::arena::{long_from_le, Arena, Node, NodeId, Span, TraceSink};
use super::error::ReadError;
use super::frames::Frames;
use super::text;

mod capacity;
mod checkpoint;
mod entries;
mod field;
mod machine;

use machine::{Item, Machine};

/// Highest protocol CPython writes today.
const MAX_PROTOCOL: u8 = 5;
/// Progress is reported each time this many more bytes are consumed.
const PROGRESS_STEP: usize = 1 << 20;
/// Memo keys below `dense.len() + MEMO_DENSE_SLACK` live in a vector, others in a map: the
/// vector is what MEMOIZE and CPython's BINPUTs fill, the map keeps odd keys from allocating.
const MEMO_DENSE_SLACK: usize = 1 << 16;
const NO_NODE: NodeId = NodeId::MAX;
/// Longest list [`Machine::share_equal_items`] looks at (frame lists are far shorter; long lists
/// are segments and traces, never equal).
const MAX_SHARED_LIST: usize = 1024;

/// Runs the pickle: its object graph, and the trace entries filled directly (see [`TraceSink`]).
pub(super) fn parse<'a>(
    data: &'a [u8],
    frames: Frames,
    progress: &mut dyn FnMut(u64),
) -> Result<(Arena<'a>, Vec<TraceSink>), ReadError> {
    let mut m = Machine::new(data.len());
    m.data = data;
    m.frames = frames;
    match m.run(progress)? {
        Some(root) => Ok(m.take_result(root)),
        // The input is whole, so the machine never waits for more of it.
        None => Err(ReadError::whole(
            "the pickle machine stopped before the input's end",
        )),
    }
}

/// The pickle machine run on its input as it arrives: each [`advance`](Incremental::advance)
/// runs the opcodes whose bytes are all there and stops before the first that is not, so the
/// parse overlaps the read. The results, errors included, are those of [`parse`] on the whole
/// input: an opcode only runs once all its bytes are there, and STOP (whose check covers the
/// bytes after it) once all the input is. Where the opcodes end is found by a scan ahead of
/// the machine ([`op_len`]), not by the machine: a check per opcode in its loop, even compiled
/// out of the whole-input copy, cost reading the whole input 4% (select-n-multidevice).
pub(super) struct Incremental<'a> {
    machine: Machine<'a>,
    /// Where the opcodes scanned so far end: the machine runs up to here.
    scanned: usize,
}

impl<'a> Incremental<'a> {
    /// For an input of `total` bytes.
    pub(super) fn new(total: usize) -> Incremental<'a> {
        Incremental {
            machine: Machine::new(total),
            scanned: 0,
        }
    }

    /// Runs on `prefix`, the input so far, which extends every earlier one: `None` until the
    /// whole input has come and been run.
    #[allow(clippy::type_complexity)]
    pub(super) fn advance(
        &mut self,
        prefix: &'a [u8],
        progress: &mut dyn FnMut(u64),
    ) -> Result<Option<(Arena<'a>, Vec<TraceSink>)>, ReadError> {
        let m = &mut self.machine;
        if prefix.len() < m.data.len() || prefix.len() > m.total {
            return Err(ReadError::whole(format!(
                "the input came as {} bytes after {} of {}: it changed while being read",
                prefix.len(),
                m.data.len(),
                m.total
            )));
        }
        if prefix.len() == m.total {
            m.data = prefix;
        } else {
            // Up to the last opcode all here, and never past a STOP.
            while let Some(n) = prefix
                .get(self.scanned..)
                .filter(|rest| rest.first().is_some_and(|&b| b != op::STOP))
                .and_then(op_len)
                .filter(|&n| {
                    self.scanned
                        .checked_add(n)
                        .is_some_and(|end| end <= prefix.len())
                })
            {
                self.scanned += n;
            }
            m.data = &prefix[..self.scanned];
        }
        match m.run(progress)? {
            Some(root) => Ok(Some(m.take_result(root))),
            None => Ok(None),
        }
    }
}

impl<'a> Machine<'a> {
    /// A machine for an input of `total` bytes, none of them here yet.
    fn new(total: usize) -> Machine<'a> {
        let step = checkpoint_step(total);
        Machine {
            data: &[],
            total,
            step,
            next_report: step,
            pos: 0,
            start: 0,
            op: 0,
            // Room to start with, at about the densest real files' bytes per node, item, pair
            // and memo entry (the real fixtures: 7–102 bytes per node). Room beyond the need is
            // memory a wasm instance keeps: at a node per 16 bytes, select-n-multidevice (1.2 MB)
            // reserved 65,536 nodes for its 11,838. A denser file doubles the vector, and past
            // the first checkpoint `capacity` reserves by the measured rate.
            nodes: Vec::with_capacity(estimate(total / 32)),
            at: Vec::with_capacity(estimate(total / 32)),
            items: Vec::with_capacity(estimate(total / 16)),
            pairs: Vec::with_capacity(estimate(total / 64)),
            stack: Vec::with_capacity(256),
            marks: Vec::with_capacity(64),
            memo_dense: Vec::with_capacity(estimate(total / 96)),
            memo_sparse: HashMap::new(),
            memo_len: 0,
            frame_end: 0,
            scratch_pairs: Vec::new(),
            traces_outer: None,
            trace_lists: Vec::new(),
            traces: Vec::new(),
            entry_count: 0,
            context_cache: None,
            metadata_cache: None,
            rest_cache: None,
            entry_items: Vec::new(),
            scratch_ids: Vec::new(),
            lists_by_hash: foldhash::HashMap::default(),
            key_fields: vec![(entries::NO_KEY, field::Field::Other); entries::KEY_CACHE],
            action_nodes: Vec::new(),
            checkpoint: checkpoint::Checkpoint::default(),
            frames: Frames::Keep,
            noted_frame_dict: Vec::new(),
        }
    }

    /// The object graph and trace entries, taken out (the machine is done with them).
    fn take_result(&mut self, root: NodeId) -> (Arena<'a>, Vec<TraceSink>) {
        let arena = Arena {
            nodes: std::mem::take(&mut self.nodes),
            at: std::mem::take(&mut self.at),
            items: std::mem::take(&mut self.items),
            pairs: std::mem::take(&mut self.pairs),
            root,
            skipped_frame_dicts: (self.noted_frame_dict.iter().enumerate())
                .filter_map(|(id, &noted)| noted.then_some(id as NodeId))
                .collect(),
        };
        (arena, std::mem::take(&mut self.traces))
    }
}

/// The length of the opcode starting `bytes` (its opcode byte, argument and data), if `bytes`
/// holds enough to tell; more than it needs is harmless (its run only waits longer), less would
/// not be. Unknown and refused opcodes are one byte: they fail as soon as they run.
fn op_len(bytes: &[u8]) -> Option<usize> {
    let arg = |n: usize| bytes.get(1..1 + n);
    let le = |n: usize| -> Option<u64> {
        let b = arg(n)?;
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(b);
        Some(u64::from_le_bytes(a))
    };
    let lines = |count: usize| -> Option<usize> {
        let mut at = 1;
        for _ in 0..count {
            at += bytes.get(at..)?.iter().position(|&b| b == b'\n')? + 1;
        }
        Some(at)
    };
    // A prefixed length past what an address holds cannot be there yet.
    let sized = |width: usize| -> Option<usize> {
        let n = usize::try_from(le(width)?).ok()?;
        (1 + width).checked_add(n)
    };
    match *bytes.first()? {
        op::BININT1 | op::BINGET | op::BINPUT | op::PROTO | op::EXT1 => Some(2),
        op::BININT2 | op::EXT2 => Some(3),
        op::BININT | op::LONG_BINGET | op::LONG_BINPUT | op::EXT4 => Some(5),
        op::BINFLOAT | op::FRAME => Some(9),
        op::SHORT_BINUNICODE | op::SHORT_BINBYTES | op::SHORT_BINSTRING | op::LONG1 => sized(1),
        // Signed: a negative length fails when it runs, after its 4 bytes.
        op::BINSTRING | op::LONG4 => match le(4)? as u32 as i32 {
            n if n < 0 => Some(5),
            _ => sized(4),
        },
        op::BINUNICODE | op::BINBYTES => sized(4),
        op::BINUNICODE8 | op::BINBYTES8 | op::BYTEARRAY8 => sized(8),
        op::INT
        | op::LONG
        | op::FLOAT
        | op::STRING
        | op::UNICODE
        | op::PUT
        | op::GET
        | op::PERSID => lines(1),
        op::GLOBAL | op::INST => lines(2),
        _ => Some(1),
    }
}

/// Bytes between progress reports and capacity checkpoints: [`PROGRESS_STEP`], or an eighth of
/// a smaller input, so that its vectors too are sized by the rate it fills them
/// (`capacity`) rather than by doubling from the first guess.
fn checkpoint_step(total: usize) -> usize {
    PROGRESS_STEP.min((total / 8).max(16 << 10))
}

/// Initial capacity from a size estimate, capped: past that the vectors grow by the rate the
/// input fills them (`capacity`). Room reserved and never used costs a wasm instance as much
/// as room used.
fn estimate(n: usize) -> usize {
    n.min(1 << 16)
}

fn op_label(opcode: u8) -> String {
    match op::name(opcode) {
        Some(n) => format!("{n} (0x{opcode:02x})"),
        None => format!("0x{opcode:02x}"),
    }
}

impl<'a> Machine<'a> {
    #[cold]
    #[inline(never)]
    fn err(&self, message: impl std::fmt::Display) -> ReadError {
        ReadError::at(self.start as u64, format!("{}: {message}", self.label()))
    }

    fn label(&self) -> String {
        format!("opcode {}", op_label(self.op))
    }

    #[inline(always)]
    fn take(&mut self, n: usize) -> Result<&'a [u8], ReadError> {
        let rest = self.data.len() - self.pos;
        if n > rest {
            return Err(self.err(format!(
                "needs {n} more bytes but the input ends after {rest} (file truncated?)"
            )));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline(always)]
    fn byte(&mut self) -> Result<u8, ReadError> {
        Ok(self.take(1)?[0])
    }

    #[inline]
    fn u16(&mut self) -> Result<u16, ReadError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    #[inline(always)]
    fn u32(&mut self) -> Result<u32, ReadError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    #[inline]
    fn i32(&mut self) -> Result<i32, ReadError> {
        Ok(self.u32()? as i32)
    }

    #[inline]
    fn u64(&mut self) -> Result<u64, ReadError> {
        let b = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// A length prefix, checked against what remains before anyone allocates for it.
    #[inline]
    fn sized(&mut self, len: u64) -> Result<&'a [u8], ReadError> {
        let rest = (self.data.len() - self.pos) as u64;
        if len > rest {
            return Err(self.err(format!(
                "length prefix says {len} bytes follow but only {rest} remain (file truncated or corrupt)"
            )));
        }
        self.take(len as usize)
    }

    /// A newline-terminated argument of a text opcode, without the newline.
    fn line(&mut self) -> Result<&'a [u8], ReadError> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == b'\n') {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => Err(self.err("argument has no terminating newline (file truncated?)")),
        }
    }

    #[inline(always)]
    fn new_node(&mut self, node: Node<'a>, at: u32) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(node);
        self.at.push(at);
        id
    }

    #[inline(always)]
    fn push_node(&mut self, node: Node<'a>) {
        let id = self.new_node(node, self.start as u32);
        self.stack.push(Item::Node(id));
    }

    #[inline(always)]
    fn push_int(&mut self, v: i64) {
        self.stack.push(Item::Int(v, self.start as u32));
    }

    /// The node for a stack item that is being stored somewhere (an inline int becomes one).
    #[inline(always)]
    fn keep(&mut self, item: Item) -> NodeId {
        match item {
            Item::Node(id) => id,
            Item::Int(v, at) => self.new_node(Node::Int(v), at),
        }
    }

    /// Appends `stack[from..]` (as nodes) to the sequence `span`, and drops them from the stack.
    fn store_seq(&mut self, from: usize, span: &mut Span) {
        let mut ids = std::mem::take(&mut self.scratch_ids);
        ids.clear();
        for i in from..self.stack.len() {
            let item = self.stack[i];
            ids.push(self.keep(item));
        }
        span.extend(&mut self.items, &ids);
        self.scratch_ids = ids;
        self.stack.truncate(from);
    }

    fn str_node(&mut self, bytes: &'a [u8]) -> Result<(), ReadError> {
        let s = std::str::from_utf8(bytes).map_err(|e| {
            self.err(format!(
                "string is not valid UTF-8 ({e}); lone surrogates are not supported"
            ))
        })?;
        self.push_node(Node::Str(Cow::Borrowed(s)));
        Ok(())
    }

    fn ascii_node(&mut self, bytes: &'a [u8]) -> Result<(), ReadError> {
        let s = text::ascii(bytes).map_err(|e| self.err(e))?;
        self.push_node(Node::Str(Cow::Borrowed(s)));
        Ok(())
    }

    /// Bottom of the part of the stack the current opcode may pop (the top MARK).
    #[inline]
    fn floor(&self) -> usize {
        self.marks.last().copied().unwrap_or(0)
    }

    #[inline]
    fn pop(&mut self) -> Result<Item, ReadError> {
        if self.stack.len() > self.floor() {
            // The length check above makes this pop infallible.
            Ok(self.stack.pop().unwrap_or(Item::Node(NO_NODE)))
        } else {
            Err(self.underflow(1))
        }
    }

    #[inline]
    fn top(&self) -> Result<Item, ReadError> {
        if self.stack.len() > self.floor() {
            Ok(self.stack[self.stack.len() - 1])
        } else {
            Err(self.underflow(1))
        }
    }

    #[cold]
    #[inline(never)]
    fn underflow(&self, wanted: usize) -> ReadError {
        let have = self.stack.len() - self.floor();
        let at_mark = if self.marks.is_empty() {
            ""
        } else {
            " above the open MARK"
        };
        self.err(format!(
            "needs {wanted} item(s) on the stack but finds {have}{at_mark} (stack underflow)"
        ))
    }

    /// Closes the top MARK: returns the stack length at the mark (items are `stack[m..]`).
    fn pop_mark(&mut self) -> Result<usize, ReadError> {
        self.marks
            .pop()
            .ok_or_else(|| self.err("needs a MARK but none is open"))
    }

    /// The container below the items of a closed MARK (APPENDS, SETITEMS, ADDITEMS).
    fn target_below(&self, mark: usize) -> Result<Item, ReadError> {
        if mark > self.floor() {
            Ok(self.stack[mark - 1])
        } else {
            Err(self.err("has no container below its MARK to add to (stack underflow)"))
        }
    }

    #[cold]
    #[inline(never)]
    fn type_err(&self, item: Item, expected: &str) -> ReadError {
        self.err(format!(
            "expects a {expected} to add to but finds a {}",
            self.item_type(item)
        ))
    }

    fn item_type(&self, item: Item) -> &'static str {
        match item {
            Item::Node(id) => self.nodes[id as usize].type_name(),
            Item::Int(..) => "int",
        }
    }

    /// The node of a container that an opcode adds to (an inline int is none).
    #[inline]
    fn container(item: Item) -> Option<NodeId> {
        match item {
            Item::Node(id) => Some(id),
            Item::Int(..) => None,
        }
    }

    #[inline]
    fn memo_put(&mut self, key: u64, id: NodeId) {
        let dense = self.memo_dense.len();
        let slot = if (key as usize as u64) == key && (key as usize) < dense + MEMO_DENSE_SLACK {
            let k = key as usize;
            if k == dense {
                // MEMOIZE and CPython's BINPUTs count up: the next key is the next slot.
                self.memo_dense.push(id);
                self.memo_len += 1;
                return;
            }
            if k > dense {
                self.memo_dense.resize(k + 1, NO_NODE);
            }
            let old = self.memo_dense[k];
            self.memo_dense[k] = id;
            old
        } else {
            self.memo_sparse.insert(key, id).unwrap_or(NO_NODE)
        };
        if slot == NO_NODE {
            self.memo_len += 1;
        }
    }

    #[inline(always)]
    fn memo_get(&mut self, key: u64) -> Result<(), ReadError> {
        if let Some(&id) = self.memo_dense.get(key as usize) {
            if id != NO_NODE && key <= usize::MAX as u64 {
                self.stack.push(Item::Node(id));
                return Ok(());
            }
        }
        self.memo_get_sparse(key)
    }

    /// A run of BINGET/LONG_BINGET opcodes from `self.start` (a frame list is 20-40 of them,
    /// and they are most of a snapshot's opcodes), pushed in one tight loop instead of one
    /// dispatch each. Stops before the first get it cannot do here (argument cut short, key
    /// not in the dense memo) and leaves `self.pos` there, so that the main loop runs that one
    /// with its checks and messages. False when it did nothing.
    #[inline(always)]
    fn memo_get_run(&mut self) -> bool {
        let data = self.data;
        let mut pos = self.start;
        loop {
            let (key, next) = match data.get(pos..pos + 5) {
                Some(&[op::LONG_BINGET, a, b, c, d, ..]) => {
                    (u32::from_le_bytes([a, b, c, d]) as usize, pos + 5)
                }
                _ => match data.get(pos..pos + 2) {
                    Some(&[op::BINGET, k]) => (usize::from(k), pos + 2),
                    _ => break,
                },
            };
            match self.memo_dense.get(key) {
                Some(&id) if id != NO_NODE => self.stack.push(Item::Node(id)),
                _ => break,
            }
            pos = next;
        }
        if pos == self.start {
            return false;
        }
        self.pos = pos;
        true
    }

    fn memo_get_sparse(&mut self, key: u64) -> Result<(), ReadError> {
        match self.memo_sparse.get(&key).copied() {
            Some(id) => {
                self.stack.push(Item::Node(id));
                Ok(())
            }
            None => Err(self.err(format!(
                "memo key {key} was never stored (PUT/MEMOIZE) before this get"
            ))),
        }
    }

    #[inline]
    fn put_top(&mut self, key: u64) -> Result<(), ReadError> {
        let item = self.top()?;
        let id = self.keep(item);
        // The stored int is a node now; the stack refers to it too.
        let last = self.stack.len() - 1;
        self.stack[last] = Item::Node(id);
        self.memo_put(key, id);
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn refuse(&mut self) -> ReadError {
        let what = match self.op {
            op::GLOBAL | op::INST => {
                // Name the global it asks for when the two lines are there.
                let module = self.line().ok().map(String::from_utf8_lossy);
                let name = self.line().ok().map(String::from_utf8_lossy);
                match (module, name) {
                    (Some(m), Some(n)) => format!(" '{m} {n}'"),
                    _ => String::new(),
                }
            }
            _ => String::new(),
        };
        let why = match self.op {
            op::BYTEARRAY8 | op::NEXT_BUFFER | op::READONLY_BUFFER => {
                "this pickle uses bytearrays or out-of-band buffers"
            }
            op::PERSID | op::BINPERSID => "this pickle refers to persistent (external) objects",
            _ => "this pickle asks to import/call code",
        };
        ReadError::at(
            self.start as u64,
            format!(
                "opcode {}{what} refused: memsnap reads plain data only; {why}",
                op_label(self.op)
            ),
        )
    }

    /// Runs opcodes until STOP (the root), or, while the input is still arriving, to the end
    /// of `data` (`None`), which [`Incremental`] puts where an opcode ends.
    fn run(&mut self, progress: &mut dyn FnMut(u64)) -> Result<Option<NodeId>, ReadError> {
        // A local, not the field, in the loop: kept in a register.
        let mut next_report = self.next_report;
        loop {
            if self.pos >= next_report {
                progress(self.pos as u64);
                self.reserve_ahead();
                next_report = self.pos + self.step;
            }
            self.start = self.pos;
            let Some(&opcode) = self.data.get(self.pos) else {
                if self.data.len() < self.total {
                    self.next_report = next_report;
                    return Ok(None);
                }
                return Err(ReadError::at(
                    self.pos as u64,
                    "input ends without a STOP opcode (file truncated?)",
                ));
            };
            self.op = opcode;
            self.pos += 1;
            match opcode {
                op::BINGET | op::LONG_BINGET if self.memo_get_run() => {}
                op::BINGET => {
                    let k = self.byte()?;
                    self.memo_get(u64::from(k))?;
                }
                op::LONG_BINGET => {
                    let k = self.u32()?;
                    self.memo_get(u64::from(k))?;
                }
                op::MEMOIZE => {
                    let k = self.memo_len;
                    self.put_top(k)?;
                }
                op::BINPUT => {
                    let k = self.byte()?;
                    self.put_top(u64::from(k))?;
                }
                op::LONG_BINPUT => {
                    let k = self.u32()?;
                    self.put_top(u64::from(k))?;
                }
                op::MARK => self.marks.push(self.stack.len()),
                op::EMPTY_DICT => match self.entry_sink() {
                    Some(sink) => self.new_entry(sink)?,
                    None => self.push_node(Node::Dict(Span::default())),
                },
                op::EMPTY_LIST => {
                    if self.opens_skipped_frames() {
                        self.push_node(Node::SkippedFrames);
                    } else {
                        self.push_node(Node::List(Span::default()));
                        self.note_trace_list();
                    }
                }
                op::EMPTY_TUPLE => self.push_node(Node::Tuple(Span::default())),
                op::EMPTY_SET => self.push_node(Node::Set(Span::default())),
                op::BININT1 => {
                    let v = self.byte()?;
                    self.push_int(i64::from(v));
                }
                op::BININT2 => {
                    let v = self.u16()?;
                    self.push_int(i64::from(v));
                }
                op::BININT => {
                    let v = self.i32()?;
                    self.push_int(i64::from(v));
                }
                op::LONG1 => {
                    let n = self.byte()?;
                    let b = self.sized(u64::from(n))?;
                    // Addresses and timestamps: 1-8 bytes, decoded here without a call.
                    match b.len() {
                        1..=8 => {
                            let fill = if b[b.len() - 1] & 0x80 != 0 { 0xff } else { 0 };
                            let mut buf = [fill; 8];
                            buf[..b.len()].copy_from_slice(b);
                            self.push_int(i64::from_le_bytes(buf));
                        }
                        _ => self.push_node(long_from_le(Cow::Borrowed(b))),
                    }
                }
                op::LONG4 => {
                    let n = self.i32()?;
                    if n < 0 {
                        return Err(self.err(format!("negative byte count {n}")));
                    }
                    let b = self.sized(n as u64)?;
                    self.push_node(long_from_le(Cow::Borrowed(b)));
                }
                op::SHORT_BINUNICODE => {
                    let n = self.byte()?;
                    let b = self.sized(u64::from(n))?;
                    self.str_node(b)?;
                }
                op::BINUNICODE => {
                    let n = self.u32()?;
                    let b = self.sized(u64::from(n))?;
                    self.str_node(b)?;
                }
                op::BINUNICODE8 => {
                    let n = self.u64()?;
                    let b = self.sized(n)?;
                    self.str_node(b)?;
                }
                op::SHORT_BINBYTES => {
                    let n = self.byte()?;
                    let b = self.sized(u64::from(n))?;
                    self.push_node(Node::Bytes(Cow::Borrowed(b)));
                }
                op::BINBYTES => {
                    let n = self.u32()?;
                    let b = self.sized(u64::from(n))?;
                    self.push_node(Node::Bytes(Cow::Borrowed(b)));
                }
                op::BINBYTES8 => {
                    let n = self.u64()?;
                    let b = self.sized(n)?;
                    self.push_node(Node::Bytes(Cow::Borrowed(b)));
                }
                op::SHORT_BINSTRING => {
                    let n = self.byte()?;
                    let b = self.sized(u64::from(n))?;
                    self.ascii_node(b)?;
                }
                op::BINSTRING => {
                    let n = self.i32()?;
                    if n < 0 {
                        return Err(self.err(format!("negative byte count {n}")));
                    }
                    let b = self.sized(n as u64)?;
                    self.ascii_node(b)?;
                }
                op::BINFLOAT => {
                    let b = self.take(8)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    self.push_node(Node::Float(f64::from_be_bytes(a)));
                }
                op::NONE => self.push_node(Node::None),
                op::NEWTRUE => self.push_node(Node::Bool(true)),
                op::NEWFALSE => self.push_node(Node::Bool(false)),
                op::APPEND => {
                    let item = self.pop()?;
                    let list = self.top()?;
                    if self.is_skipped(list) {
                        self.note_skipped_frames(&[item])?;
                        continue;
                    }
                    let mut sp = self.list_span(list)?;
                    let id = self.keep(item);
                    sp.extend(&mut self.items, &[id]);
                    self.set_span(list, sp);
                }
                op::APPENDS => {
                    let mark = self.pop_mark()?;
                    let list = self.target_below(mark)?;
                    if self.is_skipped(list) {
                        // The stack lent out whole: a loop indexing it through `self` ran
                        // 4% more instructions on reading cs336-a-2.7b-forward (callgrind).
                        let items = std::mem::take(&mut self.stack);
                        let noted = self.note_skipped_frames(&items[mark..]);
                        self.stack = items;
                        noted?;
                        self.stack.truncate(mark);
                        continue;
                    }
                    let mut sp = self.list_span(list)?;
                    let fresh = sp.cap == 0;
                    self.store_seq(mark, &mut sp);
                    if fresh {
                        self.share_equal_items(&mut sp);
                    }
                    self.set_span(list, sp);
                }
                op::SETITEM => {
                    let value = self.pop()?;
                    let key = self.pop()?;
                    self.check_key(key)?;
                    let dict = self.top()?;
                    if let Some(r) = self.entry_of(dict) {
                        self.fill_entry(r, &[key, value]);
                    } else {
                        let mut sp = self.dict_span(dict)?;
                        let pair = (self.keep(key), self.keep(value));
                        sp.extend(&mut self.pairs, &[pair]);
                        self.set_span(dict, sp);
                    }
                }
                op::SETITEMS => {
                    let mark = self.pop_mark()?;
                    let dict = self.target_below(mark)?;
                    if let Some(r) = self.entry_of(dict) {
                        self.check_pairs(mark)?;
                        let mut pairs = std::mem::take(&mut self.entry_items);
                        pairs.clear();
                        pairs.extend_from_slice(&self.stack[mark..]);
                        self.stack.truncate(mark);
                        self.fill_entry(r, &pairs);
                        self.entry_items = pairs;
                    } else {
                        let mut sp = self.dict_span(dict)?;
                        self.take_pairs(mark)?;
                        sp.extend(&mut self.pairs, &self.scratch_pairs);
                        self.set_span(dict, sp);
                    }
                }
                op::ADDITEMS => {
                    let mark = self.pop_mark()?;
                    let set = self.target_below(mark)?;
                    for i in mark..self.stack.len() {
                        self.check_key(self.stack[i])?;
                    }
                    let mut sp = match Self::container(set).map(|id| &self.nodes[id as usize]) {
                        Some(Node::Set(sp)) => *sp,
                        _ => return Err(self.type_err(set, "set")),
                    };
                    self.store_seq(mark, &mut sp);
                    self.set_span(set, sp);
                }
                op::TUPLE1 | op::TUPLE2 | op::TUPLE3 => {
                    let n = usize::from(opcode - op::TUPLE1 + 1);
                    if self.stack.len() < self.floor() + n {
                        return Err(self.underflow(n));
                    }
                    let sp = self.seq_from(self.stack.len() - n);
                    self.push_node(Node::Tuple(sp));
                }
                op::TUPLE => {
                    let mark = self.pop_mark()?;
                    let sp = self.seq_from(mark);
                    self.push_node(Node::Tuple(sp));
                }
                op::LIST => {
                    let mark = self.pop_mark()?;
                    let sp = self.seq_from(mark);
                    self.push_node(Node::List(sp));
                }
                op::DICT => {
                    let mark = self.pop_mark()?;
                    self.take_pairs(mark)?;
                    let mut sp = Span::default();
                    sp.extend(&mut self.pairs, &self.scratch_pairs);
                    self.push_node(Node::Dict(sp));
                }
                op::FROZENSET => {
                    let mark = self.pop_mark()?;
                    for &k in &self.stack[mark..] {
                        self.check_key(k)?;
                    }
                    let sp = self.seq_from(mark);
                    self.push_node(Node::FrozenSet(sp));
                }
                op::POP => {
                    if self.stack.len() > self.floor() {
                        self.stack.pop();
                    } else if self.marks.pop().is_none() {
                        return Err(self.underflow(1));
                    }
                }
                op::POP_MARK => {
                    let mark = self.pop_mark()?;
                    self.stack.truncate(mark);
                }
                op::DUP => {
                    let item = self.top()?;
                    self.stack.push(item);
                }
                op::PROTO => {
                    let v = self.byte()?;
                    if v > MAX_PROTOCOL {
                        return Err(self.err(format!(
                            "unsupported pickle protocol {v} (memsnap reads 0 to {MAX_PROTOCOL})"
                        )));
                    }
                }
                op::FRAME => {
                    if self.pos < self.frame_end {
                        return Err(self.err("a new FRAME begins before the current one ends"));
                    }
                    let n = self.u64()?;
                    let rest = (self.total - self.pos) as u64;
                    if n > rest {
                        return Err(self.err(format!(
                            "frame of {n} bytes but only {rest} remain (file truncated?)"
                        )));
                    }
                    self.frame_end = self.pos + n as usize;
                }
                op::STOP => return self.stop().map(Some),
                op::INT => {
                    let line = self.line()?;
                    let node = match line {
                        b"00" => Node::Bool(false),
                        b"01" => Node::Bool(true),
                        _ => text::decimal(line).map_err(|e| self.err(e))?,
                    };
                    self.push_node(node);
                }
                op::LONG => {
                    let line = self.line()?;
                    let digits = line.strip_suffix(b"L").unwrap_or(line);
                    let node = text::decimal(digits).map_err(|e| self.err(e))?;
                    self.push_node(node);
                }
                op::FLOAT => {
                    let line = self.line()?;
                    let v = text::float(line).map_err(|e| self.err(e))?;
                    self.push_node(Node::Float(v));
                }
                op::STRING => {
                    let line = self.line()?;
                    let bytes = text::quoted_string(line).map_err(|e| self.err(e))?;
                    let s = text::ascii(&bytes).map_err(|e| self.err(e))?.to_owned();
                    self.push_node(Node::Str(Cow::Owned(s)));
                }
                op::UNICODE => {
                    let line = self.line()?;
                    let s = text::raw_unicode_escape(line).map_err(|e| self.err(e))?;
                    self.push_node(Node::Str(Cow::Owned(s)));
                }
                op::PUT => {
                    let k = self.text_key()?;
                    self.put_top(k)?;
                }
                op::GET => {
                    let k = self.text_key()?;
                    self.memo_get(k)?;
                }
                op::GLOBAL
                | op::STACK_GLOBAL
                | op::REDUCE
                | op::BUILD
                | op::INST
                | op::OBJ
                | op::NEWOBJ
                | op::NEWOBJ_EX
                | op::EXT1
                | op::EXT2
                | op::EXT4
                | op::PERSID
                | op::BINPERSID
                | op::BYTEARRAY8
                | op::NEXT_BUFFER
                | op::READONLY_BUFFER => return Err(self.refuse()),
                other => {
                    return Err(ReadError::at(
                        self.start as u64,
                        format!("unknown opcode 0x{other:02x}: not a pickle, or a corrupt one"),
                    ))
                }
            }
        }
    }

    fn text_key(&mut self) -> Result<u64, ReadError> {
        let line = self.line()?;
        std::str::from_utf8(line)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                self.err(format!(
                    "memo key {:?} is not a non-negative integer",
                    String::from_utf8_lossy(line)
                ))
            })
    }

    /// Python refuses unhashable dict keys and set items; so do we (directly, not deeply).
    fn check_key(&self, key: Item) -> Result<(), ReadError> {
        match key {
            Item::Node(id) => match &self.nodes[id as usize] {
                Node::List(_)
                | Node::Dict(_)
                | Node::Set(_)
                | Node::Entry(_)
                | Node::SkippedFrames => Err(self.err(format!(
                    "unhashable {} used as a dict key or set item",
                    self.nodes[id as usize].type_name()
                ))),
                _ => Ok(()),
            },
            Item::Int(..) => Ok(()),
        }
    }

    /// Checks that `stack[mark..]` is key/value pairs with hashable keys.
    fn check_pairs(&self, mark: usize) -> Result<(), ReadError> {
        let items = &self.stack[mark..];
        if !items.len().is_multiple_of(2) {
            return Err(self.err(format!(
                "odd number of items ({}) for key/value pairs",
                items.len()
            )));
        }
        for pair in items.chunks_exact(2) {
            self.check_key(pair[0])?;
        }
        Ok(())
    }

    /// Moves `stack[mark..]` into `scratch_pairs` as key/value pairs.
    fn take_pairs(&mut self, mark: usize) -> Result<(), ReadError> {
        self.check_pairs(mark)?;
        self.scratch_pairs.clear();
        for i in (mark..self.stack.len()).step_by(2) {
            let pair = (self.keep(self.stack[i]), self.keep(self.stack[i + 1]));
            self.scratch_pairs.push(pair);
        }
        self.stack.truncate(mark);
        Ok(())
    }

    /// A list whose items were just added at the end of the pool, in one batch: when an
    /// earlier list has the same items, it points at theirs and the pool gives its copy back.
    /// PyTorch writes a fresh frame list for every trace entry, with the same few frame dicts
    /// (memo gets): the copies were 12 items (48 B) per entry on a 1M-entry file. A shared
    /// span has no spare room, so appending to either list later moves it (`Span::extend`).
    fn share_equal_items(&mut self, sp: &mut Span) {
        let (start, len) = (sp.start, sp.len);
        if len < 2 || start + len != self.items.len() || len > MAX_SHARED_LIST {
            return;
        }
        let items = &self.items[start..];
        let hash = items.iter().fold(len as u64, |h, &i| {
            (h ^ u64::from(i))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(29)
        });
        match self.lists_by_hash.get(&hash) {
            Some(&(s, n)) if n as usize == len && self.items[s as usize..][..len] == *items => {
                self.items.truncate(start);
                *sp = Span {
                    start: s as usize,
                    len,
                    cap: len,
                };
            }
            Some(_) => {}
            None => {
                // A list's items are at most the pool's length, which is < 4G ids here.
                self.lists_by_hash.insert(hash, (start as u32, len as u32));
            }
        }
    }

    /// A new sequence span holding `stack[from..]`, which leaves the stack.
    fn seq_from(&mut self, from: usize) -> Span {
        let mut sp = Span::default();
        self.store_seq(from, &mut sp);
        sp
    }

    fn list_span(&self, list: Item) -> Result<Span, ReadError> {
        match Self::container(list).map(|id| &self.nodes[id as usize]) {
            Some(Node::List(sp)) => Ok(*sp),
            _ => Err(self.type_err(list, "list")),
        }
    }

    fn dict_span(&self, dict: Item) -> Result<Span, ReadError> {
        match Self::container(dict).map(|id| &self.nodes[id as usize]) {
            Some(Node::Dict(sp)) => Ok(*sp),
            _ => Err(self.type_err(dict, "dict")),
        }
    }

    /// Writes back the span of a container that `list_span`/`dict_span`/ADDITEMS checked.
    fn set_span(&mut self, container: Item, span: Span) {
        if let Some(id) = Self::container(container) {
            match &mut self.nodes[id as usize] {
                Node::List(sp) | Node::Dict(sp) | Node::Set(sp) => *sp = span,
                _ => {}
            }
        }
    }

    fn stop(&mut self) -> Result<NodeId, ReadError> {
        if !self.marks.is_empty() {
            return Err(self.err(format!(
                "{} MARK(s) still open at STOP (corrupt pickle)",
                self.marks.len()
            )));
        }
        if self.stack.len() != 1 {
            return Err(self.err(format!(
                "the stack holds {} items at STOP, expected exactly 1",
                self.stack.len()
            )));
        }
        let trailing = &self.data[self.pos..];
        // `_memory_viz` pads with NULs before base64; anything else after STOP is suspicious.
        if let Some(p) = trailing.iter().position(|&b| b != 0) {
            return Err(ReadError::at(
                (self.pos + p) as u64,
                format!(
                    "{} bytes of trailing data after the STOP opcode at byte {} (two pickles concatenated, or a corrupt file?)",
                    trailing.len(),
                    self.start
                ),
            ));
        }
        let root = self.stack[0];
        Ok(self.keep(root))
    }
}
