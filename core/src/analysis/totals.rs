//! Per-device byte totals at dump time: what `memory_reserved()`, `memory_allocated()` and the
//! largest cached hole would have said. The viewer's diagnostics numbers come from here.

use crate::snapshot::{BlockState, Snapshot};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceTotals {
    pub segments: u64,
    pub blocks: u64,
    /// Sum of segment `total_size`.
    pub reserved: u64,
    /// Sum of `active_allocated` block sizes.
    pub allocated: u64,
    /// Sum of `active_pending_free` block sizes (freed, waiting on other streams' events).
    pub pending_free: u64,
    /// Sum of `inactive` block sizes: cached, reusable only by requests that fit.
    pub inactive: u64,
    /// Largest single `inactive` block: the biggest request the cache could serve unsplit.
    pub largest_free: u64,
}

/// Totals over the segments of `device` (a segment without a `device` key is device 0).
pub fn device_totals(snapshot: &Snapshot, device: i64) -> DeviceTotals {
    let mut t = DeviceTotals::default();
    for seg in snapshot
        .segments
        .iter()
        .filter(|s| s.device.unwrap_or(0) == device)
    {
        t.segments += 1;
        t.reserved += seg.total_size;
        for b in &seg.blocks {
            t.blocks += 1;
            match b.state {
                BlockState::ActiveAllocated => t.allocated += b.size,
                BlockState::ActivePendingFree => t.pending_free += b.size,
                BlockState::Inactive => {
                    t.inactive += b.size;
                    t.largest_free = t.largest_free.max(b.size);
                }
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{Block, Segment};

    fn block(size: u64, state: BlockState) -> Block {
        Block {
            address: None,
            size,
            requested_size: None,
            state,
            frames: None,
            history: None,
            extra: Vec::new(),
        }
    }

    fn segment(device: Option<i64>, blocks: Vec<Block>) -> Segment {
        Segment {
            device,
            total_size: blocks.iter().map(|b| b.size).sum(),
            blocks,
            ..Segment::default()
        }
    }

    #[test]
    fn sums_per_device_and_keeps_largest_hole() {
        let s = Snapshot {
            segments: vec![
                segment(
                    None,
                    vec![
                        block(512, BlockState::ActiveAllocated),
                        block(4096, BlockState::Inactive),
                        block(1024, BlockState::ActivePendingFree),
                    ],
                ),
                segment(
                    Some(0),
                    vec![
                        block(2048, BlockState::Inactive),
                        block(8192, BlockState::ActiveAllocated),
                    ],
                ),
                segment(Some(1), vec![block(1 << 30, BlockState::Inactive)]),
            ],
            ..Snapshot::default()
        };
        let d0 = device_totals(&s, 0);
        assert_eq!(d0.segments, 2);
        assert_eq!(d0.blocks, 5);
        assert_eq!(d0.reserved, 512 + 4096 + 1024 + 2048 + 8192);
        assert_eq!(d0.allocated, 512 + 8192);
        assert_eq!(d0.pending_free, 1024);
        assert_eq!(d0.inactive, 4096 + 2048);
        assert_eq!(d0.largest_free, 4096);
        let d1 = device_totals(&s, 1);
        assert_eq!(
            (d1.segments, d1.largest_free, d1.allocated),
            (1, 1 << 30, 0)
        );
        assert_eq!(device_totals(&s, 7), DeviceTotals::default());
    }
}
