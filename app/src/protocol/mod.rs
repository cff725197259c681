//! The page <-> worker protocol.
//!
//! The worker owns the parsed `Snapshot`; the page only ever holds compact view models. Each
//! message is a postcard-encoded [`Envelope`] in a `Uint8Array` (first element of a JS array; a
//! `File` to open rides as the second element, since a `File` cannot be serialised). A new view
//! adds a `Request` variant, its `Response` variant and a builder in `viewmodel`; nothing else
//! in the transport changes.
//!
//! This file holds the messages and their encoding; the views they carry are in its children
//! (`file`, `segments`, `analysis`), which import one another one way (analysis and file use
//! segments) and never this file.

use memsnap_core::analysis::oom::OomExplanation;
use memsnap_core::analysis::pools::PoolTotals;
use memsnap_core::analysis::rank_summary::RankSummary;
use serde::{Deserialize, Serialize};

pub mod analysis;
pub mod file;
pub mod segments;

use analysis::{
    AllocationView, AnomaliesView, CompareView, EntryRange, FlameRequest, FlameView, InsightsView,
    StackView, StateAtView, TimelineRequest, TimelineView, WhatIfRequest, WhatIfView,
};

pub use crate::stack_table::StackTable;
pub use file::{DeviceSummary, FileSummary, FirstScreen, PlotSize};
pub use segments::{BlockStateVm, BlockVm, DiagnosticsView, FrameVm, SegmentVm, SegmentsView};

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
    // The analysis views (types in `protocol::analysis`).
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
    /// The program's phases on one device (`analysis::phases`).
    Phases {
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
            Request::Phases { .. } => "Phases",
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
    Phases(Box<analysis::PhasesView>),
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
