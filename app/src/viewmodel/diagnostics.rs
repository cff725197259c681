use memsnap_core::analysis::totals::device_totals;
use memsnap_core::snapshot::Snapshot;

use crate::protocol::DiagnosticsView;

pub fn diagnostics_view(snapshot: &Snapshot, device: i64) -> DiagnosticsView {
    let t = device_totals(snapshot, device);
    DiagnosticsView {
        device,
        segments: t.segments,
        blocks: t.blocks,
        reserved: t.reserved,
        allocated: t.allocated,
        pending_free: t.pending_free,
        inactive: t.inactive,
        largest_free: t.largest_free,
    }
}
