//! The planned lower bound: what the trace would need if every allocation's lifetime were known
//! in advance, as a static planner (XLA's, TFLite's) knows it.
//!
//! - Peak live bytes: the most bytes live at once (no allocator can do better).
//! - An offline assignment of every allocation to one arena: sorted by size descending, each
//!   placed at the lowest offset not overlapping, in address, the placed allocations whose
//!   lifetimes overlap its own. The arena size is what that plan reserves.
//!
//! Conflicts are found through an interval index over lifetimes (see `LifetimeIndex`), so a
//! placement reads exactly the placed allocations that overlap it in time, not all placed ones.

use std::collections::BTreeMap;

use super::intervals::Allocations;
use super::sizes::MIN_BLOCK_SIZE;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PlanSizes {
    /// Requested bytes aligned up to 512 B.
    Requested,
    /// The block sizes PyTorch's allocator used (rounded).
    Block,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Plan {
    pub sizes: PlanSizes,
    /// Sum of requested sizes of live allocations, maximum over the trace.
    pub peak_live_requested: u64,
    /// Sum of block sizes of live allocations, maximum over the trace.
    pub peak_live_block: u64,
    /// Peak live bytes in the planned sizes (the arena can be no smaller).
    pub peak_live_planned: u64,
    pub arena_size: u64,
    /// Offset of each allocation in `Allocations::list` order (`None`: never live).
    pub offsets: Vec<Option<u64>>,
    pub planned: usize,
}

fn planned_size(size: u64, requested: u64, sizes: PlanSizes) -> u64 {
    match sizes {
        PlanSizes::Block => size,
        PlanSizes::Requested => requested.max(1).div_ceil(MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE,
    }
}

fn peak_of(allocs: &Allocations, size: impl Fn(usize) -> u64) -> u64 {
    let n = allocs.trace_len;
    let mut diff = vec![0i128; n + 1];
    for (k, a) in allocs.list.iter().enumerate() {
        if a.start < a.end {
            diff[a.start] += size(k) as i128;
            diff[a.end.min(n)] -= size(k) as i128;
        }
    }
    let (mut cur, mut peak) = (0i128, 0i128);
    for d in diff.iter().take(n) {
        cur += d;
        peak = peak.max(cur);
    }
    peak as u64
}

/// Placed allocations indexed by lifetime, answering "which overlap [s, e)?" in
/// O(log n + answers) without duplicates: those that contain `s` (a stabbing query on a segment
/// tree where each lifetime is stored at the O(log n) nodes it covers, so a point meets it once)
/// plus those that start inside (s, e) (an ordered map by start).
struct LifetimeIndex {
    size: usize,
    covering: Vec<Vec<u32>>,
    by_start: BTreeMap<usize, Vec<u32>>,
}

impl LifetimeIndex {
    fn new(points: usize) -> LifetimeIndex {
        let size = points.max(1).next_power_of_two();
        LifetimeIndex {
            size,
            covering: vec![Vec::new(); 2 * size],
            by_start: BTreeMap::new(),
        }
    }

    fn insert(&mut self, s: usize, e: usize, id: u32) {
        self.by_start.entry(s).or_default().push(id);
        // Iterative canonical decomposition of [s, e) over the leaves.
        let (mut l, mut r) = (s + self.size, e + self.size);
        while l < r {
            if l & 1 == 1 {
                self.covering[l].push(id);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                self.covering[r].push(id);
            }
            l >>= 1;
            r >>= 1;
        }
    }

    fn overlapping(&self, s: usize, e: usize, f: &mut impl FnMut(u32)) {
        let mut node = s + self.size;
        while node >= 1 {
            for &id in &self.covering[node] {
                f(id);
            }
            node >>= 1;
        }
        for ids in self.by_start.range(s + 1..e).map(|(_, v)| v) {
            for &id in ids {
                f(id);
            }
        }
    }
}

pub fn plan(allocs: &Allocations, sizes: PlanSizes) -> Plan {
    let list = &allocs.list;
    let sz: Vec<u64> = list
        .iter()
        .map(|a| planned_size(a.size, a.requested, sizes))
        .collect();
    let peak_live_requested = peak_of(allocs, |k| list[k].requested);
    let peak_live_block = peak_of(allocs, |k| list[k].size);
    let peak_live_planned = peak_of(allocs, |k| sz[k]);

    let mut order: Vec<usize> = (0..list.len())
        .filter(|&k| list[k].start < list[k].end)
        .collect();
    order.sort_by(|&x, &y| {
        sz[y]
            .cmp(&sz[x])
            .then(list[x].start.cmp(&list[y].start))
            .then(x.cmp(&y))
    });
    // Allocations live over the whole trace (weights, pre-trace buffers) overlap everything:
    // they go first, packed at the bottom, and leave the index, which keeps every later
    // placement's candidate list to the allocations that really come and go.
    let first = order.iter().map(|&k| list[k].start).min().unwrap_or(0);
    let last = order.iter().map(|&k| list[k].end).max().unwrap_or(0);
    let (permanent, order): (Vec<usize>, Vec<usize>) = order
        .into_iter()
        .partition(|&k| list[k].start <= first && list[k].end >= last);
    let mut offsets: Vec<Option<u64>> = vec![None; list.len()];
    let mut base = 0u64;
    for &k in &permanent {
        offsets[k] = Some(base);
        base += sz[k];
    }
    // Compress the entry axis to the starts and ends that occur.
    let mut points: Vec<usize> = order
        .iter()
        .flat_map(|&k| [list[k].start, list[k].end])
        .collect();
    points.sort_unstable();
    points.dedup();
    let rank = |i: usize| points.partition_point(|&p| p < i);
    let mut index = LifetimeIndex::new(points.len());
    let mut cand: Vec<(u64, u64)> = Vec::new();
    let mut arena = base;
    for &k in &order {
        let (s, e) = (rank(list[k].start), rank(list[k].end));
        cand.clear();
        index.overlapping(s, e, &mut |j| {
            let j = j as usize;
            cand.push((offsets[j].unwrap_or(base), sz[j]));
        });
        cand.sort_unstable();
        let mut at = base;
        for &(o, l) in &cand {
            if o >= at + sz[k] {
                break;
            }
            at = at.max(o + l);
        }
        offsets[k] = Some(at);
        arena = arena.max(at + sz[k]);
        index.insert(s, e, k as u32);
    }
    Plan {
        sizes,
        peak_live_requested,
        peak_live_block,
        peak_live_planned,
        arena_size: arena,
        offsets,
        planned: permanent.len() + order.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::intervals::Allocation;
    use crate::analysis::testutil::lifetime as al;

    fn check(a: &Allocations, p: &Plan) {
        let sizes: Vec<u64> = a
            .list
            .iter()
            .map(|x| planned_size(x.size, x.requested, p.sizes))
            .collect();
        for i in 0..a.list.len() {
            for j in i + 1..a.list.len() {
                let (x, y) = (&a.list[i], &a.list[j]);
                let (Some(ox), Some(oy)) = (p.offsets[i], p.offsets[j]) else {
                    continue;
                };
                let time = x.start < y.end && y.start < x.end;
                let space = ox < oy + sizes[j] && oy < ox + sizes[i];
                assert!(!(time && space), "{i} and {j} collide");
            }
        }
        assert!(p.arena_size >= p.peak_live_planned);
    }

    #[test]
    fn known_plan() {
        // A [0,4) 4 KiB, B [1,3) 2 KiB, C [3,6) 2 KiB, D [4,6) 4 KiB.
        let a = Allocations {
            list: vec![
                al(0, 4, 4096),
                al(1, 3, 2048),
                al(3, 6, 2048),
                al(4, 6, 4096),
            ],
            trace_len: 6,
            ..Allocations::default()
        };
        let p = plan(&a, PlanSizes::Block);
        check(&a, &p);
        assert_eq!(p.peak_live_block, 6144);
        // Sizes descending: A at 0, D at 0 (A freed at 4), B at 4096, C at 4096.
        assert_eq!(p.offsets, vec![Some(0), Some(4096), Some(4096), Some(0)]);
        assert_eq!(p.arena_size, 6144);
    }

    #[test]
    fn random_plans_are_valid() {
        // A deterministic pseudo-random mix of short and long lifetimes.
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let n = 600;
        let list: Vec<Allocation> = (0..n)
            .map(|i| {
                let life = if next() % 10 == 0 {
                    1 + next() % 2000
                } else {
                    1 + next() % 20
                };
                al(
                    i * 3,
                    (i * 3 + life as usize).min(n * 3),
                    512 * (1 + next() % 64),
                )
            })
            .collect();
        let a = Allocations {
            list,
            trace_len: n * 3,
            ..Allocations::default()
        };
        for sizes in [PlanSizes::Block, PlanSizes::Requested] {
            let p = plan(&a, sizes);
            assert_eq!(p.planned, n);
            check(&a, &p);
        }
    }
}
