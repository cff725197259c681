//! What the worker keeps per open file for the analysis views: each device's timeline (allocation
//! lifetimes and LOD series) and state history (checkpoints for the slider), built on first use,
//! so zooming, panning and sliding never re-walk the whole trace.

use std::collections::HashMap;
use std::rc::Rc;

use memsnap_core::analysis::anomalies::{anomalies, Anomalies};
use memsnap_core::analysis::policy::device_config_quick;
use memsnap_core::analysis::state_at::StateHistory;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::Snapshot;

use super::peak::peak_vm;
use super::top_frames::TopFrames;
use crate::protocol::analysis::PeakVm;

#[derive(Default)]
pub struct Analyses {
    /// Shared with the analyses that give way (`PacedAnswer`), which hold them across a pause.
    timelines: HashMap<i64, Rc<Timeline>>,
    /// Each device's anomalies over its whole trace: a range's are a filter of them.
    anomalies: HashMap<i64, Rc<Anomalies>>,
    histories: HashMap<i64, StateHistory>,
    /// Peak compositions by (device, entry): the timeline asks again on every zoom.
    peaks: HashMap<(i64, u64), PeakVm>,
    /// Each stack's top frame, for the compositions.
    top_frames: Option<TopFrames>,
    /// The device number the open file's pinned host memory was moved to
    /// (`Snapshot::host_as_device`): shown as "host (pinned)", never replayed as CUDA memory.
    pub host_device: Option<i64>,
}

/// The trace index of a device (a negative one has no trace).
pub fn trace_index(device: i64) -> usize {
    usize::try_from(device).unwrap_or(usize::MAX)
}

impl Analyses {
    pub fn new() -> Analyses {
        Analyses::default()
    }

    /// The cache for a snapshot as the worker opens it: its pinned host memory moved to a
    /// device of its own first (`Snapshot::host_as_device`), which the views show apart.
    pub fn for_open(snapshot: &mut Snapshot) -> Analyses {
        Analyses {
            host_device: snapshot.host_as_device(),
            ..Analyses::default()
        }
    }

    /// Whether `device` is the pinned host memory, not a CUDA device.
    pub fn is_host(&self, device: i64) -> bool {
        self.host_device == Some(device)
    }

    pub fn timeline(&mut self, snap: &Snapshot, device: i64) -> &Timeline {
        self.timeline_rc(snap, device)
    }

    pub fn timeline_rc(&mut self, snap: &Snapshot, device: i64) -> &Rc<Timeline> {
        self.timelines
            .entry(device)
            .or_insert_with(|| Rc::new(Timeline::build(snap, trace_index(device))))
    }

    /// `device`'s anomalies over its whole trace, found on first use.
    pub fn anomalies(&mut self, snap: &Snapshot, device: i64) -> Rc<Anomalies> {
        if let Some(a) = self.anomalies.get(&device) {
            return a.clone();
        }
        let tl = self.timeline_rc(snap, device).clone();
        let found = Rc::new(anomalies(snap, trace_index(device), &tl));
        self.keep_anomalies(device, found.clone());
        found
    }

    /// `device`'s anomalies if they were found already.
    pub fn anomalies_found(&self, device: i64) -> Option<Rc<Anomalies>> {
        self.anomalies.get(&device).cloned()
    }

    /// Keeps what a paced answer found.
    pub fn keep_anomalies(&mut self, device: i64, found: Rc<Anomalies>) {
        self.anomalies.insert(device, found);
    }

    /// The state history under the file's settings (defaults when they cannot be read: they
    /// only size blocks freed inside the trace).
    pub fn history(&mut self, snap: &Snapshot, device: i64) -> &StateHistory {
        self.histories.entry(device).or_insert_with(|| {
            let config = device_config_quick(snap, device)
                .map(|d| d.config)
                .unwrap_or_default();
            StateHistory::new(snap, device, &config)
        })
    }

    /// What allocated memory is made of after entry `index`.
    pub fn peak_at(&mut self, snap: &Snapshot, device: i64, index: usize) -> PeakVm {
        if let Some(p) = self.peaks.get(&(device, index as u64)) {
            return p.clone();
        }
        let tl = self.timeline_rc(snap, device).clone();
        let top = self.top_frames.get_or_insert_with(|| TopFrames::new(snap));
        let vm = peak_vm(snap, &tl, top, index);
        self.peaks.insert((device, index as u64), vm.clone());
        vm
    }
}
