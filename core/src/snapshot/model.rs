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
    /// One byte per frame that `analysis::frames` derives from the frame alone (its kind and
    /// whether it is omitted), computed on first use: every block's label classifies every
    /// frame of its stack, and the same few thousand frames recur in thousands of stacks.
    classes: std::sync::OnceLock<Box<[u8]>>,
}

impl Stacks {
    pub fn new() -> Stacks {
        Stacks::default()
    }

    /// Adds a frame and returns its id. Callers that intern (the reader, the allocator model)
    /// keep their own map from source identity to id; this table does not deduplicate.
    pub fn push_frame(&mut self, frame: Frame) -> FrameId {
        self.classes = std::sync::OnceLock::new();
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

    /// A byte per frame, made by `compute` over all frames the first time it is asked for and
    /// kept until a frame is added (`analysis::frames` keeps each frame's class here).
    pub fn frame_classes(&self, compute: impl FnOnce(&[Frame]) -> Box<[u8]>) -> &[u8] {
        self.classes.get_or_init(|| compute(&self.frames))
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
    /// Pinned host memory (`_record_memory_history(record_pinned_host_memory=True)`, PyTorch
    /// 2026): the segments of the CUDA host allocator, shaped like `segments`. `None` when
    /// the key is absent. Host memory is not a CUDA device: it is counted apart from them.
    pub host_segments: Option<Vec<Segment>>,
    /// The host allocator's trace: one list (it is one allocator, not one per device).
    pub host_traces: Option<Vec<TraceEntry>>,
    pub stacks: Stacks,
    /// Unknown top-level keys, in file order.
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

    /// Entries of `device`'s trace that record something: `snapshot` markers alone (a torch
    /// 2.0 dump writes one) are no trace.
    pub fn traced_entries(&self, device: usize) -> usize {
        self.trace(device)
            .iter()
            .filter(|e| !e.is(&Action::Snapshot))
            .count()
    }

    /// Whether `device` has a trace (`traced_entries(device) > 0`, without counting them all).
    pub fn has_trace(&self, device: usize) -> bool {
        self.trace(device).iter().any(|e| !e.is(&Action::Snapshot))
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

    /// Whether the file holds pinned host memory (segments or trace entries).
    pub fn has_host_memory(&self) -> bool {
        self.host_segments.as_ref().is_some_and(|s| !s.is_empty())
            || self.host_traces.as_ref().is_some_and(|t| !t.is_empty())
    }

    /// Moves the host memory into `segments` and `device_traces` as one more device, numbered
    /// after every CUDA device, and returns that number. The viewer does this once when it
    /// opens a file, so each per-device view (segments, timeline, diagnostics) shows host
    /// memory unchanged; the caller keeps the number to label it and to refuse what is CUDA
    /// only (replaying the CUDA caching allocator's policy). `None`, and nothing moved, when
    /// the file has no host memory.
    pub fn host_as_device(&mut self) -> Option<i64> {
        if !self.has_host_memory() {
            return None;
        }
        let traces = self.device_traces.get_or_insert_with(Vec::new);
        let after_segments = self
            .segments
            .iter()
            .map(|s| s.device.unwrap_or(0).saturating_add(1))
            .max()
            .unwrap_or(0);
        let host = after_segments.max(traces.len() as i64);
        traces.resize_with(host as usize, Vec::new);
        traces.push(self.host_traces.take().unwrap_or_default());
        for mut s in self.host_segments.take().unwrap_or_default() {
            s.device = Some(host);
            self.segments.push(s);
        }
        Some(host)
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
    /// torch <= 2.0: `[{addr, real_size, frames?}, ...]`.
    pub history: Option<History>,
    pub extra: Extra,
}

/// A torch <= 2.0 block's `history`: the allocations it has served, oldest first; the last is
/// the one that holds it now.
#[derive(Debug, Clone, PartialEq)]
pub enum History {
    Entries(Vec<HistoryEntry>),
    /// Not a list of such entries (a file of another shape): kept as read, and written back.
    Other(Value),
}

/// One allocation of a [`History`]. Typed, with its frames interned as any stack: a legacy
/// file's only stacks are here (460 lists of 10 frame dicts in the real one, none shared),
/// and as generic data they were half the time reading it.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    pub addr: Option<u64>,
    pub real_size: Option<u64>,
    pub frames: Option<StackId>,
    pub extra: Extra,
}

impl Block {
    /// A torch <= 2.0 block's history entries, oldest first (none for other files, or for a
    /// history of another shape).
    pub fn history_entries(&self) -> &[HistoryEntry] {
        self.history.as_ref().map_or(&[], History::entries)
    }
}

impl History {
    /// The entries, if the history has the shape torch writes.
    pub fn entries(&self) -> &[HistoryEntry] {
        match self {
            History::Entries(e) => e,
            History::Other(_) => &[],
        }
    }
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
            Action::Other(s) => s,
            known => known.static_name(),
        }
    }

    /// The name of a known action (`""` for [`Action::Other`], whose name is its own).
    fn static_name(&self) -> &'static str {
        match self {
            Action::Other(_) => "",
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
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

/// One entry of a device trace, in 48 bytes: a million-entry trace is most of a large
/// snapshot's memory, so the four usual numbers sit inline with a presence mask, the frame list
/// is an id, the action a byte, and everything rarer (an unknown action's name, `device_free`,
/// `compile_context`, `user_metadata`, unknown keys) lives behind one shared [`EntryRest`]:
/// the entries of a file usually all carry the same `compile_context` and `user_metadata`,
/// and the reader gives such entries one `Arc`. Fields are read and set by method.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEntry {
    addr: u64,
    size: u64,
    stream: i64,
    time_us: i64,
    rest: Option<Arc<EntryRest>>,
    /// [`NO_FRAMES`] when absent.
    frames: u32,
    action: ActionCode,
    /// Which of addr, size, stream, time_us are present (bits 0-3).
    present: u8,
}

const NO_FRAMES: u32 = u32::MAX;
// The layout the doc comment promises (64-bit targets; wasm32's pointers make it smaller).
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<TraceEntry>() == 48);
const HAS_ADDR: u8 = 1;
const HAS_SIZE: u8 = 2;
const HAS_STREAM: u8 = 4;
const HAS_TIME: u8 = 8;

/// [`Action`] without the name of an unknown one (that is in [`EntryRest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum ActionCode {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    Other,
}

