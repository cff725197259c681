//! Trace entries written straight into [`TraceSink`]s while the pickle runs.
//!
//! PyTorch pickles `device_traces` as the top-level dict's value: a list of per-device lists
//! of small dicts. The machine spots that shape on the stack as the lists are opened (the root
//! dict at the bottom, the key `device_traces` just below the new list; then lists opened to
//! be added to that list), and every dict opened to be added to a trace list becomes a
//! [`Node::Entry`] whose usual fields are written into a [`TraceEntry`] when SETITEM(S) fills
//! it. "To be added to" covers both ways a pickler adds items: under a MARK above the
//! container (APPENDS, SETITEMS), or directly above it (APPEND, SETITEM; CPython uses these
//! for a container of one item). A file of any other shape takes the general path (nodes),
//! with the same result.

use std::sync::Arc;

use super::super::error::ReadError;
use super::super::frames::Frames;
use super::field::Field;
use super::machine::{Item, Machine};
use crate::snapshot::model::{Action, EntryRest, StackId, TraceEntry};
use crate::snapshot::read::arena::{EntryRef, Node, NodeId, TraceSink};
use crate::snapshot::value::Value;

/// Smallest pickle of a trace entry with its required `action` key (EMPTY_DICT, a memo get of
/// the key and of the value, SETITEM): a file cannot hold more entries than its length over
/// this, and refusing past that keeps a file of bare EMPTY_DICTs from asking for gigabytes.
const MIN_ENTRY_BYTES: usize = 6;

