//! Pinning blocks: a few small, long-lived active blocks that keep an otherwise free segment
//! reserved. `empty_cache()` releases only segments with no active block, and the segment's free
//! bytes serve only requests that fit its holes, so such a block costs its whole segment.

use std::collections::HashMap;

use super::intervals::{block_addresses, device_segments, nonempty, Allocation, Allocations};
use crate::snapshot::{BlockState, Snapshot, StackId};

/// A segment is "mostly free" at this inactive fraction or more.
pub const MIN_FREE_FRACTION: f64 = 0.5;
/// At most this many active blocks in a pinned segment.
pub const MAX_ACTIVE_BLOCKS: usize = 4;
/// A pinning block is at most this fraction of its segment.
pub const MAX_BLOCK_FRACTION: f64 = 0.25;

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PinningBlock {
    pub block_address: u64,
    pub block_size: u64,
    pub requested_size: Option<u64>,
    pub state_pending_free: bool,
    pub segment_address: u64,
    pub segment_size: u64,
    /// Free bytes of the segment kept reserved while the segment's active blocks live.
    pub pinned: u64,
    /// Active blocks in the segment (all of them must go before it can be released).
    pub segment_active_blocks: usize,
    pub stack: Option<StackId>,
    /// The `alloc` entry when the trace has it; `None` when allocated before the trace.
    pub alloc_index: Option<usize>,
    /// Entries since the allocation (the trace length when allocated before it).
    pub age_entries: Option<usize>,
}

pub fn pinning(snap: &Snapshot, device: usize, allocs: Option<&Allocations>) -> Vec<PinningBlock> {
    let mut out = Vec::new();
    // The allocation still open at the end at each address, built at the first block that
    // needs it: a search of the list per block took 51 ms at a million entries.
    let mut open_at_end: Option<HashMap<u64, &Allocation>> = None;
    for seg in device_segments(snap, device) {
        if seg.is_expandable.unwrap_or(false) || seg.total_size == 0 {
            // Expandable segments unmap free pages individually: nothing is pinned whole.
            continue;
        }
        let active: Vec<_> = seg
            .blocks
            .iter()
            .zip(block_addresses(seg))
            .filter(|(b, _)| b.state.is_active())
            .collect();
        let free: u64 = seg
            .blocks
            .iter()
            .filter(|b| b.state == BlockState::Inactive)
            .map(|b| b.size)
            .sum();
        if active.is_empty()
            || active.len() > MAX_ACTIVE_BLOCKS
            || (free as f64) < MIN_FREE_FRACTION * seg.total_size as f64
        {
            continue;
        }
        for (b, addr) in &active {
            if b.size as f64 > MAX_BLOCK_FRACTION * seg.total_size as f64 {
                continue;
            }
            let al = allocs.and_then(|a| {
                let open = open_at_end.get_or_insert_with(|| {
                    let mut m = HashMap::new();
                    for x in a.list.iter().filter(|x| x.end == a.trace_len) {
                        // The first in the list, as a search would find it.
                        m.entry(x.addr).or_insert(x);
                    }
                    m
                });
                open.get(addr).copied()
            });
            out.push(PinningBlock {
                block_address: *addr,
                block_size: b.size,
                requested_size: b.requested_size,
                state_pending_free: b.state == BlockState::ActivePendingFree,
                segment_address: seg.address,
                segment_size: seg.total_size,
                pinned: free,
                segment_active_blocks: active.len(),
                stack: nonempty(snap, b.frames).or(al.and_then(|x| x.stack)),
                alloc_index: al.and_then(|x| x.alloc_index),
                age_entries: allocs
                    .map(|a| a.trace_len - al.map_or(0, |x| x.start.min(a.trace_len))),
            });
        }
    }
    out.sort_by(|x, y| {
        y.pinned
            .cmp(&x.pinned)
            .then(x.block_size.cmp(&y.block_size))
            .then(x.block_address.cmp(&y.block_address))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::intervals::allocations;
    use crate::analysis::testutil::*;
    use crate::snapshot::Action;
    use crate::snapshot::BlockState::*;

    #[test]
    fn finds_and_ranks() {
        let segs = vec![
            // 1 MiB block pinning 19 MiB.
            segment(
                0x1000_0000,
                &[(MB, ActiveAllocated, MB), (19 * MB, Inactive, 0)],
            ),
            // Two small blocks pinning 36 MiB together.
            segment(
                0x2000_0000,
                &[
                    (18 * MB, Inactive, 0),
                    (2 * MB, ActiveAllocated, 2 * MB),
                    (18 * MB, Inactive, 0),
                    (2 * MB, ActivePendingFree, 2 * MB),
                ],
            ),
            // Mostly used: not pinned.
            segment(
                0x3000_0000,
                &[(15 * MB, ActiveAllocated, 15 * MB), (5 * MB, Inactive, 0)],
            ),
            // Big block with little free: not pinned either.
            segment(
                0x4000_0000,
                &[(8 * MB, ActiveAllocated, 8 * MB), (12 * MB, Inactive, 0)],
            ),
        ];
        let t = vec![
            entry(Action::Alloc, 0x9000, 512),
            entry(Action::Alloc, 0x1000_0000, MB),
        ];
        let snap = snapshot(segs, t);
        let al = allocations(&snap, 0);
        let p = pinning(&snap, 0, Some(&al));
        let got: Vec<(u64, u64, usize)> = p
            .iter()
            .map(|b| (b.block_address, b.pinned, b.segment_active_blocks))
            .collect();
        assert_eq!(
            got,
            vec![
                (0x2000_0000 + 18 * MB, 36 * MB, 2),
                (0x2000_0000 + 38 * MB, 36 * MB, 2),
                (0x1000_0000, 19 * MB, 1),
            ]
        );
        assert!(p[1].state_pending_free);
        assert_eq!(p[2].alloc_index, Some(1));
        assert_eq!(p[2].age_entries, Some(1));
        assert_eq!(p[0].alloc_index, None);
        assert_eq!(p[0].age_entries, Some(2));
    }
}