impl ActionCode {
    #[inline]
    fn of(action: &Action) -> ActionCode {
        match action {
            Action::Alloc => ActionCode::Alloc,
            Action::FreeRequested => ActionCode::FreeRequested,
            Action::FreeCompleted => ActionCode::FreeCompleted,
            Action::SegmentAlloc => ActionCode::SegmentAlloc,
            Action::SegmentFree => ActionCode::SegmentFree,
            Action::SegmentMap => ActionCode::SegmentMap,
            Action::SegmentUnmap => ActionCode::SegmentUnmap,
            Action::Snapshot => ActionCode::Snapshot,
            Action::Oom => ActionCode::Oom,
            Action::Other(_) => ActionCode::Other,
        }
    }
}

/// The rarer parts of a [`TraceEntry`], shared between entries that have the same.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EntryRest {
    /// The name of an [`Action::Other`].
    pub other_action: Option<Arc<str>>,
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
        let mut e = TraceEntry::with_action(action);
        e.set_addr(Some(addr));
        e.set_size(Some(size));
        e
    }

    /// An entry with just an action.
    pub fn with_action(action: Action) -> TraceEntry {
        let mut e = TraceEntry {
            addr: 0,
            size: 0,
            stream: 0,
            time_us: 0,
            rest: None,
            frames: NO_FRAMES,
            action: ActionCode::Alloc,
            present: 0,
        };
        e.set_action(action);
        e
    }

    // Inlined so that `e.action() == Action::Oom` in a scan compiles to a compare of codes.
    #[inline]
    pub fn action(&self) -> Action {
        match self.action {
            ActionCode::Alloc => Action::Alloc,
            ActionCode::FreeRequested => Action::FreeRequested,
            ActionCode::FreeCompleted => Action::FreeCompleted,
            ActionCode::SegmentAlloc => Action::SegmentAlloc,
            ActionCode::SegmentFree => Action::SegmentFree,
            ActionCode::SegmentMap => Action::SegmentMap,
            ActionCode::SegmentUnmap => Action::SegmentUnmap,
            ActionCode::Snapshot => Action::Snapshot,
            ActionCode::Oom => Action::Oom,
            ActionCode::Other => Action::Other(
                self.rest
                    .as_ref()
                    .and_then(|r| r.other_action.clone())
                    .unwrap_or_else(|| Arc::from("")),
            ),
        }
    }

    /// The action as the file spells it, borrowed from the entry.
    pub fn action_name(&self) -> &str {
        match self.action {
            ActionCode::Other => self
                .rest
                .as_ref()
                .and_then(|r| r.other_action.as_deref())
                .unwrap_or(""),
            _ => match self.action() {
                Action::Other(_) => "",
                known => known.static_name(),
            },
        }
    }

    /// Whether the entry's action is `action`: a compare of codes, for scans over a whole
    /// trace (`action() == Action::Oom` builds an `Action` per entry, a sixth of the
    /// diagnosis at a million entries).
    #[inline]
    pub fn is(&self, action: &Action) -> bool {
        match action {
            Action::Other(name) => self.action_name() == &**name,
            known => self.action == ActionCode::of(known),
        }
    }

    pub fn set_action(&mut self, action: Action) {
        let code = ActionCode::of(&action);
        if let Action::Other(name) = action {
            self.rest_mut().other_action = Some(name);
        }
        if code != ActionCode::Other && self.action == ActionCode::Other {
            self.rest_mut().other_action = None;
        }
        self.action = code;
    }

    /// Absent on `oom` entries.
    pub fn addr(&self) -> Option<u64> {
        (self.present & HAS_ADDR != 0).then_some(self.addr)
    }

    /// alloc: requested bytes; free_*: the block's requested size; segment_*: segment bytes;
    /// oom: rounded request.
    pub fn size(&self) -> Option<u64> {
        (self.present & HAS_SIZE != 0).then_some(self.size)
    }

    pub fn stream(&self) -> Option<i64> {
        (self.present & HAS_STREAM != 0).then_some(self.stream)
    }

    pub fn time_us(&self) -> Option<i64> {
        (self.present & HAS_TIME != 0).then_some(self.time_us)
    }

    /// `None` when the entry has no `frames` key (no context captured).
    pub fn frames(&self) -> Option<StackId> {
        (self.frames != NO_FRAMES).then_some(StackId(self.frames))
    }

    pub fn device_free(&self) -> Option<u64> {
        self.rest.as_ref().and_then(|r| r.device_free)
    }

    pub fn compile_context(&self) -> Option<&Arc<str>> {
        self.rest.as_ref().and_then(|r| r.compile_context.as_ref())
    }

    pub fn user_metadata(&self) -> Option<&Value> {
        self.rest.as_ref().and_then(|r| r.user_metadata.as_ref())
    }

    /// Unknown keys, in file order.
    pub fn extra(&self) -> &[(Arc<str>, Value)] {
        self.rest.as_ref().map_or(&[], |r| &r.extra[..])
    }

    pub fn set_addr(&mut self, v: Option<u64>) {
        self.addr = v.unwrap_or(0);
        self.mark(HAS_ADDR, v.is_some());
    }

    pub fn set_size(&mut self, v: Option<u64>) {
        self.size = v.unwrap_or(0);
        self.mark(HAS_SIZE, v.is_some());
    }

    pub fn set_stream(&mut self, v: Option<i64>) {
        self.stream = v.unwrap_or(0);
        self.mark(HAS_STREAM, v.is_some());
    }

    pub fn set_time_us(&mut self, v: Option<i64>) {
        self.time_us = v.unwrap_or(0);
        self.mark(HAS_TIME, v.is_some());
    }

    /// Frame list ids are 32-bit with one value reserved: `StackId(u32::MAX)` reads as absent.
    pub fn set_frames(&mut self, v: Option<StackId>) {
        self.frames = v.map_or(NO_FRAMES, |s| s.0);
    }

    pub fn set_device_free(&mut self, v: Option<u64>) {
        if v.is_some() || self.device_free().is_some() {
            self.rest_mut().device_free = v;
        }
    }

    pub fn set_compile_context(&mut self, v: Option<Arc<str>>) {
        if v.is_some() || self.compile_context().is_some() {
            self.rest_mut().compile_context = v;
        }
    }

    pub fn set_user_metadata(&mut self, v: Option<Value>) {
        if v.is_some() || self.user_metadata().is_some() {
            self.rest_mut().user_metadata = v;
        }
    }

    pub fn extra_mut(&mut self) -> &mut Extra {
        &mut self.rest_mut().extra
    }

    /// The shared rarer part, as it is (for sharing it between entries).
    pub fn rest(&self) -> Option<&Arc<EntryRest>> {
        self.rest.as_ref()
    }

    /// Replaces the rarer part (the reader shares one between entries that have equal ones).
    pub fn set_rest(&mut self, rest: Option<Arc<EntryRest>>) {
        self.rest = rest;
    }

    pub fn with_stream(mut self, v: i64) -> TraceEntry {
        self.set_stream(Some(v));
        self
    }

    pub fn with_time_us(mut self, v: i64) -> TraceEntry {
        self.set_time_us(Some(v));
        self
    }

    pub fn with_frames(mut self, v: StackId) -> TraceEntry {
        self.set_frames(Some(v));
        self
    }

    fn mark(&mut self, bit: u8, on: bool) {
        if on {
            self.present |= bit;
        } else {
            self.present &= !bit;
        }
    }

    fn rest_mut(&mut self) -> &mut EntryRest {
        Arc::make_mut(self.rest.get_or_insert_with(Default::default))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_agrees_with_action() {
        let actions = [
            Action::Alloc,
            Action::FreeRequested,
            Action::FreeCompleted,
            Action::SegmentAlloc,
            Action::SegmentFree,
            Action::SegmentMap,
            Action::SegmentUnmap,
            Action::Snapshot,
            Action::Oom,
            Action::Other(Arc::from("custom")),
            Action::Other(Arc::from("another")),
        ];
        for a in &actions {
            let mut e = TraceEntry::new(a.clone(), 0x1000, 512);
            for b in &actions {
                assert_eq!(e.is(b), e.action() == *b, "{a:?} is {b:?}");
            }
            // Set back to a known action, an unknown name no longer matches.
            e.set_action(Action::Alloc);
            assert!(!e.is(&Action::Other(Arc::from("custom"))));
            assert!(e.is(&Action::Alloc));
        }
    }
}
