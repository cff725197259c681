//! Allocations live inside an entry range, found without scanning them all. The list is ordered
//! by `start`, so those starting at or after the range's end are cut off by a binary search; of
//! those starting before it, a chunk whose latest `end` is at or before the range's start holds
//! none and is skipped. Most allocations of a long trace are short-lived, so a zoomed range
//! scans its own allocations and the few chunks that hold a long-lived one. The timeline's
//! views ask this at every zoom and pan step: a scan of all 500k allocations of a 1M-entry trace
//! was a third of a step's worker time (perf, `min_bytes_for_count` and `bands::layout`).
//!
//! A wide range holds most allocations, so that scan still reads them all; but the views want
//! only the largest ones there (the bands). A second order, by size, answers "the largest live
//! in this range" by reading from the largest down and passing over those live elsewhere; when
//! too many are passed over (a narrow range), the scan by start is the cheaper one and is used.
//! At the whole range of a 1M-entry trace the two scans were 40% of a zoom step (perf).

use std::sync::OnceLock;

use super::intervals::Allocation;

/// How many allocations live outside a range the size order may pass over before the scan
/// by start is the cheaper way to find `wanted` of them: both read a few words per allocation,
/// and the scan by start reads every allocation of the range, which a narrow range makes few.
pub fn passed_budget(wanted: usize) -> usize {
    wanted.saturating_mul(16).max(4096)
}

/// Allocations per chunk.
const CHUNK: usize = 256;

#[derive(Debug, Clone, Default)]
pub struct OverlapIndex {
    /// The latest `end` in each chunk of `CHUNK` allocations.
    chunk_max_end: Vec<usize>,
    /// The non-empty allocations, largest first (ties in list order); made at the first
    /// question that needs it, so readers that never draw a timeline do not sort.
    by_size: OnceLock<Vec<BySize>>,
}

/// An allocation in the size order: what the order's scan reads, packed (no `list` lookups).
#[derive(Debug, Clone, Copy)]
struct BySize {
    size: u64,
    start: usize,
    end: usize,
    index: usize,
}

impl OverlapIndex {
    /// `list` must be ordered by `start` (as `intervals::allocations` makes it).
    pub fn new(list: &[Allocation]) -> OverlapIndex {
        debug_assert!(list.windows(2).all(|w| w[0].start <= w[1].start));
        OverlapIndex {
            chunk_max_end: list
                .chunks(CHUNK)
                .map(|c| c.iter().map(|a| a.end).max().unwrap_or(0))
                .collect(),
            by_size: OnceLock::new(),
        }
    }

    fn by_size(&self, list: &[Allocation]) -> &[BySize] {
        self.by_size.get_or_init(|| {
            let mut v: Vec<BySize> = list
                .iter()
                .enumerate()
                .filter(|(_, al)| al.start < al.end)
                .map(|(index, al)| BySize {
                    size: al.size,
                    start: al.start,
                    end: al.end,
                    index,
                })
                .collect();
            // Stable: ties stay in list order (and it was a third faster here than unstable).
            v.sort_by_key(|e| std::cmp::Reverse(e.size));
            v
        })
    }

    /// Calls `f` with the index and size of the non-empty allocations live in `a..b`, largest
    /// first (ties in list order), until `f` returns false. Returns false, having stopped, when
    /// more than `budget` allocations live elsewhere were passed over first: the caller then
    /// discards what `f` saw and scans with [`Self::for_each`] instead.
    pub fn largest_first(
        &self,
        list: &[Allocation],
        a: usize,
        b: usize,
        budget: usize,
        mut f: impl FnMut(usize, u64) -> bool,
    ) -> bool {
        let mut passed = 0;
        for e in self.by_size(list) {
            if e.start < b && e.end > a {
                if !f(e.index, e.size) {
                    return true;
                }
            } else {
                passed += 1;
                if passed > budget {
                    return false;
                }
            }
        }
        true
    }

    /// Indices of the non-empty allocations live in `a..b` with `size >= min_size`, in list
    /// order: by the size order when the range holds most of them, else by a scan by start.
    pub fn live_at_least(
        &self,
        list: &[Allocation],
        a: usize,
        b: usize,
        min_size: u64,
        budget: usize,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        let done = self.largest_first(list, a, b, budget, |k, size| {
            if size < min_size {
                return false;
            }
            out.push(k);
            true
        });
        if done {
            out.sort_unstable();
        } else {
            out.clear();
            self.for_each(list, a, b, |k, al| {
                if al.size >= min_size {
                    out.push(k)
                }
            });
        }
        out
    }

    /// Calls `f` with the index and the allocation of each non-empty allocation of `list` (the
    /// list this index was made from) live somewhere in entries `a..b`: `start < b` and
    /// `end > a`. In list order.
    pub fn for_each<'l>(
        &self,
        list: &'l [Allocation],
        a: usize,
        b: usize,
        mut f: impl FnMut(usize, &'l Allocation),
    ) {
        let stop = list.partition_point(|al| al.start < b);
        for (c, &max_end) in self.chunk_max_end.iter().enumerate() {
            let lo = c * CHUNK;
            if lo >= stop {
                break;
            }
            if max_end <= a {
                continue;
            }
            for (k, al) in list.iter().enumerate().take(stop).skip(lo).take(CHUNK) {
                if al.start < al.end && al.end > a {
                    f(k, al);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::lifetimes;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn finds_what_a_full_scan_finds(
            list in lifetimes(5000, 3000, 1..2, 0..2000),
            a in 0usize..8000,
            len in 0usize..3000,
        ) {
            let b = a + len;
            let want: Vec<usize> = (0..list.len())
                .filter(|&k| list[k].start < list[k].end && list[k].start < b && list[k].end > a)
                .collect();
            let mut got = Vec::new();
            OverlapIndex::new(&list).for_each(&list, a, b, |k, _| got.push(k));
            prop_assert_eq!(got, want);
        }

        #[test]
        fn the_size_order_finds_what_a_full_scan_finds(
            list in lifetimes(5000, 3000, 0..40, 0..2000),
            a in 0usize..8000,
            len in 0usize..3000,
            min_size in 0u64..45,
            budget in prop_oneof![Just(0usize), 0usize..50, Just(usize::MAX)],
        ) {
            let b = a + len;
            let live = |k: usize| list[k].start < list[k].end && list[k].start < b && list[k].end > a;
            let want: Vec<usize> =
                (0..list.len()).filter(|&k| live(k) && list[k].size >= min_size).collect();
            let index = OverlapIndex::new(&list);
            prop_assert_eq!(index.live_at_least(&list, a, b, min_size, budget), want);

            // Largest first, ties in list order, stopping when told.
            let mut want: Vec<(usize, u64)> =
                (0..list.len()).filter(|&k| live(k)).map(|k| (k, list[k].size)).collect();
            want.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            want.truncate(7);
            let mut got = Vec::new();
            let done = index.largest_first(&list, a, b, usize::MAX, |k, size| {
                got.push((k, size));
                got.len() < 7
            });
            prop_assert!(done);
            prop_assert_eq!(got, want);
        }
    }
}
