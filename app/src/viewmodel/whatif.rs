//! What-if: the trace replayed through the allocator model under changed settings
//! (`analysis::replay::what_if`), beside the same replay under the file's own settings, what the
//! file recorded, and the planned lower bound (`analysis::plan`).

use memsnap_core::allocator::config::ROUNDUP_INTERVALS;
use memsnap_core::allocator::Config;
use memsnap_core::analysis::plan::{plan, PlanSizes};
use memsnap_core::analysis::replay::{device_config, what_if, Figures, Start};
use memsnap_core::snapshot::{Action, Snapshot};

use super::cache::{trace_index, Analyses};
use crate::protocol::analysis::{FiguresVm, PlanVm, WhatIfRequest, WhatIfView, HOST_NOT_REPLAYED};

/// The file's settings with the form's four changed (an empty field means the default).
pub fn changed_config(base: &Config, req: &WhatIfRequest) -> Result<Config, String> {
    let mut c = base.clone();
    let set = |c: &mut Config, key: &str, value: &str| c.set(key, value).map_err(|e| e.to_string());
    c.expandable_segments = req.expandable_segments;
    match req.max_split_size_mb {
        Some(mb) => set(&mut c, "max_split_size_mb", &mb.to_string())?,
        None => c.max_split_size = Config::default().max_split_size,
    }
    match req.roundup_power2_divisions.trim() {
        "" => c.roundup_power2_divisions = [0; ROUNDUP_INTERVALS],
        v => set(&mut c, "roundup_power2_divisions", v)?,
    }
    match req.garbage_collection_threshold {
        Some(t) => set(&mut c, "garbage_collection_threshold", &t.to_string())?,
        None => c.garbage_collection_threshold = 0.0,
    }
    c.check_rules().map_err(|e| e.to_string())?;
    Ok(c)
}

fn figures(f: &Figures) -> FiguresVm {
    FiguresVm {
        peak_reserved: f.peak_reserved,
        peak_allocated: f.peak_allocated,
        final_reserved: f.final_reserved,
        final_allocated: f.final_allocated,
        ooms: f.ooms,
        segment_allocs: f.segment_allocs,
    }
}

pub fn whatif_view(
    snap: &Snapshot,
    cache: &mut Analyses,
    req: &WhatIfRequest,
) -> Result<WhatIfView, String> {
    let device = req.device;
    if cache.is_host(device) {
        return Err(HOST_NOT_REPLAYED.to_string());
    }
    let dc = device_config(snap, device).map_err(|e| e.to_string())?;
    let base = dc.config;
    let changed_cfg = changed_config(&base, req)?;
    // From the reconstructed state at the first entry, or from an empty device when that state
    // cannot be seeded into the model.
    let (original, start) = match what_if(
        snap,
        device,
        base.clone(),
        Start::Reconstructed,
        req.capacity,
    ) {
        Ok(w) => (w, Start::Reconstructed),
        Err(_) => (
            what_if(snap, device, base.clone(), Start::Clean, req.capacity)
                .map_err(|e| e.to_string())?,
            Start::Clean,
        ),
    };
    let changed = what_if(snap, device, changed_cfg.clone(), start, req.capacity)
        .map_err(|e| e.to_string())?;
    let tl = cache.timeline(snap, device);
    let summary = tl.summary();
    let trace = snap.trace(trace_index(device));
    let count = |f: fn(&Action) -> bool| trace.iter().filter(|e| f(&e.action())).count() as u64;
    let recorded = FiguresVm {
        peak_reserved: summary.peak_reserved,
        peak_allocated: summary.peak_allocated,
        final_reserved: summary.end_reserved,
        final_allocated: summary.end_allocated,
        ooms: count(|a| *a == Action::Oom),
        segment_allocs: count(|a| matches!(a, Action::SegmentAlloc | Action::SegmentMap)),
    };
    let plan = (!tl.is_empty()).then(|| {
        let p = plan(&tl.allocations, PlanSizes::Block);
        PlanVm {
            peak_live_requested: p.peak_live_requested,
            peak_live_block: p.peak_live_block,
            arena_size: p.arena_size,
        }
    });
    Ok(WhatIfView {
        device,
        allocator: dc.choice.describe(),
        conf_var: base.rules.conf_var().to_string(),
        original_settings: base.to_conf_string(),
        changed_settings: changed_cfg.to_conf_string(),
        recorded,
        original: figures(&original.figures),
        changed: figures(&changed.figures),
        start: start.as_str().to_string(),
        requests: changed.requests,
        failed_requests: changed.failed_requests,
        plan,
    })
}

/// The form's starting values: the file's settings (`to_conf_string`'s divisions text).
pub fn form_defaults(base: &Config, device: i64, capacity: Option<u64>) -> WhatIfRequest {
    let conf = base.to_conf_string();
    let divisions = conf
        .find("roundup_power2_divisions:")
        .map(|i| {
            let rest = &conf[i + "roundup_power2_divisions:".len()..];
            let end = if rest.starts_with('[') {
                rest.find(']').map_or(rest.len(), |j| j + 1)
            } else {
                rest.find(',').unwrap_or(rest.len())
            };
            rest[..end].to_string()
        })
        .unwrap_or_default();
    WhatIfRequest {
        device,
        expandable_segments: base.expandable_segments,
        max_split_size_mb: base
            .max_split_size_limited()
            .then_some(base.max_split_size >> 20),
        roundup_power2_divisions: divisions,
        garbage_collection_threshold: (base.garbage_collection_threshold > 0.0)
            .then_some(base.garbage_collection_threshold),
        capacity,
    }
}
