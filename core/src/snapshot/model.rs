//! The typed model of a PyTorch memory snapshot (`torch.cuda.memory._snapshot()`).
//!
//! Every key PyTorch has written is optional here unless every version writes it, because files
//! from torch 1.13 to 2.x lack different keys; a missing key stays `None` and is not written back.
//! Keys this model does not name are kept in `extra` so that `write(read(f))` loses nothing.
//!
//! Stack frames are interned in [`Stacks`]: PyTorch shares frame dicts and whole frame lists
//! between blocks and trace entries (memo references in the pickle), and so does this model,
//! by id. A 1M-entry trace with 30 frames each stays a few thousand frames in memory.

use std::sync::Arc;

use super::value::Value;

/// Unknown keys of a dict, in file order.
pub type Extra = Vec<(Arc<str>, Value)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FrameId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StackId(pub u32);

/// One stack frame: Python, TorchScript, inductor or C++ (all use the same three keys).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub filename: Arc<str>,
    pub line: i64,
    pub name: Arc<str>,
    /// FX fields (`fx_node_op`, `fx_original_trace`, ...) and anything newer.
    pub extra: Extra,
}

/// Interned frames and stacks (a stack = a frame list, innermost frame first, as in the file).
#[derive(Debug, Clone, Default)]
pub struct Stacks {
    frames: Vec<Frame>,
    stacks: Vec<Box<[FrameId]>>,
}

impl Stacks {
    pub fn new() -> Stacks {
        Stacks::default()
    }

    /// Adds a frame and returns its id. Callers that intern (the reader, the allocator model)
    /// keep their own map from source identity to id; this table does not deduplicate.
    pub fn push_frame(&mut self, frame: Frame) -> FrameId {
        self.frames.push(frame);
        FrameId((self.frames.len() - 1) as u32)
    }

    pub fn push_stack(&mut self, frames: Box<[FrameId]>) -> StackId {
        self.stacks.push(frames);
        StackId((self.stacks.len() - 1) as u32)
    }

    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id.0 as usize]
    }

    pub fn stack(&self, id: StackId) -> &[FrameId] {
        &self.stacks[id.0 as usize]
    }

    /// The frames of a stack, innermost first.
    pub fn frames_of(&self, id: StackId) -> impl Iterator<Item = &Frame> + '_ {
        self.stack(id).iter().map(move |f| self.frame(*f))
    }

    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    pub fn stack_count(&self) -> usize {
        self.stacks.len()
    }

    pub fn all_frames(&self) -> &[Frame] {
        &self.frames
    }

    pub fn all_stacks(&self) -> &[Box<[FrameId]>] {
        &self.stacks
    }
}

/// How the file's top level was shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// `_snapshot()` / `_dump_snapshot()`: a dict with `segments`, `device_traces`, ...
    #[default]
    Dict,
    /// `torch.cuda.memory_snapshot()`: a bare list of segments, no traces.
    SegmentList,
}

#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub form: Form,
    pub segments: Vec<Segment>,
    /// One trace per device index; `None` when the key is absent.
    pub device_traces: Option<Vec<Vec<TraceEntry>>>,
    pub allocator_settings: Option<AllocatorSettings>,
    /// Kept as data: a list of dicts of user metadata plus `device` and `time_us`.
    pub external_annotations: Option<Value>,
    pub stacks: Stacks,
    /// Unknown top-level keys (`host_segments`, `host_traces`, ...), in file order.
    pub extra: Extra,
}

impl Snapshot {
    /// Trace of one device (empty when absent).
    pub fn trace(&self, device: usize) -> &[TraceEntry] {
        self.device_traces
            .as_ref()
            .and_then(|t| t.get(device))
            .map(|t| t.as_slice())
            .unwrap_or(&[])
    }

