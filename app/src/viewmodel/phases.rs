//! The phases of a device for the page's phase band and table: core's matching and figures
//! (`analysis::phases`, as `memsnap phases` prints them) over the timeline the worker keeps.

use memsnap_core::analysis::phases::{phases, PhaseFigures};
use memsnap_core::snapshot::Snapshot;

use super::cache::Analyses;
use crate::protocol::analysis::{PhaseRow, PhasesView};

pub fn phases_view(snap: &Snapshot, cache: &mut Analyses, device: i64) -> PhasesView {
    let mut view = PhasesView {
        device,
        none: None,
        rows: Vec::new(),
        warnings: Vec::new(),
        peak_phase: None,
    };
    let found = match usize::try_from(device) {
        Ok(d) if !cache.is_host(device) => phases(snap, d).map_err(|e| e.to_string()),
        // The program's marks are per CUDA device.
        _ => Err("no phases: the program's marks are per CUDA device, not for host memory".into()),
    };
    let found = match found {
        Ok(found) => found,
        Err(why) => {
            view.none = Some(why);
            return view;
        }
    };
    let tl = cache.timeline(snap, device);
    view.peak_phase = tl
        .peak_index()
        .and_then(|i| found.innermost_at(i))
        .map(|i| i as u32);
    view.warnings = found.warnings();
    let figures = PhaseFigures::new(snap, tl);
    view.rows = found
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| PhaseRow {
            phase: p.clone(),
            path: found.path(i),
            stats: figures.of(p),
        })
        .collect();
    view
}
