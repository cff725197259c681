//! The diagnostics panel's analyses (those of `analysis::diagnosis`): largest hole against
//! total free, churn verdict, pinning blocks, top frames at the peak, ranked fixes, and the
//! file's settings as the `PYTORCH_CUDA_ALLOC_CONF` string that reproduces them.
//!
//! `diagnose_unplanned`, the call `memsnap diagnose` makes too: not `diagnose_with`, which also
//! runs the offline planner, which the panel does not show (the what-if view asks for it) and
//! which took minutes at a million entries, holding up every request queued behind it in the
//! worker (page benchmark, issue 6).

use std::rc::Rc;

use memsnap_core::allocator::Rules;
use memsnap_core::analysis::anomalies::Anomalies;
use memsnap_core::analysis::diagnosis::diagnose_unplanned_paced;
use memsnap_core::analysis::pace::{self, Pace};
use memsnap_core::analysis::policy::{device_config_quick_paced, settings_config};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::analysis::verdicts::Fix;
use memsnap_core::snapshot::Snapshot;

use super::cache::{trace_index, Analyses};
use super::stack::label;
use super::whatif::form_defaults;
use crate::protocol::analysis::{FixVm, GroupVm, InsightsView, PinningRow};

const PINNING_ROWS: usize = 10;
const PEAK_FRAMES: usize = 8;

pub fn insights_view(snap: &Snapshot, cache: &mut Analyses, device: i64) -> InsightsView {
    let host = cache.is_host(device);
    let tl = cache.timeline(snap, device);
    let (view, anomalies) = pace::finish(insights_view_paced(
        snap,
        tl,
        host,
        device,
        &mut Pace::never(),
    ));
    cache.keep_anomalies(device, Rc::new(anomalies));
    view
}

/// [`insights_view`] on the device's timeline `tl` (`host`: the device is the pinned host
/// memory), giving way through `pace`; with the device's anomalies, which the diagnosis finds
/// over the whole trace (the cache keeps them for the anomalies panel).
pub async fn insights_view_paced(
    snap: &Snapshot,
    tl: &Timeline,
    host: bool,
    device: i64,
    pace: &mut Pace<'_>,
) -> (InsightsView, Anomalies) {
    let d = diagnose_unplanned_paced(snap, trace_index(device), tl, pace).await;
    let (fragmentation, churn, pinning, peak, anomalies, mut verdicts) = (
        d.fragmentation,
        d.churn,
        d.pinning,
        d.peak,
        d.anomalies,
        d.verdicts,
    );
    let has_trace = d.has_trace;
    if host {
        // The fixes are CUDA caching allocator settings, weighed by replaying its policy.
        verdicts.fixes.clear();
        verdicts.no_saving.clear();
        verdicts.try_line = None;
    }
    pace.check().await;
    let (config, choice, settings_error) = match device_config_quick_paced(snap, device, pace).await
    {
        Ok(d) => (d.config, Some(d.choice), None),
        Err(e) => (Default::default(), None, Some(e.to_string())),
    };
    let rules = choice.as_ref().map_or(Rules::Cuda, |c| c.rules);
    // A recorded OOM tells the device's size: what was reserved plus what the driver had free.
    let capacity = anomalies
        .ooms
        .iter()
        .filter_map(|o| o.device_free.map(|f| f.saturating_add(o.reserved)))
        .max();
    let f = &fragmentation;
    let view = InsightsView {
        host,
        device,
        has_trace,
        free: f.free,
        largest_free: f.largest_free,
        fragmentation: f.ratio,
        segments_with_free: f.segments_with_free as u64,
        releasable: f.releasable,
        churn_verdict: churn.verdict.clone(),
        churn_verdict_exact: churn.verdict_exact.clone(),
        distinct_sizes: churn.distinct_sizes as u64,
        turnover: churn.turnover,
        pinning_count: pinning.len() as u64,
        pinning: pinning
            .iter()
            .take(PINNING_ROWS)
            .map(|p| PinningRow {
                block_address: p.block_address,
                block_size: p.block_size,
                pinned: p.pinned,
                segment_address: p.segment_address,
                segment_size: p.segment_size,
                label: label(snap, p.stack),
                stack: p.stack.map(|s| s.0),
            })
            .collect(),
        peak_index: peak.index.map(|i| i as u64),
        peak_allocated: peak.allocated,
        peak_frames: peak
            .by_top_frame
            .iter()
            .take(PEAK_FRAMES)
            .map(|g| GroupVm {
                label: g.label.clone(),
                bytes: g.bytes,
                count: g.count as u64,
            })
            .collect(),
        fixes: verdicts.fixes.iter().map(fix_vm).collect(),
        no_saving: verdicts.no_saving.iter().map(fix_vm).collect(),
        fixes_not_replayed: verdicts.not_replayed.clone(),
        ranked_on: verdicts.ranked_on.as_str().to_string(),
        why_start: verdicts.why_start.clone(),
        figure: verdicts.figure.clone(),
        base_peak_reserved: verdicts.base.peak_reserved,
        try_line: verdicts.try_line.clone(),
        replays: verdicts.replays,
        // The replays' own account (every check weighed) where fixes were replayed.
        allocator: if verdicts.allocator.is_empty() {
            choice.map_or(String::new(), |c| c.describe())
        } else {
            verdicts.allocator.clone()
        },
        conf_var: rules.conf_var().to_string(),
        // The file's own settings, as `memsnap diagnose` prints them (the form below starts
        // from the device's, which add what its segments show, e.g. expandable segments).
        conf: settings_config(snap)
            .map(|c| c.to_conf_string())
            .unwrap_or_default(),
        settings_error,
        has_settings: snap.allocator_settings.is_some(),
        defaults: form_defaults(&config, device, capacity),
    };
    (view, anomalies)
}

fn fix_vm(x: &Fix) -> FixVm {
    FixVm {
        setting: x.setting.clone(),
        title: x.title.clone(),
        evidence: x.evidence.clone(),
        saves: x.saves,
        saves_other_start: x.saves_other_start,
        peak_reserved: x.with.peak_reserved,
        served: x.oom.map(|o| o.served),
        spare: x.oom.map(|o| o.spare),
        cost: x.cost.clone(),
        replay_args: x.replay_args.clone(),
    }
}
