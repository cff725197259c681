//! Arena nodes -> the typed [`Snapshot`].
//!
//! Frame dicts and frame lists are interned once per distinct node (the file's memo sharing
//! becomes [`FrameId`]/[`StackId`] sharing), frame strings are shared `Arc<str>`s, and keys the
//! model does not name are kept as [`Value`]s. Errors name the path and the types, e.g.
//! `segments[3].blocks[2].size: expected int, got str`.

use std::borrow::Cow;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use super::super::model::{
    Action, AllocatorSettings, Block, BlockState, Extra, Form, Frame, FrameId, History,
    HistoryEntry, Segment, SegmentType, Snapshot, StackId, Stacks, TraceEntry,
};
use super::super::value::Value;
use super::arena::{Arena, EntryRef, Node, NodeId, TraceSink};
use super::error::ReadError;
use super::frames::Frames;
use super::values::Values;

/// Where a node sits, for messages; built on the stack, formatted only on error.
#[derive(Clone, Copy)]
enum Path<'p> {
    Root,
    Key(&'p Path<'p>, &'p str),
    Index(&'p Path<'p>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => f.write_str("top level"),
            Path::Key(Path::Root, k) => f.write_str(k),
            Path::Key(p, k) => write!(f, "{p}.{k}"),
            Path::Index(Path::Root, i) => write!(f, "[{i}]"),
            Path::Index(p, i) => write!(f, "{p}[{i}]"),
        }
    }
}

const UNSET: u32 = u32::MAX;
/// A frame list checked by a read that skips frames ([`Builder::check_frames`]).
const CHECKED: u32 = u32::MAX - 1;
/// Strings up to this many bytes are shared by content as well as by node.
const SHARE_BY_CONTENT_MAX: usize = 96;

/// Dicts up to this many pairs are searched for repeated keys linearly, longer ones folded with
/// a map (a crafted dict of 100k unknown keys was quadratic: minutes for a 1 MB file).
const SMALL_DICT: usize = 16;

struct Builder<'r, 'a> {
    arena: &'r Arena<'a>,
    stacks: Stacks,
    /// Node id -> FrameId (frame dict nodes), StackId (frame list nodes) or an index into
    /// `string_table` (str nodes): each node kind has its own meaning, so one table serves.
    interned: Vec<u32>,
    string_table: Vec<Arc<str>>,
    strings: HashMap<&'r str, Arc<str>>,
    last_interned: Option<(&'r str, Arc<str>)>,
    values: Values,
    /// Trace entries the machine filled while parsing (see [`TraceSink`]).
    sinks: Vec<TraceSink>,
    /// Stack ids by the (start, len) of their list's items in the arena's pool.
    stack_by_span: HashMap<(usize, usize), u32>,
    /// Frame ids by content (file, line, name), for frames with no other keys: PyTorch pickles
    /// a new frame dict per stack where its frames are not memo-shared (every frame of a torch
    /// 2.0 `history`), so equal frames are one frame. By content, not by the strings' `Arc`s:
    /// long strings are shared by node only, and a file memsnap wrote shares them by content,
    /// so by pointer a converted file would read as fewer frames than its source.
    frame_by_content: HashMap<(Arc<str>, i64, Arc<str>), u32>,
    /// Stack ids by a hash of their frame ids (the stack compared before it is reused).
    stack_by_frames: HashMap<u64, u32>,
    /// Typed items (segments, blocks, trace entries) still allowed: at most one per input
    /// byte, so memo references cannot blow a small file up into a huge model.
    budget: u64,
    frames: Frames,
}

pub(super) fn build(
    arena: &Arena<'_>,
    sinks: Vec<TraceSink>,
    input_len: u64,
    frames: Frames,
) -> Result<Snapshot, ReadError> {
    let mut b = Builder {
        frames,
        sinks,
        stack_by_span: HashMap::new(),
        frame_by_content: HashMap::new(),
        stack_by_frames: HashMap::new(),
        arena,
        stacks: Stacks::new(),
        interned: vec![UNSET; arena.nodes.len()],
        string_table: Vec::new(),
        strings: HashMap::new(),
        last_interned: None,
        values: Values::default(),
        budget: input_len,
    };
    let mut snap = b.snapshot(arena.root)?;
    if frames == Frames::Skip {
        // The skipped lists' frames, checked as a full read checks them, then dropped.
        for &d in &arena.skipped_frame_dicts {
            b.check_frame(d, &Path::Key(&Path::Root, "frames"))?;
        }
        return Ok(snap);
    }
    snap.stacks = std::mem::take(&mut b.stacks);
    Ok(snap)
}

impl<'r, 'a> Builder<'r, 'a> {
    fn node(&self, id: NodeId) -> &'r Node<'a> {
        self.arena.node(id)
    }

