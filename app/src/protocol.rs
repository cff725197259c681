//! The page <-> worker protocol.
//!
//! The worker owns the parsed `Snapshot`; the page only ever holds compact view models. Each
//! message is a postcard-encoded [`Envelope`] in a `Uint8Array` (first element of a JS array; a
//! `File` to open rides as the second element, since a `File` cannot be serialised). A new view
//! adds a `Request` variant, its `Response` variant and a builder in `viewmodel`; nothing else
//! in the transport changes.

use memsnap_core::analysis::oom::OomExplanation;
use memsnap_core::analysis::pools::PoolTotals;
use memsnap_core::analysis::rank_summary::RankSummary;
use serde::{Deserialize, Serialize};

use crate::analysis_protocol::{
    AllocationView, AnomaliesView, CompareView, EntryRange, FlameRequest, FlameView, InsightsView,
    StackView, StateAtView, TimelineRequest, TimelineView, WhatIfRequest, WhatIfView,
};

pub use crate::stack_table::StackTable;

/// Matches a response to its request; 0 is the worker's unsolicited `Ready`.
pub type RequestId = u32;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub id: RequestId,
    pub body: T,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Open the `File` sent alongside this message. On failure the open file stays open.
    OpenFile {
        name: String,
        size: u64,
        first_screen: Option<PlotSize>,
    },
    /// One rank of a set (the pool's workers): parse the `File` sent alongside, answer its
    /// `RankSummary` and keep nothing, so the worker's open snapshot (if any) stays as it was.
    Summarize {
        name: String,
        size: u64,
        rank: u32,
    },
    /// Fetch and open an absolute URL (the page resolves relative ones against its address).
    OpenUrl {
        url: String,
        first_screen: Option<PlotSize>,
    },
    /// Segments and blocks of one device, with the stacks their blocks reference.
    Segments {
        device: i64,
    },
    /// Byte totals of one device.
    Diagnostics {
        device: i64,
    },
    // The analysis views (types in `analysis_protocol`).
    /// Series, bands and peak of an entry range at a pixel size.
    Timeline(TimelineRequest),
    /// One allocation of the timeline (index into the device's allocation list).
    Allocation {
        device: i64,
        alloc: u32,
    },
    /// Segments before trace entry `index`.
    StateAt {
        device: i64,
        index: u64,
    },
    WhatIf(WhatIfRequest),
    Flame(FlameRequest),
    Anomalies {
        device: i64,
        range: EntryRange,
    },
    /// Diagnostics additions: fragmentation, churn, pinning, peak frames, fixes, settings.
    Insights {
        device: i64,
    },
    /// Frames of a stack id named in a view model.
    Stack {
        stack: u32,
    },
    /// Compare the `File` sent alongside (BEFORE) with the open snapshot (AFTER) on `device`;
    /// the file is parsed for this answer and dropped, the open snapshot stays open.
    CompareWith {
        name: String,
        size: u64,
        device: i64,
    },
    /// The device's first out-of-memory error explained (`analysis::oom`).
    Oom {
        device: i64,
    },
    /// Reserved / allocated / free per pool of one device (`analysis::pools`).
    Pools {
        device: i64,
    },
}