impl Machine<'_> {
    /// After EMPTY_LIST pushed a list: notes it if it is `device_traces` or one of its lists.
    pub(super) fn note_trace_list(&mut self) {
        let n = self.stack.len();
        let Some(&Item::Node(list)) = self.stack.last() else {
            return;
        };
        match self.traces_outer {
            None => {
                // [root dict, MARK, key, value, ..., "device_traces", <list>], or without
                // the MARK when the dict has one key.
                let value_at_root = match self.marks[..] {
                    [1] => n >= 3 && n % 2 == 1,
                    [] => n == 3,
                    _ => false,
                };
                if value_at_root
                    && matches!(self.stack[0], Item::Node(r) if matches!(self.nodes[r as usize], Node::Dict(_)))
                    && matches!(self.stack[n - 2], Item::Node(k) if matches!(&self.nodes[k as usize], Node::Str(s) if s == "device_traces"))
                {
                    self.traces_outer = Some(list);
                }
            }
            Some(outer) => {
                if self.parents(n - 1).contains(&Some(outer)) {
                    // The traces before this one are complete: give back their unused room.
                    for t in &mut self.traces {
                        t.entries.shrink_to_fit();
                        t.has_action.shrink_to_fit();
                    }
                    self.trace_lists.push((list, self.traces.len() as u32));
                    self.traces.push(TraceSink::default());
                }
            }
        }
    }

    /// The containers an item at stack position `pos` may be added to: the one below the top
    /// MARK (APPENDS, SETITEMS), and the one right below `pos` when no MARK is between them
    /// (APPEND, SETITEM).
    fn parents(&self, pos: usize) -> [Option<NodeId>; 2] {
        let node = |i: usize| match self.stack.get(i) {
            Some(Item::Node(id)) => Some(*id),
            _ => None,
        };
        let m = self.marks.last().copied();
        let under_mark = m.and_then(|m| m.checked_sub(1)).and_then(node);
        let right_below = match (m, pos.checked_sub(1)) {
            (Some(m), Some(b)) if b >= m => node(b),
            (None, Some(b)) => node(b),
            _ => None,
        };
        [under_mark, right_below]
    }

    /// At EMPTY_LIST, in a read that skips frames: whether the list opened follows a `frames`
    /// key that is being added to a trace entry (SETITEMS or SETITEM). A list so opened that is
    /// not that key's value (a crafted file) is refused later, and the full read runs.
    #[inline]
    pub(super) fn opens_skipped_frames(&self) -> bool {
        if self.frames == Frames::Keep || self.trace_lists.is_empty() {
            return false;
        }
        let Some(&Item::Node(key)) = self.stack.last() else {
            return false;
        };
        matches!(&self.nodes[key as usize], Node::Str(s) if s == "frames")
            && self
                .parents(self.stack.len() - 1)
                .iter()
                .flatten()
                .any(|&c| self.entry_of(Item::Node(c)).is_some())
    }

    /// Whether an APPEND(S) target is a skipped frame list (its items are dropped).
    #[inline]
    pub(super) fn is_skipped(&self, target: Item) -> bool {
        matches!(target, Item::Node(id) if matches!(self.nodes[id as usize], Node::SkippedFrames))
    }

    /// Items added to a skipped frame list: each must be a dict (as a full read's frame list
    /// items must), noted once for the schema to check as a frame.
    pub(super) fn note_skipped_frames(&mut self, items: &[Item]) -> Result<(), ReadError> {
        for &item in items {
            // Noted already (so a dict): the usual case, a frame met in an earlier list.
            if let Item::Node(id) = item {
                if self.noted_frame_dict.get(id as usize) == Some(&true) {
                    continue;
                }
            }
            let id = match item {
                Item::Node(id) if matches!(self.nodes[id as usize], Node::Dict(_)) => id,
                _ => {
                    return Err(self.err(format!(
                        "a frame list holds a {}, not a frame dict",
                        self.item_type(item)
                    )))
                }
            };
            if id as usize >= self.noted_frame_dict.len() {
                self.noted_frame_dict.resize(self.nodes.len(), false);
            }
            self.noted_frame_dict[id as usize] = true;
        }
        Ok(())
    }

    /// At EMPTY_DICT: the sink when the dict is opened under a trace list's MARK.
    #[inline]
    pub(super) fn entry_sink(&self) -> Option<u32> {
        if self.trace_lists.is_empty() {
            return None;
        }
        let parents = self.parents(self.stack.len());
        self.trace_lists
            .iter()
            .find(|(l, _)| parents.contains(&Some(*l)))
            .map(|&(_, sink)| sink)
    }

    /// Pushes a new entry node writing into `sink`.
    pub(super) fn new_entry(&mut self, sink: u32) -> Result<(), ReadError> {
        self.entry_count += 1;
        if self.entry_count > self.total / MIN_ENTRY_BYTES {
            return Err(self.err(format!(
                "more trace entry dicts than a {}-byte pickle can hold (at most one per {MIN_ENTRY_BYTES} bytes): corrupt or hostile file",
                self.total
            )));
        }
        let t = &mut self.traces[sink as usize];
        let idx = t.entries.len() as u32;
        t.entries.push(blank_entry());
        t.has_action.push(false);
        self.push_node(Node::Entry(EntryRef { sink, idx }));
        Ok(())
    }

    /// The entry a SETITEM(S) target is, if it is one.
    #[inline]
    pub(super) fn entry_of(&self, target: Item) -> Option<EntryRef> {
        match target {
            Item::Node(id) => match self.nodes[id as usize] {
                Node::Entry(r) => Some(r),
                _ => None,
            },
            Item::Int(..) => None,
        }
    }

    /// Writes checked key/value pairs into the entry; what is not a usual field with a usual
    /// value is kept (as nodes) for the schema.
    pub(super) fn fill_entry(&mut self, r: EntryRef, pairs: &[Item]) {
        let mut rest = Rest::default();
        for (n, pair) in pairs.chunks_exact(2).enumerate() {
            if !self.fill_field(r, n, pair[0], pair[1], &mut rest) {
                let (k, v) = (self.keep(pair[0]), self.keep(pair[1]));
                self.traces[r.sink as usize].deferred.push((r.idx, k, v));
            }
        }
        if rest.context.is_some() || rest.metadata.is_some() || rest.device_free.is_some() {
            let e = &mut self.traces[r.sink as usize].entries[r.idx as usize];
            // The usual case, without building anything: the same strs as the last entry.
            if let Some(last) = &self.rest_cache {
                if e.rest().is_none() && rest.is_exactly(last) {
                    e.set_rest(Some(last.clone()));
                    return;
                }
            }
            let mut candidate = e.rest().map_or_else(EntryRest::default, |r| (**r).clone());
            if rest.context.is_some() {
                candidate.compile_context = rest.context;
            }
            if rest.metadata.is_some() {
                candidate.user_metadata = rest.metadata.map(Value::Str);
            }
            if rest.device_free.is_some() {
                candidate.device_free = rest.device_free;
            }
            // Entries in a row usually have the same rarer part: one Arc for all of them.
            let shared = match &self.rest_cache {
                Some(last) if **last == candidate => last.clone(),
                _ => {
                    let new = Arc::new(candidate);
                    self.rest_cache = Some(new.clone());
                    new
                }
            };
            e.set_rest(Some(shared));
        }
    }

    /// True when the pair went into the entry (or into `rest`, for the rarer fields).
    #[inline]
    fn fill_field(
        &mut self,
        r: EntryRef,
        n: usize,
        key: Item,
        value: Item,
        rest: &mut Rest,
    ) -> bool {
        let Item::Node(k) = key else { return false };
        // Every entry repeats the same memoized key nodes in the same order: the field of the
        // key node seen at this position last time saves comparing strings.
        let field = match self.key_fields.get(n) {
            Some(&(node, f)) if node == k => f,
            _ => {
                let Node::Str(name) = &self.nodes[k as usize] else {
                    return false;
                };
                let f = Field::of(name);
                if let Some(slot) = self.key_fields.get_mut(n) {
                    *slot = (k, f);
                }
                f
            }
        };
        let int = match value {
            Item::Int(v, _) => Some(v),
            Item::Node(v) => match self.nodes[v as usize] {
                Node::Int(i) => Some(i),
                _ => None,
            },
        };
        let uint = int.and_then(|i| u64::try_from(i).ok());
        let sink = &mut self.traces[r.sink as usize];
        let e = &mut sink.entries[r.idx as usize];
        match field {
            Field::Addr if uint.is_some() => e.set_addr(uint),
            Field::Size if uint.is_some() => e.set_size(uint),
            Field::Stream if int.is_some() => e.set_stream(int),
            Field::TimeUs if int.is_some() => e.set_time_us(int),
            Field::DeviceFree if uint.is_some() => rest.device_free = uint,
            Field::Action => match value {
                Item::Node(v) => {
                    // Action names are memoized strs too: a few nodes, parsed once each.
                    let known = self.action_nodes.iter().find(|(n, _)| *n == v);
                    let action = match (known, &self.nodes[v as usize]) {
                        (Some((_, a)), _) => a.clone(),
                        (None, Node::Str(s)) => {
                            let a = Action::parse(s);
                            if self.action_nodes.len() < KEY_CACHE {
                                self.action_nodes.push((v, a.clone()));
                            }
                            a
                        }
                        _ => return false,
                    };
                    e.set_action(action);
                    sink.has_action[r.idx as usize] = true;
                }
                Item::Int(..) => return false,
            },
            // Its items are checked as they come (`note_skipped_frames`); any other value goes
            // to the schema, which checks it as a full read does.
            // (`self.nodes`, not `is_skipped`: `sink` holds `self.traces` here.)
            Field::Frames if matches!(value, Item::Node(v) if matches!(self.nodes[v as usize], Node::SkippedFrames)) =>
                {}
            Field::Frames => match value {
                // The list node for now; the schema interns it into a stack.
                Item::Node(v) if matches!(self.nodes[v as usize], Node::List(_)) => {
                    e.set_frames(Some(StackId(v)))
                }
                _ => return false,
            },
            Field::CompileContext => {
                match shared_str(&self.nodes, &mut self.context_cache, value) {
                    Some(s) => rest.context = Some(s),
                    None => return false,
                }
            }
            Field::UserMetadata => match shared_str(&self.nodes, &mut self.metadata_cache, value) {
                Some(s) => rest.metadata = Some(s),
                None => return false,
            },
            _ => return false,
        }
        true
    }
}

