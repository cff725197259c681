//! One allocation of the timeline (a band): size, lifetime in entries and time, and its stack.

use memsnap_core::snapshot::Snapshot;

use super::cache::Analyses;
use super::stack::stack_frames;
use crate::protocol::analysis::AllocationView;

pub fn allocation_view(
    snap: &Snapshot,
    cache: &mut Analyses,
    device: i64,
    alloc: u32,
) -> Result<AllocationView, String> {
    let tl = cache.timeline(snap, device);
    let a = tl
        .allocations
        .list
        .get(alloc as usize)
        .ok_or_else(|| format!("no allocation {alloc} on device {device}"))?;
    let n = tl.len();
    let time = |i: usize| tl.time_us.get(i).copied().flatten();
    Ok(AllocationView {
        alloc,
        addr: a.addr,
        size: a.size,
        requested: a.requested,
        start: a.start as u64,
        end: a.end as u64,
        allocated_in_trace: a.alloc_index.is_some(),
        freed_in_trace: a.end < n,
        start_time_us: a.alloc_index.and_then(time),
        end_time_us: (a.end < n).then(|| time(a.end)).flatten(),
        stream: a.stream,
        frames: a
            .stack
            .and_then(|s| stack_frames(snap, s.0))
            .unwrap_or_default(),
    })
}
