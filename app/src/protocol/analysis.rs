//! The analysis views' part of the page <-> worker protocol: what the timeline, state slider,
//! what-if, flame graph, anomalies and insights panels ask for, and the compact view models the
//! worker answers with (`protocol::Request`/`Response` carry them). Every figure here was
//! computed by `memsnap_core::analysis` in the worker; the page only draws them.

use memsnap_core::analysis::bands::{BandLayout, Hit};
use serde::{Deserialize, Serialize};

/// Why what-if refuses pinned host memory.
pub const HOST_NOT_REPLAYED: &str = "Pinned host memory is served by PyTorch's CUDA host allocator, not the CUDA caching allocator: the what-if replay models the CUDA allocator's policy, so it is not applied to host memory.";

/// Entry indices `start..end` of a device's trace: the shared time-range filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryRange {
    pub start: u64,
    pub end: u64,
}

impl EntryRange {
    pub fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn contains(&self, index: u64) -> bool {
        self.start <= index && index < self.end
    }
}

/// The timeline of `range` drawn `width` x `height` pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineRequest {
    pub device: i64,
    pub range: EntryRange,
    pub width: u32,
    pub height: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineView {
    pub device: i64,
    /// Trace length.
    pub entries: u64,
    /// The request's range clamped to the trace.
    pub range: EntryRange,
    pub start_time_us: Option<i64>,
    pub end_time_us: Option<i64>,
    /// Highest reserved or allocated value in the range: the top of the y axis.
    pub y_max: u64,
    /// One point per pixel column (at most), min and max over its entries.
    pub allocated: Vec<SeriesPoint>,
    pub reserved: Vec<SeriesPoint>,
    /// The pixel columns and their bands, each column's stack kept as what it shares with the
    /// one before and its own on top, as sent: the page draws a band once per run of columns it
    /// keeps its place in. Allocations below `bands.min_bytes` are summarised, not banded.
    pub bands: BandLayout,
    /// The highest allocated point inside the range and what it is made of.
    pub peak: Option<PeakVm>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeriesPoint {
    pub start: u64,
    pub end: u64,
    pub min: u64,
    pub max: u64,
}

impl TimelineView {
    /// The allocation drawn at entry `index`, height `bytes` (its index in the device's
    /// allocation list, for `Request::Allocation`).
    pub fn hit(&self, index: u64, bytes: u64) -> Option<u32> {
        let index = usize::try_from(index).ok()?;
        match self.bands.hit(index, bytes) {
            Hit::Allocation(alloc) => u32::try_from(alloc).ok(),
            Hit::Summary | Hit::Nothing => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeakVm {
    pub index: u64,
    pub time_us: Option<i64>,
    pub allocated: u64,
    pub reserved: u64,
    pub live_allocations: u64,
    /// By top user frame, most bytes first (the largest few).
    pub groups: Vec<GroupVm>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupVm {
    pub label: String,
    pub bytes: u64,
    pub count: u64,
}

/// One allocation of the timeline: what hovering or clicking its band shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocationView {
    pub alloc: u32,
    pub addr: u64,
    pub size: u64,
    pub requested: u64,
    /// Live after entries `start..end`.
    pub start: u64,
    pub end: u64,
    /// False when allocated before the trace began (`start` is then 0).
    pub allocated_in_trace: bool,
    /// False when still live at the end of the trace.
    pub freed_in_trace: bool,
    pub start_time_us: Option<i64>,
    pub end_time_us: Option<i64>,
    pub stream: Option<i64>,
    /// `file:line:name`, innermost first (capture machinery left out).
    pub frames: Vec<String>,
}

/// Segments before entry `index` (after `index` entries), as the segment view shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateAtView {
    pub index: u64,
    pub entries: u64,
    pub time_us: Option<i64>,
    /// Time of the trace's first entry, to show `time_us` relative to it.
    pub first_time_us: Option<i64>,
    pub segments: super::segments::SegmentsView,
}

/// Allocator settings to replay the trace under (`None`/empty: the default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIfRequest {
    pub device: i64,
    pub expandable_segments: bool,
    pub max_split_size_mb: Option<u64>,
    /// As in `PYTORCH_CUDA_ALLOC_CONF`: `4` or `[256:1,512:2,>:4]`.
    pub roundup_power2_divisions: String,
    pub garbage_collection_threshold: Option<f64>,
    /// Device memory for the simulated device; `None`: unlimited (no OOM possible).
    pub capacity: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FiguresVm {
    pub peak_reserved: u64,
    pub peak_allocated: u64,
    pub final_reserved: u64,
    pub final_allocated: u64,
    pub ooms: u64,
    pub segment_allocs: u64,
}

impl FiguresVm {
    /// Reserved bytes beyond the allocated peak: what the cache's holes cost at the worst point.
    pub fn overhead(&self) -> u64 {
        self.peak_reserved.saturating_sub(self.peak_allocated)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIfView {
    pub device: i64,
    /// Whose allocator's rules both replays follow, in words, and its settings variable.
    pub allocator: String,
    pub conf_var: String,
    pub original_settings: String,
    pub changed_settings: String,
    /// What the file recorded (timeline peaks, OOM entries).
    pub recorded: FiguresVm,
    /// The model under the file's own settings, and under the changed ones.
    pub original: FiguresVm,
    pub changed: FiguresVm,
    /// "reconstructed" (from the state at the first entry) or "clean" (empty device).
    pub start: String,
    pub requests: u64,
    pub failed_requests: u64,
    pub plan: Option<PlanVm>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanVm {
    pub peak_live_requested: u64,
    pub peak_live_block: u64,
    /// What a best-fit offline assignment of the block sizes reserves.
    pub arena_size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FlameMeasure {
    /// Bytes live after an entry (`None`: at the peak inside the range).
    LiveAt(Option<u64>),
    /// Bytes × entries lived inside the range.
    BytesTimesLifetime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlameRequest {
    pub device: i64,
    pub range: EntryRange,
    pub measure: FlameMeasure,
    /// Show torch internals, the standard library and native frames too.
    pub all_frames: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlameView {
    pub device: i64,
    pub measure: FlameMeasure,
    /// The entry the live bytes are taken after (for `LiveAt`).
    pub point: Option<u64>,
    pub total: u64,
    /// Pre-order; nodes narrower than 1/`MIN_FLAME_FRACTION` of the total are left out.
    pub nodes: Vec<FlameNodeVm>,
    /// Nodes left out for being too narrow.
    pub hidden: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlameNodeVm {
    pub name: String,
    /// Depth 0 is the root ("all").
    pub depth: u32,
    /// Left edge, in the same units as `value`.
    pub offset: u64,
    pub value: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnomaliesView {
    pub device: i64,
    pub pending: Vec<AnomalyRow>,
    pub pending_count: u64,
    pub pending_bytes: u64,
    pub leaks: Vec<AnomalyRow>,
    pub leak_count: u64,
    pub leak_bytes: u64,
    pub ooms: Vec<OomRow>,
}

/// A pending free or a leak suspect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnomalyRow {
    pub addr: u64,
    pub size: u64,
    /// The entry that made it (alloc, or free_requested for a pending free).
    pub index: Option<u64>,
    /// Entries it has lived (leak suspects).
    pub age: Option<u64>,
    pub stream: Option<i64>,
    /// Innermost user frame, or a placeholder.
    pub label: String,
    /// For `Request::Stack`.
    pub stack: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OomRow {
    pub index: u64,
    pub time_us: Option<i64>,
    pub requested: Option<u64>,
    pub device_free: Option<u64>,
    pub allocated: u64,
    pub reserved: u64,
    pub label: String,
    pub stack: Option<u32>,
}

/// The diagnostics panel's analyses of one device (`analysis::diagnosis`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InsightsView {
    pub device: i64,
    /// The device is pinned host memory: no CUDA allocator fixes, no `PYTORCH_CUDA_ALLOC_CONF`.
    pub host: bool,
    pub has_trace: bool,
    pub free: u64,
    pub largest_free: u64,
    /// 1 − largest hole / free bytes.
    pub fragmentation: f64,
    pub segments_with_free: u64,
    pub releasable: u64,
    pub churn_verdict: String,
    /// The verdict with exact byte counts (shown on hover), when it names sizes.
    pub churn_verdict_exact: Option<String>,
    pub distinct_sizes: u64,
    pub turnover: f64,
    pub pinning: Vec<PinningRow>,
    pub pinning_count: u64,
    pub peak_index: Option<u64>,
    pub peak_allocated: u64,
    pub peak_frames: Vec<GroupVm>,
    /// Fixes replayed through the model that help, best first (`analysis::verdicts`).
    pub fixes: Vec<FixVm>,
    /// Fixes replayed that save nothing, cost memory or fail requests.
    pub no_saving: Vec<FixVm>,
    /// Why no fix was replayed, when none was.
    pub fixes_not_replayed: Option<String>,
    /// The start the ranking replays from ("cold" or "reconstructed"), and why.
    pub ranked_on: String,
    pub why_start: String,
    /// The figure fixes are ranked by, in words.
    pub figure: String,
    /// Peak reserved under the file's settings, replayed from the ranking start.
    pub base_peak_reserved: u64,
    /// The best replayed change as a line to try.
    pub try_line: Option<String>,
    pub replays: u32,
    /// Whose allocator's rules the device is modelled under, and why, in words.
    pub allocator: String,
    /// The settings variable of that allocator (`PYTORCH_CUDA_ALLOC_CONF` or torch_npu's).
    pub conf_var: String,
    /// The settings value reproducing the file's settings ("" = defaults).
    pub conf: String,
    /// Why the file's settings could not be read, when they could not.
    pub settings_error: Option<String>,
    pub has_settings: bool,
    /// The file's settings as the what-if form starts with them.
    pub defaults: WhatIfRequest,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinningRow {
    pub block_address: u64,
    pub block_size: u64,
    pub pinned: u64,
    pub segment_address: u64,
    pub segment_size: u64,
    pub label: String,
    pub stack: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FixVm {
    pub setting: String,
    pub title: String,
    pub evidence: Vec<String>,
    /// Replayed: peak reserved under the file's settings minus under the fix (negative: it
    /// costs memory), from the ranking start; and the same from the other start.
    pub saves: i64,
    pub saves_other_start: Option<i64>,
    pub peak_reserved: u64,
    /// After an OOM: whether the failing request is served, and the memory left.
    pub served: Option<bool>,
    pub spare: Option<u64>,
    pub cost: String,
    /// `memsnap replay FILE <these>` replays it.
    pub replay_args: Vec<String>,
}

/// A stack's frames for the stack panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackView {
    pub stack: u32,
    pub frames: Vec<String>,
}

/// Two files of one program, before and after (core `compare::compare`, as `memsnap compare`
/// computes it): both files' numbers, and the first rows of each list with their full counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareView {
    pub before_name: String,
    pub device: i64,
    pub before: memsnap_core::analysis::compare::Side,
    pub after: memsnap_core::analysis::compare::Side,
    /// Largest change first.
    pub frames: Vec<memsnap_core::analysis::compare::FrameChange>,
    pub frames_total: u64,
    /// Stacks AFTER allocates from that BEFORE never did: name, bytes and count at AFTER's peak.
    pub new_stacks: Vec<GroupVm>,
    pub new_stacks_total: u64,
    pub new_stacks_bytes: u64,
    pub segments_added: u64,
    pub segments_added_bytes: u64,
    pub segments_removed: u64,
    pub segments_removed_bytes: u64,
}

/// A device's phases (`analysis::phases`), each with its figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhasesView {
    pub device: i64,
    /// Why there are none ("no phases: ..."); `None` when there are.
    pub none: Option<String>,
    pub rows: Vec<PhaseRow>,
    /// What the matching repaired (unmatched, unclosed, out-of-order marks).
    pub warnings: Vec<String>,
    /// The row of the innermost phase holding the device's allocated peak.
    pub peak_phase: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseRow {
    pub phase: memsnap_core::analysis::phases::Phase,
    /// `outer > inner`.
    pub path: String,
    pub stats: memsnap_core::analysis::phases::PhaseStats,
}

impl PhasesView {
    /// The innermost phase holding `entry`, as `analysis::phases` picks it.
    pub fn innermost_at(&self, entry: u64) -> Option<&PhaseRow> {
        let entry = usize::try_from(entry).ok()?;
        let mut best: Option<&PhaseRow> = None;
        for r in &self.rows {
            if r.phase.contains(entry) && best.is_none_or(|b| r.phase.depth >= b.phase.depth) {
                best = Some(r);
            }
        }
        best
    }
}