impl Request {
    /// The variant's name, for the page's per-request `performance` measures.
    pub fn kind(&self) -> &'static str {
        match self {
            Request::OpenFile { .. } => "OpenFile",
            Request::Summarize { .. } => "Summarize",
            Request::OpenUrl { .. } => "OpenUrl",
            Request::Segments { .. } => "Segments",
            Request::Diagnostics { .. } => "Diagnostics",
            Request::Timeline(_) => "Timeline",
            Request::Allocation { .. } => "Allocation",
            Request::StateAt { .. } => "StateAt",
            Request::WhatIf(_) => "WhatIf",
            Request::Flame(_) => "Flame",
            Request::Anomalies { .. } => "Anomalies",
            Request::Insights { .. } => "Insights",
            Request::Stack { .. } => "Stack",
            Request::CompareWith { .. } => "CompareWith",
            Request::Oom { .. } => "Oom",
            Request::Pools { .. } => "Pools",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// The worker's wasm is running; requests sent before this would have been lost.
    Ready,
    /// Sent any number of times before an open request's `Opened` or `Failed`.
    Progress(Progress),
    /// The file opened; with the first screen when the open asked for it.
    Opened {
        summary: FileSummary,
        first_screen: Option<Box<FirstScreen>>,
    },
    /// The answer to `Summarize` (boxed: it is the largest variant by far).
    Summarized(Box<RankSummary>),
    Segments(SegmentsView),
    Diagnostics(DiagnosticsView),
    Timeline(TimelineView),
    Allocation(AllocationView),
    StateAt(StateAtView),
    WhatIf(WhatIfView),
    Flame(FlameView),
    Anomalies(AnomaliesView),
    Insights(Box<InsightsView>),
    Stack(StackView),
    Compare(CompareView),
    /// `None`: the device's trace has no `oom` entry.
    Oom {
        device: i64,
        oom: Option<Box<OomExplanation>>,
    },
    Pools {
        device: i64,
        pools: Vec<PoolTotals>,
    },
    /// Unasked, once after the worker's warm-up: the summary of its warm-up input, which it
    /// keeps open until a file is, for the page to open out of sight (`rehearsal`) before a
    /// real file needs its code.
    WarmedUp(Box<FileSummary>),
    /// The request could not be answered; `message` says why (for opens: the reader's error).
    Failed {
        message: String,
    },
    /// An analysis dropped half-way because another file opened (`worker::paced`): its
    /// answer would be about the file that is gone. The page drops the request's reply.
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stage {
    /// Bytes arriving: `done` of `total` (total unknown for a URL without Content-Length).
    Reading,
    /// Decoding: `done` input bytes of `total` consumed by the reader.
    Parsing,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub stage: Stage,
    pub done: u64,
    pub total: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSummary {
    pub name: String,
    pub size: u64,
    /// "snapshot" (a `_snapshot()` dict) or "segment list" (`memory_snapshot()`).
    pub form: String,
    pub devices: Vec<DeviceSummary>,
    /// Milliseconds spent in `snapshot::read`, measured in the worker.
    pub parse_ms: f64,
    /// Milliseconds the worker spent reading the file's bytes into its memory, and indexing
    /// the parsed snapshot for the views (this summary: timelines, validation). Read, parse
    /// and index are everything before the first view can be drawn.
    pub read_ms: f64,
    pub index_ms: f64,
    /// The worker's wasm memory once the file is open: its peak so far (it never shrinks).
    pub worker_memory: u64,
    /// Highest allocated and reserved bytes of any device over the trace (the dump's totals
    /// where there is no trace): `analysis::timeline`'s summary. Compares ranks of a job.
    pub peak_allocated: u64,
    pub peak_reserved: u64,
    /// `snapshot::validate`'s messages: the file read, but its numbers disagree, so the views
    /// show a partial picture. Capped per kind by validate itself.
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceSummary {
    pub device: i64,
    pub segments: u64,
    pub blocks: u64,
    pub trace_entries: u64,
    /// Trace index of the device's first `oom` entry.
    pub first_oom: Option<u64>,
    /// Entries other than `snapshot` markers: 0 means the file has no trace of this device
    /// (a segment-only file), whatever `trace_entries` says.
    pub traced_entries: u64,
    /// Pinned host memory (`host_segments`, `host_traces`), shown as one more device: no CUDA
    /// device, so what replays the CUDA caching allocator does not apply to it.
    pub host: bool,
}

impl DeviceSummary {
    /// The entries the timeline spans: 0 for a device without a trace.
    pub fn timeline_entries(&self) -> u64 {
        if self.traced_entries == 0 {
            0
        } else {
            self.trace_entries
        }
    }
}

/// The timeline's plot in pixels, sent with an open so that the worker answers the first screen
/// (`FirstScreen`) with `Opened`: asked for after it, the segments and the timeline each waited
/// for a round trip through the page's main thread while it mounted the views (15-30 ms each on
/// a first open, `scripts/profile_page.py`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlotSize {
    pub width: u32,
    pub height: u32,
}

/// What the page shows first of a file just opened: the opening device's segments and its whole
/// trace's timeline at the asked size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstScreen {
    pub segments: SegmentsView,
    /// The request the page's timeline sends for that device, and its answer; `None` for a
    /// device without a trace.
    pub timeline: Option<(TimelineRequest, TimelineView)>,
}

impl FileSummary {
    /// The device the page opens on: the first with an out-of-memory error (the usual reason
    /// to open a snapshot), else the first.
    pub fn opening_device(&self) -> Option<i64> {
        self.devices
            .iter()
            .find(|d| d.first_oom.is_some())
            .or(self.devices.iter().find(|d| !d.host))
            .or(self.devices.first())
            .map(|d| d.device)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BlockStateVm {
    ActiveAllocated,
    ActivePendingFree,
    Inactive,
}

impl BlockStateVm {
    /// The name PyTorch writes, used as `data-state` and as a CSS class.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockStateVm::ActiveAllocated => "active_allocated",
            BlockStateVm::ActivePendingFree => "active_pending_free",
            BlockStateVm::Inactive => "inactive",
        }
    }
}

/// One device's segments as drawn: segments in address order, blocks in address order within.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentsView {
    pub device: i64,
    pub segments: Vec<SegmentVm>,
    /// The stacks that blocks and segments reference (their `stack` ids), each frame once.
    pub stacks: StackTable,
}

impl SegmentsView {
    pub fn block_count(&self) -> usize {
        self.segments.iter().map(|s| s.blocks.len()).sum()
    }

