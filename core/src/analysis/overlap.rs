//! Allocations live inside an entry range, found without scanning them all. The list is ordered
//! by `start`, so those starting at or after the range's end are cut off by a binary search; of
//! those starting before it, a chunk whose latest `end` is at or before the range's start holds
//! none and is skipped. Most allocations of a long trace are short-lived, so a zoomed range
//! scans its own allocations and the few chunks that hold a long-lived one. The timeline's
//! views ask this at every zoom and pan step: a scan of all 500k allocations of a 1M-entry trace
//! was a third of a step's worker time (perf, `min_bytes_for_count` and `bands::layout`).

use super::intervals::Allocation;

/// Allocations per chunk.
const CHUNK: usize = 256;

#[derive(Debug, Clone, Default)]
pub struct OverlapIndex {
    /// The latest `end` in each chunk of `CHUNK` allocations.
    chunk_max_end: Vec<usize>,
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
        }
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
    use proptest::prelude::*;

    fn alloc(start: usize, end: usize) -> Allocation {
        Allocation {
            addr: 0,
            requested: 1,
            size: 1,
            size_exact: true,
            new_segment: false,
            start,
            end,
            alloc_index: Some(start),
            free_requested: None,
            free_completed: None,
            stack: None,
            stream: None,
        }
    }

    proptest! {
        #[test]
        fn finds_what_a_full_scan_finds(
            mut spans in proptest::collection::vec((0usize..5000, 0usize..3000), 0..2000),
            a in 0usize..8000,
            len in 0usize..3000,
        ) {
            spans.sort_by_key(|s| s.0);
            let list: Vec<Allocation> = spans.iter().map(|&(s, l)| alloc(s, s + l)).collect();
            let b = a + len;
            let want: Vec<usize> = (0..list.len())
                .filter(|&k| list[k].start < list[k].end && list[k].start < b && list[k].end > a)
                .collect();
            let mut got = Vec::new();
            OverlapIndex::new(&list).for_each(&list, a, b, |k, _| got.push(k));
            prop_assert_eq!(got, want);
        }
    }
}