/// A str node as an `Arc<str>`, shared with the previous call's when it is the same node or
/// the same text. PyTorch writes `compile_context` and `user_metadata` afresh in every entry
/// (`'N/A'` and `''` 22,332 times in one real file, no memo): by content they stay one `Arc`.
fn shared_str(
    nodes: &[Node<'_>],
    cache: &mut Option<(NodeId, Arc<str>)>,
    value: Item,
) -> Option<Arc<str>> {
    let Item::Node(v) = value else { return None };
    if let Some((id, s)) = cache {
        if *id == v {
            return Some(s.clone());
        }
    }
    let Node::Str(s) = &nodes[v as usize] else {
        return None;
    };
    let s = match cache {
        Some((_, last)) if **last == **s => last.clone(),
        _ => Arc::from(&**s),
    };
    *cache = Some((v, s.clone()));
    Some(s)
}

/// Key positions remembered by [`Machine::fill_field`] (entries have fewer keys than this).
pub(super) const KEY_CACHE: usize = 16;
/// A node id no key has.
pub(super) const NO_KEY: NodeId = NodeId::MAX;

impl Field {
    fn of(key: &str) -> Field {
        match key {
            "action" => Field::Action,
            "addr" => Field::Addr,
            "size" => Field::Size,
            "stream" => Field::Stream,
            "time_us" => Field::TimeUs,
            "device_free" => Field::DeviceFree,
            "frames" => Field::Frames,
            "compile_context" => Field::CompileContext,
            "user_metadata" => Field::UserMetadata,
            _ => Field::Other,
        }
    }
}

/// The rarer fields of one SETITEMS, put into the entry's shared [`EntryRest`] at its end.
#[derive(Default)]
struct Rest {
    context: Option<Arc<str>>,
    metadata: Option<Arc<str>>,
    device_free: Option<u64>,
}

impl Rest {
    /// Whether `shared` holds just these fields, the strs being the very same `Arc`s.
    fn is_exactly(&self, shared: &EntryRest) -> bool {
        let same = |a: &Option<Arc<str>>, b: Option<&Arc<str>>| match (a, b) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        let metadata = match &shared.user_metadata {
            None => None,
            Some(Value::Str(s)) => Some(s),
            Some(_) => return false,
        };
        shared.other_action.is_none()
            && shared.extra.is_empty()
            && shared.device_free == self.device_free
            && same(&self.context, shared.compile_context.as_ref())
            && same(&self.metadata, metadata)
    }
}

fn blank_entry() -> TraceEntry {
    TraceEntry::with_action(Action::Alloc)
}
