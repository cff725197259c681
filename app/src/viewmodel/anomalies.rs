//! Anomalies inside an entry range (`analysis::anomalies`): pending record_stream frees, leak
//! suspects, OOM entries with the device's free memory then.

use memsnap_core::analysis::anomalies::Anomalies;
use memsnap_core::snapshot::Snapshot;

use super::cache::Analyses;
use super::stack::label;
use crate::protocol::analysis::{AnomaliesView, AnomalyRow, EntryRange, OomRow};

/// Rows sent per list (the counts and byte totals cover all of them).
const MAX_ROWS: usize = 50;

pub fn anomalies_view(
    snap: &Snapshot,
    cache: &mut Analyses,
    device: i64,
    range: EntryRange,
) -> AnomaliesView {
    let all = cache.anomalies(snap, device);
    anomalies_in(snap, &all, device, range)
}

/// The rows of `all` (a device's anomalies over its whole trace) inside `range`.
pub fn anomalies_in(
    snap: &Snapshot,
    all: &Anomalies,
    device: i64,
    range: EntryRange,
) -> AnomaliesView {
    let inside = |i: usize| range.contains(i as u64);
    // A dump block pending since before the trace has no entry: it belongs to every range.
    let pending: Vec<_> = all
        .pending_frees
        .iter()
        .filter(|p| p.free_requested.is_none_or(inside))
        .collect();
    let leaks: Vec<_> = all
        .leak_suspects
        .iter()
        .filter(|l| inside(l.alloc_index))
        .collect();
    AnomaliesView {
        device,
        pending_count: pending.len() as u64,
        pending_bytes: pending.iter().map(|p| p.size).sum(),
        pending: pending
            .iter()
            .take(MAX_ROWS)
            .map(|p| AnomalyRow {
                addr: p.addr,
                size: p.size,
                index: p.free_requested.map(|i| i as u64),
                age: None,
                stream: p.stream,
                label: label(snap, p.stack),
                stack: p.stack.map(|s| s.0),
            })
            .collect(),
        leak_count: leaks.len() as u64,
        leak_bytes: leaks.iter().map(|l| l.size).sum(),
        leaks: leaks
            .iter()
            .take(MAX_ROWS)
            .map(|l| AnomalyRow {
                addr: l.addr,
                size: l.size,
                index: Some(l.alloc_index as u64),
                age: Some(l.age_entries as u64),
                stream: None,
                label: label(snap, l.stack),
                stack: l.stack.map(|s| s.0),
            })
            .collect(),
        ooms: all
            .ooms
            .iter()
            .filter(|o| inside(o.index))
            .map(|o| OomRow {
                index: o.index as u64,
                time_us: o.time_us,
                requested: o.requested,
                device_free: o.device_free,
                allocated: o.allocated,
                reserved: o.reserved,
                label: label(snap, o.stack),
                stack: o.stack.map(|s| s.0),
            })
            .collect(),
    }
}