    /// Device indices that have a segment or a trace entry, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut d: Vec<i64> = self
            .segments
            .iter()
            .map(|s| s.device.unwrap_or(0))
            .collect();
        if let Some(traces) = &self.device_traces {
            for (i, t) in traces.iter().enumerate() {
                if !t.is_empty() {
                    d.push(i as i64);
                }
            }
        }
        d.sort_unstable();
        d.dedup();
        d
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentType {
    Small,
    Large,
}

impl SegmentType {
    pub fn as_str(self) -> &'static str {
        match self {
            SegmentType::Small => "small",
            SegmentType::Large => "large",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Segment {
    pub device: Option<i64>,
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: Option<u64>,
    pub active_size: Option<u64>,
    pub requested_size: Option<u64>,
    /// Raw `cudaStream_t` as int64 (0 = default stream).
    pub stream: Option<i64>,
    pub segment_type: Option<SegmentType>,
    pub segment_pool_id: Option<(i64, i64)>,
    pub is_expandable: Option<bool>,
    /// Stack of the cudaMalloc (`context_when_segment_allocated`).
    pub frames: Option<StackId>,
    pub blocks: Vec<Block>,
    pub extra: Extra,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockState {
    ActiveAllocated,
    /// Freed by the user, waiting on events of streams it was used on (`record_stream`).
    /// A torch docstring spells it `active_awaiting_free`; the reader accepts both.
    ActivePendingFree,
    Inactive,
}

impl BlockState {
    pub fn as_str(self) -> &'static str {
        match self {
            BlockState::ActiveAllocated => "active_allocated",
            BlockState::ActivePendingFree => "active_pending_free",
            BlockState::Inactive => "inactive",
        }
    }

    pub fn is_active(self) -> bool {
        !matches!(self, BlockState::Inactive)
    }
}

#[derive(Debug, Clone)]
pub struct Block {
    /// Explicit in torch >= 2.1; older files leave it to the prefix sum of sizes.
    pub address: Option<u64>,
    pub size: u64,
    pub requested_size: Option<u64>,
    pub state: BlockState,
    pub frames: Option<StackId>,
    /// torch <= 2.0: `[{addr, real_size, frames?}, ...]`, kept as data.
    pub history: Option<Value>,
    pub extra: Extra,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    /// `annotate`, NPU `workspace_snapshot`, and whatever comes next.
    Other(Arc<str>),
}

impl Action {
    pub fn as_str(&self) -> &str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
            Action::Other(s) => s,
        }
    }

    pub fn parse(s: &str) -> Action {
        match s {
            "alloc" => Action::Alloc,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            other => Action::Other(Arc::from(other)),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TraceEntry {
    pub action: Action,
    /// Absent on `oom` entries.
    pub addr: Option<u64>,
    /// alloc: requested bytes; free_*: the block's requested size; segment_*: segment bytes;
    /// oom: rounded request.
    pub size: Option<u64>,
    pub stream: Option<i64>,
    pub time_us: Option<i64>,
    /// `None` when the entry has no `frames` key (no context captured).
    pub frames: Option<StackId>,
    /// `oom` only: bytes the driver reported free.
    pub device_free: Option<u64>,
    pub compile_context: Option<Arc<str>>,
    pub user_metadata: Option<Value>,
    /// `pool_id`, `forward_frames`, `category`, and anything newer.
    pub extra: Extra,
}

impl TraceEntry {
    /// An entry with just an action, address and size; the rest absent.
    pub fn new(action: Action, addr: u64, size: u64) -> TraceEntry {
        TraceEntry {
            action,
            addr: Some(addr),
            size: Some(size),
            stream: None,
            time_us: None,
            frames: None,
            device_free: None,
            compile_context: None,
            user_metadata: None,
            extra: Vec::new(),
        }
    }
}

/// The file's `allocator_settings` dict, kept whole (key order and unknown keys) with typed getters.
/// `allocator::Config::from_settings` turns it into a model configuration.
#[derive(Debug, Clone, Default)]
pub struct AllocatorSettings {
    pub entries: Vec<(Arc<str>, Value)>,
}

impl AllocatorSettings {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| v)
    }
}
