//! Memory pools at dump time. Segments whose `segment_pool_id` is not (0, 0) belong to a private
//! pool (a CUDA graph's, or a `torch.cuda.MemPool`): their free space serves only allocations
//! made into that pool, and ordinary allocations never land in them. `memsnap stats` and the
//! page's diagnostics list reserved / allocated / free per device and pool from here.

use std::collections::BTreeMap;

use crate::snapshot::{BlockState, Segment, Snapshot};

/// The default pools' id (`segment_pool_id` absent or (0, 0)).
pub const DEFAULT_POOL: (i64, i64) = (0, 0);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PoolTotals {
    pub device: i64,
    /// `segment_pool_id`; (0, 0) for the default pools.
    pub pool_id: (i64, i64),
    pub segments: u64,
    /// Sum of segment `total_size`.
    pub reserved_bytes: u64,
    /// Sum of `active_allocated` block sizes.
    pub allocated_bytes: u64,
    /// Sum of `inactive` block sizes, and the largest of them.
    pub free_bytes: u64,
    pub largest_free_bytes: u64,
}

/// A segment's pool id ((0, 0) when the file does not say).
pub fn pool_of(seg: &Segment) -> (i64, i64) {
    seg.segment_pool_id.unwrap_or(DEFAULT_POOL)
}

pub fn is_private(pool: (i64, i64)) -> bool {
    pool != DEFAULT_POOL
}

/// What a free block in a segment of this pool can serve, in words.
pub fn serves(pool: (i64, i64)) -> String {
    if is_private(pool) {
        format!(
            "only allocations into private pool ({}, {}) (a CUDA graph or MemPool): not ordinary ones",
            pool.0, pool.1
        )
    } else {
        "ordinary allocations on its segment's stream".to_string()
    }
}

/// Totals per (device, pool), ascending by device then pool id.
pub fn pool_totals(snapshot: &Snapshot) -> Vec<PoolTotals> {
    let mut by: BTreeMap<(i64, (i64, i64)), PoolTotals> = BTreeMap::new();
    for seg in &snapshot.segments {
        let device = seg.device.unwrap_or(0);
        let pool_id = pool_of(seg);
        let t = by.entry((device, pool_id)).or_insert(PoolTotals {
            device,
            pool_id,
            ..PoolTotals::default()
        });
        t.segments += 1;
        t.reserved_bytes += seg.total_size;
        for b in &seg.blocks {
            match b.state {
                BlockState::ActiveAllocated => t.allocated_bytes += b.size,
                BlockState::Inactive => {
                    t.free_bytes += b.size;
                    t.largest_free_bytes = t.largest_free_bytes.max(b.size);
                }
                BlockState::ActivePendingFree => {}
            }
        }
    }
    by.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::BlockState::*;

    #[test]
    fn totals_per_device_and_pool() {
        let mut graph = segment(
            0x2000,
            &[(4 * MB, ActiveAllocated, MB), (2 * MB, Inactive, 0)],
        );
        graph.segment_pool_id = Some((1, 3));
        let mut other = segment(0x9000, &[(8 * MB, Inactive, 0)]);
        other.device = Some(1);
        other.segment_pool_id = None;
        let s = snapshot(
            vec![
                segment(
                    0x1000,
                    &[(2 * MB, ActiveAllocated, MB), (6 * MB, Inactive, 0)],
                ),
                graph,
                other,
            ],
            vec![],
        );
        let t = pool_totals(&s);
        let rows: Vec<_> = t
            .iter()
            .map(|p| {
                (
                    p.device,
                    p.pool_id,
                    p.segments,
                    p.reserved_bytes,
                    p.allocated_bytes,
                    p.largest_free_bytes,
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                (0, (0, 0), 1, 8 * MB, 2 * MB, 6 * MB),
                (0, (1, 3), 1, 6 * MB, 4 * MB, 2 * MB),
                (1, (0, 0), 1, 8 * MB, 0, 8 * MB),
            ]
        );
        assert!(serves((1, 3)).contains("not ordinary"));
    }
}
