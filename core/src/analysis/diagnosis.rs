//! Everything the diagnostics panel shows for one device, computed in one call.

use super::anomalies::{anomalies_paced, Anomalies};
use super::churn::{churn_paced, Churn};
use super::fragmentation::{fragmentation, DeviceFragmentation};
use super::pace::{self, Pace, CHUNK};
use super::peak::{peak_paced, Peak};
use super::phases::phases;
use super::pinning::{pinning, PinningBlock};
use super::plan::{plan, Plan, PlanSizes};
use super::timeline::{Timeline, TimelineSummary};
use super::verdicts::{verdicts_paced, Inputs, Verdicts};
use crate::snapshot::Snapshot;

#[derive(Debug, Clone)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Diagnosis {
    pub device: usize,
    pub has_trace: bool,
    pub timeline: TimelineSummary,
    pub fragmentation: DeviceFragmentation,
    pub churn: Churn,
    pub pinning: Vec<PinningBlock>,
    pub peak: Peak,
    /// The innermost phase of the program (`external_annotations`) holding the peak, as
    /// `outer > inner`; `None` when the file has no phases or the peak is outside all of them.
    pub peak_phase: Option<String>,
    pub anomalies: Anomalies,
    /// Planned lower bound; `None` without a trace (the dump alone has no lifetimes).
    pub plan: Option<PlanSummary>,
    /// Every fix tried, replayed through the model; the ranked ones first.
    pub verdicts: Verdicts,
}

/// The planner's numbers without the per-allocation offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PlanSummary {
    pub peak_live_requested: u64,
    pub peak_live_block: u64,
    pub arena_size: u64,
    pub planned: usize,
}

impl From<&Plan> for PlanSummary {
    fn from(p: &Plan) -> Self {
        PlanSummary {
            peak_live_requested: p.peak_live_requested,
            peak_live_block: p.peak_live_block,
            arena_size: p.arena_size,
            planned: p.planned,
        }
    }
}

/// Runs the analyses for `device` over an already built timeline.
pub fn diagnose_with(snap: &Snapshot, device: usize, tl: &Timeline) -> Diagnosis {
    let mut d = diagnose_unplanned(snap, device, tl);
    d.plan = d
        .has_trace
        .then(|| PlanSummary::from(&plan(&tl.allocations, PlanSizes::Block)));
    d
}

/// Everything but the planned lower bound (`plan` is `None`): the page's diagnostics panel,
/// which leaves the planner to the what-if view (it took minutes at a million entries).
pub fn diagnose_unplanned(snap: &Snapshot, device: usize, tl: &Timeline) -> Diagnosis {
    pace::finish(diagnose_unplanned_paced(
        snap,
        device,
        tl,
        &mut Pace::never(),
    ))
}

/// [`diagnose_unplanned`], giving way through `pace` inside each analysis and between them.
pub async fn diagnose_unplanned_paced(
    snap: &Snapshot,
    device: usize,
    tl: &Timeline,
    pace: &mut Pace<'_>,
) -> Diagnosis {
    let settings = snap.allocator_settings.as_ref();
    let fragmentation = fragmentation(snap, device);
    let churn = churn_paced(&tl.allocations, settings, pace).await;
    let pinning = pinning(snap, device, Some(&tl.allocations));
    pace.check().await;
    let has_trace = snap.has_trace(device);
    let mut peak = peak_paced(snap, tl, pace).await;
    // Without a trace the figures are the dump's: no entry to point at.
    peak.index = peak.index.filter(|_| has_trace);
    let peak_phase = peak
        .index
        .and_then(|i| phases(snap, device).ok().map(|p| (i, p)))
        .and_then(|(i, p)| p.innermost_at(i).map(|at| p.path(at)));
    let anomalies = anomalies_paced(snap, device, tl, pace).await;
    let mut sizes: Vec<u64> = Vec::new();
    for chunk in tl.allocations.list.chunks(CHUNK) {
        pace.check().await;
        sizes.extend(
            chunk
                .iter()
                .filter(|a| a.alloc_index.is_some())
                .map(|a| a.size),
        );
    }
    pace.check().await;
    let verdicts = verdicts_paced(
        snap,
        device,
        &Inputs {
            fragmentation: &fragmentation,
            churn: has_trace.then_some(&churn),
            pinning: &pinning,
            request_sizes: &sizes,
        },
        pace,
    )
    .await;
    pace.check().await;
    let timeline = tl.summary();
    Diagnosis {
        device,
        has_trace,
        timeline,
        fragmentation,
        churn,
        pinning,
        peak,
        peak_phase,
        anomalies,
        plan: None,
        verdicts,
    }
}

pub fn diagnose(snap: &Snapshot, device: usize) -> Diagnosis {
    diagnose_with(snap, device, &Timeline::build(snap, device))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::BlockState::*;

    #[test]
    fn bundles_consistent_numbers() {
        let mut t = costly_alternation(5, 30 * MB, 50 * MB);
        t.push(crate::snapshot::TraceEntry::new(
            crate::snapshot::Action::Alloc,
            0x1000_0000,
            MB,
        ));
        let segs = vec![segment(
            0x1000_0000,
            &[(MB, ActiveAllocated, MB), (19 * MB, Inactive, 0)],
        )];
        let snap = snapshot(segs, t);
        let d = diagnose(&snap, 0);
        let unplanned = diagnose_unplanned(&snap, 0, &Timeline::build(&snap, 0));
        assert!(unplanned.plan.is_none());
        assert_eq!(unplanned.verdicts, d.verdicts);
        assert!(d.has_trace);
        assert_eq!(d.timeline.peak_allocated, 50 * MB);
        assert_eq!(d.peak.allocated, 50 * MB);
        assert_eq!(d.fragmentation.allocated, MB);
        assert!(d.timeline.end_allocated_matches_dump);
        assert_eq!(d.pinning.len(), 1);
        assert_eq!(d.anomalies.leak_suspects.len(), 1);
        let p = d.plan.expect("plan");
        assert_eq!(p.peak_live_block, 50 * MB);
        assert_eq!(p.arena_size, 50 * MB);
        assert!(d.churn.alternating.is_some());
        assert!(d.verdicts.not_replayed.is_none(), "{:?}", d.verdicts);
    }
}
