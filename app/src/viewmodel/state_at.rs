//! The segments at any trace entry (`analysis::state_at`), shaped like the dump's segment view.

use memsnap_core::snapshot::Snapshot;

use super::cache::{trace_index, Analyses};
use super::segments::segments_view_of;
use super::timeline::to_usize;
use crate::protocol::analysis::StateAtView;

/// Segments before entry `index` (after the first `index` entries; the trace length is the dump).
pub fn state_at_view(
    snap: &Snapshot,
    cache: &mut Analyses,
    device: i64,
    index: u64,
) -> StateAtView {
    let history = cache.history(snap, device);
    let entries = history.len() as u64;
    let index = index.min(entries);
    let segments = history.state_before(to_usize(index));
    let trace = snap.trace(trace_index(device));
    let time_us = index
        .checked_sub(1)
        .and_then(|i| trace.get(to_usize(i)))
        .and_then(|e| e.time_us());
    let first_time_us = trace.first().and_then(|e| e.time_us());
    StateAtView {
        index,
        entries,
        time_us,
        first_time_us,
        segments: segments_view_of(snap, &segments, device),
    }
}
