//! What the worker says of a file it opened: devices, timings, and the first screen.

use serde::{Deserialize, Serialize};

use super::analysis::{TimelineRequest, TimelineView};
use super::segments::SegmentsView;

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
    /// Whose caching allocator's rules the device follows: `cuda` or `npu` (torch_npu), from
    /// its sizes (`analysis::policy`); the device is named by it (`npu:0`).
    pub allocator: String,
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
/// a first open, `scripts/profile/profile_page.py`).
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
