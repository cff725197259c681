//! Fragmentation at dump time, per segment and per device: what is reserved, allocated, active
//! and free, the largest hole, the waste inside active blocks, and whether a request would fit.

use super::intervals::device_segments;
use super::sizes::{Rounding, SMALL_SIZE};
use crate::snapshot::{BlockState, Segment, SegmentType, Snapshot};

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SegmentFragmentation {
    pub address: u64,
    pub stream: Option<i64>,
    /// `small`/`large` as written, or guessed from the size (<= 2 MiB is small) when absent.
    pub small: bool,
    pub expandable: bool,
    pub reserved: u64,
    /// `active_allocated` blocks.
    pub allocated: u64,
    /// `active_allocated` + `active_pending_free` blocks.
    pub active: u64,
    /// `inactive` blocks.
    pub free: u64,
    /// Largest run of adjacent inactive blocks.
    pub largest_free: u64,
    /// Size − requested size, over active blocks that record a requested size.
    pub internal_waste: u64,
    pub active_blocks: usize,
    pub free_blocks: usize,
    /// 1 − largest_free / free (0 when nothing is free).
    pub ratio: f64,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceFragmentation {
    pub device: usize,
    pub segments: Vec<SegmentFragmentation>,
    pub reserved: u64,
    pub allocated: u64,
    pub active: u64,
    pub free: u64,
    pub largest_free: u64,
    pub internal_waste: u64,
    pub reserved_minus_allocated: u64,
    /// Segments with no active block: what `empty_cache()` would release.
    pub releasable: u64,
    pub releasable_segments: usize,
    /// Segments with some free space.
    pub segments_with_free: usize,
    /// 1 − largest_free / free across all segments: how scattered the free bytes are.
    pub ratio: f64,
}

/// Where a request of some size could be served from the cache without a new segment.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Fit {
    pub request: u64,
    pub rounded: u64,
    /// Segment address and free block size of the best fit (smallest hole that is big enough).
    pub best: Option<(u64, u64)>,
    /// Free bytes of the request's pool: when this is enough but `best` is None, the request
    /// fails only because the holes are scattered.
    pub pool_free: u64,
}

fn ratio(largest: u64, free: u64) -> f64 {
    if free == 0 {
        0.0
    } else {
        1.0 - largest as f64 / free as f64
    }
}

fn is_small(seg: &Segment) -> bool {
    match seg.segment_type {
        Some(t) => t == SegmentType::Small,
        None => seg.total_size <= 2 * SMALL_SIZE,
    }
}

/// Free runs of a segment (adjacent inactive blocks merged), as sizes.
fn free_runs(seg: &Segment) -> Vec<u64> {
    let mut runs = Vec::new();
    let mut cur = 0;
    for b in &seg.blocks {
        if b.state == BlockState::Inactive {
            cur += b.size;
        } else if cur > 0 {
            runs.push(cur);
            cur = 0;
        }
    }
    if cur > 0 {
        runs.push(cur);
    }
    runs
}

pub fn segment_fragmentation(seg: &Segment) -> SegmentFragmentation {
    let mut f = SegmentFragmentation {
        address: seg.address,
        stream: seg.stream,
        small: is_small(seg),
        expandable: seg.is_expandable.unwrap_or(false),
        reserved: seg.total_size,
        allocated: 0,
        active: 0,
        free: 0,
        largest_free: free_runs(seg).into_iter().max().unwrap_or(0),
        internal_waste: 0,
        active_blocks: 0,
        free_blocks: 0,
        ratio: 0.0,
    };
    for b in &seg.blocks {
        match b.state {
            BlockState::Inactive => {
                f.free += b.size;
                f.free_blocks += 1;
            }
            s => {
                if s == BlockState::ActiveAllocated {
                    f.allocated += b.size;
                }
                f.active += b.size;
                f.active_blocks += 1;
                if let Some(r) = b.requested_size {
                    f.internal_waste += b.size.saturating_sub(r);
                }
            }
        }
    }
    f.ratio = ratio(f.largest_free, f.free);
    f
}

