//! What allocated memory is made of at one entry: the live allocations grouped by their top
//! user frame, the largest groups sent along with the totals.

use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::Snapshot;

use super::top_frames::{live_groups, TopFrames};
use crate::protocol::analysis::{GroupVm, PeakVm};

/// Groups of the peak's composition sent along (the rest are summed by the page as "other").
const PEAK_GROUPS: usize = 8;

/// What allocated memory is made of after entry `index` (`index` inside the trace).
pub fn peak_vm(snap: &Snapshot, tl: &Timeline, top: &TopFrames, index: usize) -> PeakVm {
    let (live, groups) = live_groups(snap, tl, top, index);
    let at = |v: &[u64]| v.get(index).copied().unwrap_or(0);
    PeakVm {
        index: index as u64,
        time_us: tl.time_us.get(index).copied().flatten(),
        allocated: at(tl.allocated.values()),
        reserved: at(tl.reserved.values()),
        live_allocations: live as u64,
        groups: groups
            .into_iter()
            .take(PEAK_GROUPS)
            .map(|g| GroupVm {
                label: g.label,
                bytes: g.bytes,
                count: g.count as u64,
            })
            .collect(),
    }
}
