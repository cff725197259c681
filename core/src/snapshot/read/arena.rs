//! What the pickle machine builds: a flat arena of nodes that refer to each other by index.
//!
//! A memo get pushes the index of an existing node, so sharing in the file is sharing here and
//! nothing is ever deep-copied. Scalars borrow from the input where the bytes are already in
//! their final form (binary opcodes); text opcodes that need decoding own their result.
//! Container items live in two shared pools (one for sequences, one for dict pairs) rather than
//! one `Vec` per container: a large snapshot has tens of thousands of small containers, and
//! allocating and freeing each was a fifth of the reader's time.

use std::borrow::Cow;

use super::super::model::TraceEntry;

pub(super) type NodeId = u32;

#[derive(Debug)]
pub(super) enum Node<'a> {
    None,
    Bool(bool),
    Int(i64),
    /// Two's-complement little-endian bytes of an integer that does not fit i64.
    BigInt(Cow<'a, [u8]>),
    Float(f64),
    Str(Cow<'a, str>),
    Bytes(Cow<'a, [u8]>),
    List(Span),
    Tuple(Span),
    Dict(Span),
    Set(Span),
    FrozenSet(Span),
    /// A trace entry dict that the machine filled straight into a [`TraceSink`]; its pairs
    /// never became nodes.
    Entry(EntryRef),
    /// A trace entry's `frames` list in a read that skips frames ([`Frames::Skip`]): its items
    /// were dropped as they came, their distinct dicts noted ([`Arena::skipped_frame_dicts`]).
    /// Met anywhere but there, it is an error, never an empty list.
    ///
    /// [`Frames::Skip`]: super::Frames::Skip
    SkippedFrames,
}

/// Where an [`Node::Entry`]'s fields went: entry `idx` of trace sink `sink`.
#[derive(Debug, Clone, Copy)]
pub(super) struct EntryRef {
    pub(super) sink: u32,
    pub(super) idx: u32,
}

/// The entries of one `device_traces[i]` list, built while parsing.
///
/// A trace entry is a dict of a few ints, and a million-entry trace made nodes for each of
/// them: the node tables were about 5 times the file. The machine recognises the dicts of a
/// `device_traces` list as it meets them and writes their usual fields (`action`, `addr`,
/// `size`, `stream`, `time_us`, `device_free`, `compile_context`, a str `user_metadata`, and
/// `frames` as the node id of its list, interned later) into a [`TraceEntry`] here. Any other
/// pair, or a usual key with an unusual value, is kept in `deferred` as node ids and goes
/// through the schema's general code with its full error messages.
#[derive(Debug, Default)]
pub(super) struct TraceSink {
    pub(super) entries: Vec<TraceEntry>,
    /// Whether entry `i` has had its `action` key.
    pub(super) has_action: Vec<bool>,
    /// `(entry index, key node, value node)`, in file order.
    pub(super) deferred: Vec<(u32, NodeId, NodeId)>,
}

/// A container's items: `pool[start..start + len]`, with room reserved up to `cap`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Span {
    pub(super) start: usize,
    pub(super) len: usize,
    pub(super) cap: usize,
}

impl Span {
    /// Appends `items` to the container, in place when its reserved room or the pool's end
    /// allows, else by moving it to the end with doubled room (amortised linear, even for
    /// containers that are appended to in turns).
    pub(super) fn extend<T: Copy + Default>(&mut self, pool: &mut Vec<T>, items: &[T]) {
        let (len, cap, m) = (self.len, self.cap, items.len());
        if cap == 0 {
            self.start = pool.len();
            pool.extend_from_slice(items);
            self.cap = m;
        } else if len + m <= cap {
            pool[self.start + len..self.start + len + m].copy_from_slice(items);
        } else if self.start + cap == pool.len() {
            pool.truncate(self.start + len);
            pool.extend_from_slice(items);
            self.cap = len + m;
        } else {
            let start = pool.len();
            let new_cap = 2 * (len + m);
            pool.extend_from_within(self.start..self.start + len);
            pool.extend_from_slice(items);
            pool.resize(start + new_cap, T::default());
            self.start = start;
            self.cap = new_cap;
        }
        self.len = len + m;
    }

    pub(super) fn of<'p, T>(&self, pool: &'p [T]) -> &'p [T] {
        &pool[self.start..self.start + self.len]
    }
}

impl Node<'_> {
    /// Python's name for the type, for messages.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Node::None => "None",
            Node::Bool(_) => "bool",
            Node::Int(_) | Node::BigInt(_) => "int",
            Node::Float(_) => "float",
            Node::Str(_) => "str",
            Node::Bytes(_) => "bytes",
            Node::List(_) => "list",
            Node::Tuple(_) => "tuple",
            Node::Dict(_) => "dict",
            Node::Set(_) => "set",
            Node::FrozenSet(_) => "frozenset",
            Node::Entry(_) => "dict",
            Node::SkippedFrames => "list (a trace entry's frames, skipped)",
        }
    }
}

pub(super) struct Arena<'a> {
    pub(super) nodes: Vec<Node<'a>>,
    /// Byte offset of the opcode that made each node, for messages (inputs are < 4 GiB).
    pub(super) at: Vec<u32>,
    /// Items of lists, tuples, sets and frozensets.
    pub(super) items: Vec<NodeId>,
    /// Key/value pairs of dicts.
    pub(super) pairs: Vec<(NodeId, NodeId)>,
    /// The object STOP returned.
    pub(super) root: NodeId,
    /// The distinct items of skipped frame lists ([`Node::SkippedFrames`]), each a dict: the
    /// schema checks them as frames, so a read that skips frames refuses what a full one does.
    pub(super) skipped_frame_dicts: Vec<NodeId>,
}

impl<'a> Arena<'a> {
    pub(super) fn node(&self, id: NodeId) -> &Node<'a> {
        &self.nodes[id as usize]
    }

    pub(super) fn offset(&self, id: NodeId) -> u64 {
        u64::from(self.at[id as usize])
    }

    /// Items of a sequence span.
    pub(super) fn items(&self, span: &Span) -> &[NodeId] {
        span.of(&self.items)
    }

    /// Pairs of a dict span.
    pub(super) fn pairs(&self, span: &Span) -> &[(NodeId, NodeId)] {
        span.of(&self.pairs)
    }
}

/// Decodes a two's-complement little-endian integer: `Int` when it fits i64, else `BigInt`.
pub(super) fn long_from_le<'a>(bytes: Cow<'a, [u8]>) -> Node<'a> {
    let n = bytes.len();
    if n == 0 {
        return Node::Int(0);
    }
    let negative = bytes[n - 1] & 0x80 != 0;
    let fill = if negative { 0xff } else { 0 };
    if n <= 8 || bytes[8..].iter().all(|&b| b == fill) && (bytes[7] & 0x80 != 0) == negative {
        let mut buf = [fill; 8];
        let k = n.min(8);
        buf[..k].copy_from_slice(&bytes[..k]);
        Node::Int(i64::from_le_bytes(buf))
    } else {
        // Minimal form (no redundant sign bytes), so equal integers have equal bytes.
        let mut keep = n;
        while keep > 9 && bytes[keep - 1] == fill && (bytes[keep - 2] & 0x80 != 0) == negative {
            keep -= 1;
        }
        Node::BigInt(match bytes {
            Cow::Borrowed(b) => Cow::Borrowed(&b[..keep]),
            Cow::Owned(mut b) => {
                b.truncate(keep);
                Cow::Owned(b)
            }
        })
    }
}