pub fn fragmentation(snap: &Snapshot, device: usize) -> DeviceFragmentation {
    let segments: Vec<SegmentFragmentation> = device_segments(snap, device)
        .map(segment_fragmentation)
        .collect();
    let mut d = DeviceFragmentation {
        device,
        reserved: 0,
        allocated: 0,
        active: 0,
        free: 0,
        largest_free: 0,
        internal_waste: 0,
        reserved_minus_allocated: 0,
        releasable: 0,
        releasable_segments: 0,
        segments_with_free: 0,
        ratio: 0.0,
        segments: Vec::new(),
    };
    for s in &segments {
        d.reserved += s.reserved;
        d.allocated += s.allocated;
        d.active += s.active;
        d.free += s.free;
        d.largest_free = d.largest_free.max(s.largest_free);
        d.internal_waste += s.internal_waste;
        if s.active_blocks == 0 {
            d.releasable += s.reserved;
            d.releasable_segments += 1;
        }
        if s.free > 0 {
            d.segments_with_free += 1;
        }
    }
    d.reserved_minus_allocated = d.reserved.saturating_sub(d.allocated);
    d.ratio = ratio(d.largest_free, d.free);
    d.segments = segments;
    d
}

/// Would a request of `bytes` be served from cached free blocks? Small requests (<= 1 MiB after
/// rounding) look only in small segments and large ones only in large segments, as the pools do;
/// streams are not distinguished (a request's stream is not known here).
pub fn fits(snap: &Snapshot, device: usize, bytes: u64) -> Fit {
    let rounded = Rounding::for_device(snap, device).round(bytes);
    let want_small = rounded <= SMALL_SIZE;
    let mut best: Option<(u64, u64)> = None;
    let mut pool_free = 0;
    for seg in device_segments(snap, device).filter(|s| is_small(s) == want_small) {
        for run in free_runs(seg) {
            pool_free += run;
            if run >= rounded && best.is_none_or(|(_, b)| run < b) {
                best = Some((seg.address, run));
            }
        }
    }
    Fit {
        request: bytes,
        rounded,
        best,
        pool_free,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::BlockState::*;

    fn snap() -> Snapshot {
        snapshot(
            vec![
                segment(
                    0x1000_0000,
                    &[
                        (4 * MB, Inactive, 0),
                        (2 * MB, ActiveAllocated, 2 * MB - 100),
                        (6 * MB, Inactive, 0),
                        (8 * MB, ActivePendingFree, 8 * MB),
                    ],
                ),
                segment(0x2000_0000, &[(20 * MB, Inactive, 0)]),
                segment(0x3000_0000, &[(MB, ActiveAllocated, MB), (MB, Inactive, 0)]),
            ],
            vec![],
        )
    }

    #[test]
    fn per_segment_and_device() {
        let d = fragmentation(&snap(), 0);
        let s0 = &d.segments[0];
        assert_eq!(
            (s0.reserved, s0.allocated, s0.active, s0.free),
            (20 * MB, 2 * MB, 10 * MB, 10 * MB)
        );
        assert_eq!(s0.largest_free, 6 * MB);
        assert_eq!(s0.internal_waste, 100);
        assert!((s0.ratio - 0.4).abs() < 1e-12);
        assert_eq!(d.reserved, 42 * MB);
        assert_eq!(d.allocated, 3 * MB);
        assert_eq!(d.free, 31 * MB);
        assert_eq!(d.largest_free, 20 * MB);
        assert_eq!(d.reserved_minus_allocated, 39 * MB);
        assert_eq!((d.releasable, d.releasable_segments), (20 * MB, 1));
        assert_eq!(d.segments_with_free, 3);
        assert!(d.segments[2].small);
        assert!((d.ratio - (1.0 - 20.0 / 31.0)).abs() < 1e-12);
    }

    #[test]
    fn fit_helper() {
        let s = snap();
        let f = fits(&s, 0, 5 * MB);
        assert_eq!(f.best, Some((0x1000_0000, 6 * MB)));
        assert_eq!(f.pool_free, 30 * MB);
        assert_eq!(fits(&s, 0, 21 * MB).best, None);
        // Small requests only look in small segments.
        assert_eq!(fits(&s, 0, 1000).best, Some((0x3000_0000, MB)));
        assert_eq!(fits(&s, 0, 1000).rounded, 1024);
    }
}