    fn fail(&self, path: &Path, id: NodeId, message: impl std::fmt::Display) -> ReadError {
        ReadError::at(self.arena.offset(id), format!("{path}: {message}"))
    }

    fn expected(&self, path: &Path, id: NodeId, what: &str) -> ReadError {
        self.fail(
            path,
            id,
            format!("expected {what}, got {}", self.node(id).type_name()),
        )
    }

    fn missing(&self, path: &Path, id: NodeId, key: &str) -> ReadError {
        self.fail(path, id, format!("missing key '{key}'"))
    }

    fn spend(&mut self, path: &Path, id: NodeId, n: usize) -> Result<(), ReadError> {
        match self.budget.checked_sub(n as u64) {
            Some(rest) => {
                self.budget = rest;
                Ok(())
            }
            None => Err(self.fail(
                path,
                id,
                "the data expands to more segments, blocks, history entries and trace entries than the file has bytes (shared by memo references: a pickle bomb?)",
            )),
        }
    }

    fn int(&self, id: NodeId, path: &Path) -> Result<i64, ReadError> {
        match self.node(id) {
            Node::Int(i) => Ok(*i),
            Node::BigInt(_) => Err(self.fail(path, id, "int does not fit in 64 bits")),
            _ => Err(self.expected(path, id, "int")),
        }
    }

    fn uint(&self, id: NodeId, path: &Path) -> Result<u64, ReadError> {
        match self.node(id) {
            Node::Int(i) if *i >= 0 => Ok(*i as u64),
            Node::Int(i) => {
                Err(self.fail(path, id, format!("expected a non-negative int, got {i}")))
            }
            Node::BigInt(b) => {
                let negative = b.last().is_some_and(|x| x & 0x80 != 0);
                if !negative && b.len() >= 8 && b[8..].iter().all(|&x| x == 0) {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&b[..8]);
                    Ok(u64::from_le_bytes(a))
                } else if negative {
                    Err(self.fail(
                        path,
                        id,
                        "expected a non-negative int, got a large negative one",
                    ))
                } else {
                    Err(self.fail(path, id, "int does not fit in 64 bits"))
                }
            }
            _ => Err(self.expected(path, id, "int")),
        }
    }

    fn boolean(&self, id: NodeId, path: &Path) -> Result<bool, ReadError> {
        match self.node(id) {
            Node::Bool(b) => Ok(*b),
            _ => Err(self.expected(path, id, "bool")),
        }
    }

