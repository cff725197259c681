//! The pickle machine's state: its stack, memo and the vectors the object graph is built in
//! (what `pickle` runs, and `pickle::entries` and `pickle::capacity` extend).

use std::collections::HashMap;
use std::sync::Arc;

use super::super::arena::{Node, NodeId, TraceSink};
use super::checkpoint::Checkpoint;
use super::field::Field;

/// A stack slot. Ints stay inline until something stores them (a container, the memo): the
/// ints of trace entries go straight into a [`TraceSink`] and never cost a node.
#[derive(Debug, Clone, Copy)]
pub(super) enum Item {
    Node(NodeId),
    /// An int that fits i64, with the offset of its opcode (for messages).
    Int(i64, u32),
}

pub(super) struct Machine<'a> {
    /// The input's bytes so far: all of it, or while it streams in ([`Incremental`]) a prefix.
    pub(super) data: &'a [u8],
    /// The input's length once whole.
    pub(super) total: usize,
    /// Where the next progress report is due.
    pub(super) next_report: usize,
    /// Bytes between two checkpoints (`checkpoint_step`).
    pub(super) step: usize,
    pub(super) pos: usize,
    /// Offset of the opcode being run.
    pub(super) start: usize,
    pub(super) op: u8,
    pub(super) nodes: Vec<Node<'a>>,
    pub(super) at: Vec<u32>,
    pub(super) items: Vec<NodeId>,
    pub(super) pairs: Vec<(NodeId, NodeId)>,
    pub(super) stack: Vec<Item>,
    /// Stack lengths at each open MARK.
    pub(super) marks: Vec<usize>,
    pub(super) memo_dense: Vec<NodeId>,
    pub(super) memo_sparse: HashMap<u64, NodeId>,
    /// Number of distinct memo keys set (MEMOIZE stores at this key, as CPython does).
    pub(super) memo_len: u64,
    /// End of the current FRAME, to refuse a FRAME that starts inside another.
    pub(super) frame_end: usize,
    /// Pairs on their way from the stack into a dict (reused, not reallocated).
    pub(super) scratch_pairs: Vec<(NodeId, NodeId)>,
    /// The list under the top-level `device_traces` key, once met.
    pub(super) traces_outer: Option<NodeId>,
    /// Lists inside it (one per device) and the sink each one's entries go to.
    pub(super) trace_lists: Vec<(NodeId, u32)>,
    pub(super) traces: Vec<TraceSink>,
    /// Trace entries made so far, all sinks.
    pub(super) entry_count: usize,
    /// The last `compile_context` / `user_metadata` str node seen and its shared value: every
    /// entry of a file usually refers to the same memoized one.
    pub(super) context_cache: Option<(NodeId, Arc<str>)>,
    pub(super) metadata_cache: Option<(NodeId, Arc<str>)>,
    /// The last shared rarer part given to an entry.
    pub(super) rest_cache: Option<Arc<crate::snapshot::model::EntryRest>>,
    /// (key node, field) by position in an entry's pairs (see `entries::Machine::fill_field`).
    pub(super) key_fields: Vec<(NodeId, Field)>,
    /// Action str nodes met so far and their parse.
    pub(super) action_nodes: Vec<(NodeId, crate::snapshot::model::Action)>,
    /// (start, len) in `items` of lists by a hash of their items (see `share_equal_items`).
    pub(super) lists_by_hash: foldhash::HashMap<u64, (u32, u32)>,
    /// Items on their way from the stack into a sequence (reused).
    pub(super) scratch_ids: Vec<NodeId>,
    /// Pairs on their way from the stack into an entry (reused).
    pub(super) entry_items: Vec<Item>,
    /// Vector lengths at the last progress checkpoint (see `capacity`).
    pub(super) checkpoint: Checkpoint,
    /// Whether trace entries keep their frame lists.
    pub(super) frames: super::super::frames::Frames,
    /// By node id, whether it is a dict added to a skipped frame list (the schema checks those
    /// as frames: `Arena::skipped_frame_dicts`).
    pub(super) noted_frame_dict: Vec<bool>,
}
