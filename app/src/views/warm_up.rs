//! The page's share of the warm-up. V8 first runs wasm in its baseline tier, so the first
//! file's answers were decoded, turned into block rows and drawn by unoptimised code (a cold
//! page drew its first timeline in 15–40 ms, a later one in 4–5: scripts/profile_page.py).
//! Once the worker has warmed up it sends its answers on its warm-up input (`WarmedUp`); the
//! page runs the same code on them, once, off screen, while the user picks a file.

use std::cell::Cell;

use crate::analysis_protocol::TimelineView;
use crate::perf;
use crate::protocol::SegmentsView;

thread_local! {
    static DONE: Cell<bool> = const { Cell::new(false) };
}

/// Runs the first paint's page code on `segments` and `timeline`, the first time only (every
/// worker of a fleet sends its own).
pub fn warm_up(segments: &SegmentsView, timeline: &TimelineView) {
    if DONE.replace(true) {
        return;
    }
    let started = perf::now();
    super::segments::warm_up(segments);
    super::timeline::warm_up(timeline);
    perf::measure_since(perf::PAGE_WARM_UP, started);
}