    /// Frames of a stack (`file:line:name`), innermost first (empty for an unknown id).
    pub fn frames_of(&self, stack: u32) -> impl Iterator<Item = &str> + '_ {
        self.stacks.frames_of(stack)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentVm {
    pub address: u64,
    pub total_size: u64,
    pub stream: i64,
    /// "small" or "large" when the file says.
    pub pool: Option<String>,
    /// A private pool's `segment_pool_id` (CUDA graph, MemPool); `None` for the default pools.
    pub pool_id: Option<(i64, i64)>,
    pub expandable: bool,
    /// Index into `SegmentsView::stacks`: where the segment was cudaMalloc'ed.
    pub stack: Option<u32>,
    pub blocks: Vec<BlockVm>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockVm {
    /// Bytes from the segment's start.
    pub offset: u64,
    pub size: u64,
    pub requested_size: Option<u64>,
    pub state: BlockStateVm,
    /// Index into `SegmentsView::stacks`.
    pub stack: Option<u32>,
    /// torch <= 2.0: the block's allocation history, oldest first, as (addr, real_size).
    pub history: Vec<(u64, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameVm {
    pub filename: String,
    pub line: i64,
    pub name: String,
}

impl std::fmt::Display for FrameVm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.filename, self.line, self.name)
    }
}

/// Byte totals of one device (see `memsnap_core::analysis::totals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticsView {
    pub device: i64,
    pub segments: u64,
    pub blocks: u64,
    pub reserved: u64,
    pub allocated: u64,
    pub pending_free: u64,
    pub inactive: u64,
    pub largest_free: u64,
}

#[derive(Debug)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed worker message: {}", self.0)
    }
}

pub fn encode<T: Serialize>(id: RequestId, body: &T) -> Vec<u8> {
    // Serialising these plain structs into a Vec cannot fail (no maps with non-string keys,
    // no custom serialisers); an empty message would be rejected by `decode` on the other side.
    postcard::to_allocvec(&Envelope { id, body }).unwrap_or_default()
}

pub fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<Envelope<T>, DecodeError> {
    postcard::from_bytes(bytes).map_err(|e| DecodeError(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_requests_and_responses() {
        let req = Request::Segments { device: 3 };
        let back: Envelope<Request> = decode(&encode(7, &req)).unwrap();
        assert_eq!(back, Envelope { id: 7, body: req });

        let resp = Response::Progress(Progress {
            stage: Stage::Reading,
            done: 1 << 33,
            total: Some(1 << 34),
        });
        let back: Envelope<Response> = decode(&encode(9, &resp)).unwrap();
        assert_eq!(back.body, resp);
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode::<Request>(&[0xff, 0xff, 0xff]).is_err());
        assert!(decode::<Response>(&[]).is_err());
    }
}