    fn str_ref(&self, id: NodeId, path: &Path) -> Result<&'r str, ReadError> {
        match self.node(id) {
            Node::Str(s) => Ok(s),
            _ => Err(self.expected(path, id, "str")),
        }
    }

    fn intern(&mut self, s: &'r str) -> Arc<str> {
        // Unmemoized strings repeat entry after entry (`compile_context` of every trace
        // entry): the last one interned is checked before hashing.
        if let Some((last, arc)) = &self.last_interned {
            if *last == s {
                return arc.clone();
            }
        }
        let arc = self
            .strings
            .entry(s)
            .or_insert_with(|| Arc::from(s))
            .clone();
        self.last_interned = Some((s, arc.clone()));
        arc
    }

    /// A string node as a shared `Arc<str>`: once per node (memo references repeat a node), and
    /// equal short contents share one `Arc` too.
    fn string(&mut self, id: NodeId, path: &Path) -> Result<Arc<str>, ReadError> {
        let known = self.interned[id as usize];
        if known != UNSET {
            return Ok(self.string_table[known as usize].clone());
        }
        let s = self.str_ref(id, path)?;
        // Long strings (C++ symbol names) are rarely repeated without a memo reference, and
        // hashing them dominated reading files full of them: share those by node only.
        let arc = if s.len() <= SHARE_BY_CONTENT_MAX {
            self.intern(s)
        } else {
            Arc::from(s)
        };
        self.interned[id as usize] = self.string_table.len() as u32;
        self.string_table.push(arc.clone());
        Ok(arc)
    }

    fn list(&self, id: NodeId, path: &Path) -> Result<&'r [NodeId], ReadError> {
        match self.node(id) {
            Node::List(sp) => Ok(self.arena.items(sp)),
            _ => Err(self.expected(path, id, "list")),
        }
    }

    /// A dict's pairs. Longer than [`SMALL_DICT`], its repeated str keys are folded here
    /// (first position, last value, as Python), so that [`Self::extra`] need not search.
    fn dict(&self, id: NodeId, path: &Path) -> Result<Cow<'r, [(NodeId, NodeId)]>, ReadError> {
        match self.node(id) {
            Node::Dict(sp) => {
                let pairs = self.arena.pairs(sp);
                if pairs.len() <= SMALL_DICT {
                    Ok(Cow::Borrowed(pairs))
                } else {
                    Ok(self.fold_repeated_keys(pairs))
                }
            }
            Node::Entry(_) => Err(shared_entry(self.arena, path, id)),
            _ => Err(self.expected(path, id, "dict")),
        }
    }

    fn fold_repeated_keys(&self, pairs: &'r [(NodeId, NodeId)]) -> Cow<'r, [(NodeId, NodeId)]> {
        let mut first: HashMap<&'r str, usize> = HashMap::with_capacity(pairs.len());
        // Stays empty until the first repeat; then holds the folded pairs so far.
        let mut out: Vec<(NodeId, NodeId)> = Vec::new();
        // Index in `out` of each first occurrence (once `out` is in use).
        let mut slot: HashMap<usize, usize> = HashMap::new();
        for (i, &(k, v)) in pairs.iter().enumerate() {
            // Non-str keys stay: `key` refuses them with a message.
            let repeat_of = match self.node(k) {
                Node::Str(key) => match first.get(&**key) {
                    Some(&at) => Some(at),
                    None => {
                        first.insert(key, i);
                        None
                    }
                },
                _ => None,
            };
            match repeat_of {
                Some(at) => {
                    if out.is_empty() {
                        out.extend_from_slice(&pairs[..i]);
                    }
                    let j = slot.get(&at).copied().unwrap_or(at);
                    out[j].1 = v;
                }
                None if !out.is_empty() => {
                    slot.insert(i, out.len());
                    out.push((k, v));
                }
                None => {}
            }
        }
        if out.is_empty() {
            Cow::Borrowed(pairs)
        } else {
            Cow::Owned(out)
        }
    }

    #[inline]
    fn key(&self, id: NodeId, path: &Path) -> Result<&'r str, ReadError> {
        match self.node(id) {
            Node::Str(s) => Ok(s),
            other => Err(self.fail(
                path,
                id,
                format!("dict key is of type {}, expected str", other.type_name()),
            )),
        }
    }

    fn value(&mut self, id: NodeId) -> Result<Value, ReadError> {
        self.values.value(self.arena, id, 0)
    }

    /// An unknown key: kept in file order; a repeated key replaces the earlier value (as a
    /// Python dict does).
    fn extra(&mut self, extra: &mut Extra, key: &'r str, id: NodeId) -> Result<(), ReadError> {
        let v = self.value(id)?;
        // Past SMALL_DICT entries the dict was folded by `dict`: no repeat to look for.
        let repeat = if extra.len() < SMALL_DICT {
            extra.iter_mut().find(|(k, _)| **k == *key)
        } else {
            None
        };
        if let Some(slot) = repeat {
            slot.1 = v;
        } else {
            let k = self.intern(key);
            extra.push((k, v));
        }
        Ok(())
    }

    fn snapshot(&mut self, root: NodeId) -> Result<Snapshot, ReadError> {
        let mut snap = Snapshot::default();
        let path = Path::Root;
        match self.node(root) {
            Node::List(_) => {
                snap.form = Form::SegmentList;
                snap.segments = self.segments(root, &path).map_err(|mut e| {
                    e.message = format!(
                        "top level is a list, read as a list of segments: {}",
                        e.message
                    );
                    e
                })?;
                return Ok(snap);
            }
            Node::Dict(_) => {}
            _ => return Err(self.expected(&path, root, "a snapshot dict (or a list of segments)")),
        }
        let mut segments = None;
        for &(k, v) in self.dict(root, &path)?.iter() {
            let key = self.key(k, &path)?;
            let p = Path::Key(&path, key);
            match key {
                "segments" => segments = Some(self.segments(v, &p)?),
                "device_traces" => {
                    let mut traces = Vec::new();
                    for (i, &t) in self.list(v, &p)?.iter().enumerate() {
                        traces.push(self.trace(t, &Path::Index(&p, i))?);
                    }
                    snap.device_traces = Some(traces);
                }
                "allocator_settings" => {
                    let mut entries: Vec<(Arc<str>, Value)> = Vec::new();
                    for &(sk, sv) in self.dict(v, &p)?.iter() {
                        let name = self.key(sk, &p)?;
                        self.extra(&mut entries, name, sv)?;
                    }
                    snap.allocator_settings = Some(AllocatorSettings { entries });
                }
                "external_annotations" => snap.external_annotations = Some(self.value(v)?),
                "host_segments" => snap.host_segments = Some(self.segments(v, &p)?),
                // One list of entries: the host allocator is one allocator (PyTorch #182407,
                // `CachingHostAllocatorImpl::getTraces()`), not one per device.
                "host_traces" => {
                    if let Some(&first) = self.list(v, &p)?.first() {
                        if matches!(self.node(first), Node::List(_)) {
                            return Err(self.fail(
                                &Path::Index(&p, 0),
                                first,
                                "a list inside host_traces: host_traces is one list of trace entries (the host allocator keeps one trace), not one list per device",
                            ));
                        }
                    }
                    snap.host_traces = Some(self.trace(v, &p)?);
                }
                _ => {
                    let mut extra = std::mem::take(&mut snap.extra);
                    self.extra(&mut extra, key, v)?;
                    snap.extra = extra;
                }
            }
        }
        snap.segments = segments.ok_or_else(|| self.missing(&path, root, "segments"))?;
        Ok(snap)
    }

    fn segments(&mut self, id: NodeId, path: &Path) -> Result<Vec<Segment>, ReadError> {
        let items = self.list(id, path)?;
        self.spend(path, id, items.len())?;
        let mut out = Vec::with_capacity(items.len());
        for (i, &s) in items.iter().enumerate() {
            out.push(self.segment(s, &Path::Index(path, i))?);
        }
        Ok(out)
    }

    fn segment(&mut self, id: NodeId, path: &Path) -> Result<Segment, ReadError> {
        let mut s = Segment::default();
        let (mut address, mut total, mut blocks) = (None, None, None);
        for &(k, v) in self.dict(id, path)?.iter() {
            let key = self.key(k, path)?;
            let p = Path::Key(path, key);
            match key {
                "device" => s.device = Some(self.int(v, &p)?),
                "address" => address = Some(self.uint(v, &p)?),
                "total_size" => total = Some(self.uint(v, &p)?),
                "allocated_size" => s.allocated_size = Some(self.uint(v, &p)?),
                "active_size" => s.active_size = Some(self.uint(v, &p)?),
                "requested_size" => s.requested_size = Some(self.uint(v, &p)?),
                "stream" => s.stream = Some(self.int(v, &p)?),
                "segment_type" if matches!(self.node(v), Node::Str(t) if t == "small" || t == "large") =>
                {
                    let large = matches!(self.node(v), Node::Str(t) if t == "large");
                    s.segment_type = Some(if large {
                        SegmentType::Large
                    } else {
                        SegmentType::Small
                    });
                }
                "segment_pool_id" => s.segment_pool_id = Some(self.pool_id(v, &p)?),
                "is_expandable" => s.is_expandable = Some(self.boolean(v, &p)?),
                "frames" => s.frames = self.frames(v, &p)?,
                "blocks" => {
                    let items = self.list(v, &p)?;
                    self.spend(&p, v, items.len())?;
                    let mut out = Vec::with_capacity(items.len());
                    for (i, &b) in items.iter().enumerate() {
                        out.push(self.block(b, &Path::Index(&p, i))?);
                    }
                    blocks = Some(out);
                }
                // Includes a segment_type other than small/large: kept as data, not refused.
                _ => self.extra(&mut s.extra, key, v)?,
            }
        }
        s.address = address.ok_or_else(|| self.missing(path, id, "address"))?;
        s.total_size = total.ok_or_else(|| self.missing(path, id, "total_size"))?;
        s.blocks = blocks.ok_or_else(|| self.missing(path, id, "blocks"))?;
        Ok(s)
    }

    fn pool_id(&self, id: NodeId, path: &Path) -> Result<(i64, i64), ReadError> {
        // A list too: JSON snapshots (json.dump writes tuples as lists).
        let tuple = match self.node(id) {
            Node::Tuple(sp) | Node::List(sp) => Some(self.arena.items(sp)),
            _ => None,
        };
        match tuple {
            Some(items) if items.len() == 2 => Ok((
                self.int(items[0], &Path::Index(path, 0))?,
                self.int(items[1], &Path::Index(path, 1))?,
            )),
            Some(items) => Err(self.fail(
                path,
                id,
                format!("expected a tuple of 2 ints, got a tuple of {}", items.len()),
            )),
            _ => Err(self.expected(path, id, "a tuple of 2 ints")),
        }
    }

    fn block(&mut self, id: NodeId, path: &Path) -> Result<Block, ReadError> {
        let (mut size, mut state) = (None, None);
        let mut b = Block {
            address: None,
            size: 0,
            requested_size: None,
            state: BlockState::Inactive,
            frames: None,
            history: None,
            extra: Vec::new(),
        };
        for &(k, v) in self.dict(id, path)?.iter() {
            let key = self.key(k, path)?;
            let p = Path::Key(path, key);
            match key {
                "address" => b.address = Some(self.uint(v, &p)?),
                "size" => size = Some(self.uint(v, &p)?),
                "requested_size" => b.requested_size = Some(self.uint(v, &p)?),
                "state" => {
                    state = Some(match self.str_ref(v, &p)? {
                        "active_allocated" => BlockState::ActiveAllocated,
                        "active_pending_free" | "active_awaiting_free" => {
                            BlockState::ActivePendingFree
                        }
                        "inactive" => BlockState::Inactive,
                        other => {
                            return Err(self.fail(
                                &p,
                                v,
                                format!("unknown block state '{other}' (expected active_allocated, active_pending_free or inactive)"),
                            ))
                        }
                    })
                }
                "frames" => b.frames = self.frames(v, &p)?,
                "history" => b.history = Some(self.history(v, &p)?),
                _ => self.extra(&mut b.extra, key, v)?,
            }
        }
        b.size = size.ok_or_else(|| self.missing(path, id, "size"))?;
        b.state = state.ok_or_else(|| self.missing(path, id, "state"))?;
        // torch <= 2.0 gives a live block's stack only in its history: the last entry is the
        // allocation that holds it, so every view that reads `frames` shows it.
        if b.frames.is_none() && b.state.is_active() {
            b.frames = b.history_entries().last().and_then(|e| e.frames);
        }
        Ok(b)
    }

    /// A legacy `history`: typed when it has torch's shape, else kept as generic data (as are
    /// the keys of an entry the model does not name).
    fn history(&mut self, id: NodeId, path: &Path) -> Result<History, ReadError> {
        // Typed entries count against the budget as blocks do: a list of one dict repeated
        // by memo references is two bytes an entry in the file.
        if let Node::List(s) | Node::Tuple(s) = self.node(id) {
            let n = s.len;
            self.spend(path, id, n)?;
        }
        match self.history_entries(id, path) {
            Some(entries) => Ok(History::Entries(entries)),
            None => Ok(History::Other(self.value(id)?)),
        }
    }

    /// `None` where the history is not a list of dicts with int `addr` and `real_size` and a
    /// frame list `frames`, each optional.
    fn history_entries(&mut self, id: NodeId, path: &Path) -> Option<Vec<HistoryEntry>> {
        let items = match self.node(id) {
            Node::List(s) | Node::Tuple(s) => self.arena.items(s),
            _ => return None,
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, &item) in items.iter().enumerate() {
            let p = Path::Index(path, i);
            let mut e = HistoryEntry {
                addr: None,
                real_size: None,
                frames: None,
                extra: Vec::new(),
            };
            for &(k, v) in self.dict(item, &p).ok()?.iter() {
                let key = self.key(k, &p).ok()?;
                let p = Path::Key(&p, key);
                match key {
                    "addr" => e.addr = Some(self.uint(v, &p).ok()?),
                    "real_size" => e.real_size = Some(self.uint(v, &p).ok()?),
                    "frames" => e.frames = self.frames(v, &p).ok()?,
                    _ => self.extra(&mut e.extra, key, v).ok()?,
                }
            }
            out.push(e);
        }
        Some(out)
    }

    fn trace(&mut self, id: NodeId, path: &Path) -> Result<Vec<TraceEntry>, ReadError> {
        let items = self.list(id, path)?;
        self.spend(path, id, items.len())?;
        if let Some(sink) = self.whole_sink(items) {
            // The usual case: the list holds its sink's entries, in order; they move. The
            // stable sort keeps each entry's leftover pairs in file order.
            let mut out = std::mem::take(&mut self.sinks[sink].entries);
            out.shrink_to_fit();
            let mut deferred = std::mem::take(&mut self.sinks[sink].deferred);
            deferred.sort_by_key(|x| x.0);
            let mut d = 0;
            for (i, e) in out.iter_mut().enumerate() {
                let p = Path::Index(path, i);
                let end = deferred[d..]
                    .iter()
                    .position(|x| x.0 as usize != i)
                    .map_or(deferred.len(), |n| d + n);
                self.finish_entry(e, items[i], &deferred[d..end], &p)?;
                d = end;
            }
            return Ok(out);
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, &e) in items.iter().enumerate() {
            let p = Path::Index(path, i);
            out.push(match self.node(e) {
                Node::Entry(r) => self.copied_entry(*r, e, &p)?,
                _ => self.entry(e, &p)?,
            });
        }
        Ok(out)
    }

    /// The sink whose entries `items` are, all of them in order, if so.
    fn whole_sink(&self, items: &[NodeId]) -> Option<usize> {
        let Some(&Node::Entry(first)) = items.first().map(|&i| self.node(i)) else {
            return None;
        };
        let sink = self.sinks.get(first.sink as usize)?;
        let whole = sink.entries.len() == items.len()
            && items.iter().enumerate().all(
                |(i, &id)| matches!(self.node(id), Node::Entry(r) if r.sink == first.sink && r.idx as usize == i),
            );
        whole.then_some(first.sink as usize)
    }

    /// An entry node met out of its sink's order (a memo reference, or an odd file): a copy.
    fn copied_entry(
        &mut self,
        r: EntryRef,
        id: NodeId,
        path: &Path,
    ) -> Result<TraceEntry, ReadError> {
        let sink = &mut self.sinks[r.sink as usize];
        let Some(e) = sink.entries.get(r.idx as usize) else {
            return Err(shared_entry(self.arena, path, id));
        };
        let mut e = e.clone();
        // File order within the entry (the sort is stable).
        let deferred: Vec<(u32, NodeId, NodeId)> = (sink.deferred.iter())
            .filter(|x| x.0 == r.idx)
            .copied()
            .collect();
        self.finish_entry(&mut e, id, &deferred, path)?;
        Ok(e)
    }

    /// Completes an entry the machine filled: interns its frame list (held as a node id until
    /// now), applies the pairs it left, and checks that `action` was there.
    fn finish_entry(
        &mut self,
        e: &mut TraceEntry,
        id: NodeId,
        deferred: &[(u32, NodeId, NodeId)],
        path: &Path,
    ) -> Result<(), ReadError> {
        let Node::Entry(r) = *self.node(id) else {
            return Err(self.expected(path, id, "dict"));
        };
        if let Some(StackId(list)) = e.frames() {
            e.set_frames(self.frames(list, &Path::Key(path, "frames"))?);
        }
        let mut action = self.sinks[r.sink as usize].has_action[r.idx as usize].then_some(());
        for &(_, k, v) in deferred {
            let key = self.key(k, path)?;
            if self.entry_field(e, key, v, path)? {
                action = Some(());
            }
        }
        action.ok_or_else(|| self.missing(path, id, "action"))?;
        Ok(())
    }

    /// One key of a trace entry dict into `e`; true when it was `action`.
    fn entry_field(
        &mut self,
        e: &mut TraceEntry,
        key: &'r str,
        v: NodeId,
        path: &Path,
    ) -> Result<bool, ReadError> {
        let p = Path::Key(path, key);
        match key {
            "action" => {
                e.set_action(Action::parse(self.str_ref(v, &p)?));
                return Ok(true);
            }
            "addr" => e.set_addr(Some(self.uint(v, &p)?)),
            "size" => e.set_size(Some(self.uint(v, &p)?)),
            "stream" => e.set_stream(Some(self.int(v, &p)?)),
            "time_us" => e.set_time_us(Some(self.int(v, &p)?)),
            "frames" => e.set_frames(self.frames(v, &p)?),
            "device_free" => e.set_device_free(Some(self.uint(v, &p)?)),
            "compile_context" => e.set_compile_context(Some(self.string(v, &p)?)),
            "user_metadata" => e.set_user_metadata(Some(self.value(v)?)),
            _ => {
                // Unknown keys are rare: such an entry gets a rarer part of its own.
                let mut extra = std::mem::take(e.extra_mut());
                self.extra(&mut extra, key, v)?;
                *e.extra_mut() = extra;
            }
        }
        Ok(false)
    }

    fn entry(&mut self, id: NodeId, path: &Path) -> Result<TraceEntry, ReadError> {
        let mut action = None;
        let mut e = TraceEntry::with_action(Action::Alloc);
        for &(k, v) in self.dict(id, path)?.iter() {
            let key = self.key(k, path)?;
            if self.entry_field(&mut e, key, v, path)? {
                action = Some(());
            }
        }
        action.ok_or_else(|| self.missing(path, id, "action"))?;
        Ok(e)
    }

    /// Where a list's items are in the pool (equal spans are equal lists).
    fn span_key(&self, id: NodeId) -> (usize, usize) {
        match self.node(id) {
            Node::List(sp) => (sp.start, sp.len),
            _ => (usize::MAX, 0),
        }
    }

    /// A `frames` value: its stack, or `None` when this read skips frames (checked all the
    /// same, so that the read refuses what a full read does).
    fn frames(&mut self, id: NodeId, path: &Path) -> Result<Option<StackId>, ReadError> {
        match self.frames {
            Frames::Keep => self.stack(id, path).map(Some),
            Frames::Skip => self.check_frames(id, path).map(|()| None),
        }
    }

    /// What [`Self::stack`] checks of a frame list, without making the stack. A skipped list's
    /// items were checked as dicts by the machine, and are checked as frames at the end.
    fn check_frames(&mut self, id: NodeId, path: &Path) -> Result<(), ReadError> {
        if matches!(self.node(id), Node::SkippedFrames) {
            return Ok(());
        }
        let items = self.list(id, path)?;
        if self.interned[id as usize] == CHECKED {
            return Ok(());
        }
        for (i, &f) in items.iter().enumerate() {
            self.check_frame(f, &Path::Index(path, i))?;
        }
        self.interned[id as usize] = CHECKED;
        Ok(())
    }

    /// What [`Self::frame`] checks of a frame dict, without interning it or its strings.
    fn check_frame(&mut self, id: NodeId, path: &Path) -> Result<(), ReadError> {
        if matches!(self.node(id), Node::Dict(_)) && self.interned[id as usize] == CHECKED {
            return Ok(());
        }
        let pairs = self.dict(id, path)?;
        let (mut filename, mut line, mut name) = (false, false, false);
        for &(k, v) in pairs.iter() {
            let key = self.key(k, path)?;
            let p = Path::Key(path, key);
            match key {
                "filename" => filename = self.str_ref(v, &p).map(|_| true)?,
                "line" => line = self.int(v, &p).map(|_| true)?,
                "name" => name = self.str_ref(v, &p).map(|_| true)?,
                _ => drop(self.value(v)?),
            }
        }
        for (present, key) in [(filename, "filename"), (line, "line"), (name, "name")] {
            if !present {
                return Err(self.missing(path, id, key));
            }
        }
        self.interned[id as usize] = CHECKED;
        Ok(())
    }

    /// A frame list, interned once per distinct list node.
    fn stack(&mut self, id: NodeId, path: &Path) -> Result<StackId, ReadError> {
        // Type first: `interned` holds frame ids for dict nodes too, and a crafted file can
        // reference a frame dict where a frame list belongs.
        let items = self.list(id, path)?;
        let known = self.interned[id as usize];
        if known != UNSET {
            return Ok(StackId(known));
        }
        // PyTorch writes a fresh frame list for each trace entry (memo-shared only between an
        // alloc and its free). The machine made lists of equal items share one span of the
        // item pool, so the span is the stack: one stack each, not ~1M copies.
        let span = self.span_key(id);
        if let Some(&sid) = self.stack_by_span.get(&span) {
            self.interned[id as usize] = sid;
            return Ok(StackId(sid));
        }
        let mut frames = Vec::with_capacity(items.len());
        for (i, &f) in items.iter().enumerate() {
            // A frame seen before (the usual case) without the call into `frame`.
            let seen = match self.node(f) {
                Node::Dict(_) => self.interned[f as usize],
                _ => UNSET,
            };
            frames.push(if seen != UNSET {
                FrameId(seen)
            } else {
                self.frame(f, &Path::Index(path, i))?
            });
        }
        let sid = self.stack_of(frames);
        self.stack_by_span.insert(span, sid.0);
        self.interned[id as usize] = sid.0;
        Ok(sid)
    }

    /// A frame dict, interned once per distinct dict node.
    fn frame(&mut self, id: NodeId, path: &Path) -> Result<FrameId, ReadError> {
        // Type first, as in `stack`: a frame list's node holds a stack id, not a frame id.
        // A frame is referenced from many stacks, so the seen case checks only the type (not
        // `dict`, which also looks at the pairs: it was a sixth of reading cs336-c).
        if matches!(self.node(id), Node::Dict(_)) {
            let known = self.interned[id as usize];
            if known != UNSET {
                return Ok(FrameId(known));
            }
        }
        let pairs = self.dict(id, path)?;
        let (mut filename, mut line, mut name) = (None, None, None);
        let mut extra = Vec::new();
        for &(k, v) in pairs.iter() {
            let key = self.key(k, path)?;
            let p = Path::Key(path, key);
            match key {
                "filename" => filename = Some(self.string(v, &p)?),
                "line" => line = Some(self.int(v, &p)?),
                "name" => name = Some(self.string(v, &p)?),
                _ => self.extra(&mut extra, key, v)?,
            }
        }
        let frame = Frame {
            filename: filename.ok_or_else(|| self.missing(path, id, "filename"))?,
            line: line.ok_or_else(|| self.missing(path, id, "line"))?,
            name: name.ok_or_else(|| self.missing(path, id, "name"))?,
            extra,
        };
        let fid = if frame.extra.is_empty() {
            let key = (frame.filename.clone(), frame.line, frame.name.clone());
            match self.frame_by_content.get(&key) {
                Some(&f) => FrameId(f),
                None => {
                    let f = self.stacks.push_frame(frame);
                    self.frame_by_content.insert(key, f.0);
                    f
                }
            }
        } else {
            self.stacks.push_frame(frame)
        };
        self.interned[id as usize] = fid.0;
        Ok(fid)
    }

    /// The stack of these frames: an equal one already made, or a new one. Lists of equal
    /// frame dicts that the machine could not share (their dicts were not memo-shared) are one
    /// stack once their frames are one frame each.
    fn stack_of(&mut self, frames: Vec<FrameId>) -> StackId {
        use std::hash::BuildHasher;
        let hash = foldhash::fast::FixedState::with_seed(0).hash_one(&frames);
        if let Some(&sid) = self.stack_by_frames.get(&hash) {
            if self.stacks.stack(StackId(sid)) == &frames[..] {
                return StackId(sid);
            }
            // A hash collision: the other stack keeps the slot.
            return self.stacks.push_stack(frames.into_boxed_slice());
        }
        let sid = self.stacks.push_stack(frames.into_boxed_slice());
        self.stack_by_frames.insert(hash, sid.0);
        sid
    }
}

/// An entry of `device_traces` is referenced again elsewhere, or twice (by a memo reference).
fn shared_entry(arena: &Arena<'_>, path: &Path, id: NodeId) -> ReadError {
    ReadError::at(
        arena.offset(id),
        format!("{path}: this dict is a trace entry of device_traces, referenced a second time (memo reference); memsnap reads each trace entry once"),
    )
}
