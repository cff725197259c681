//! A time range of a trace (entry indices `start..end`), as the viewer's range filter sets it:
//! the peak inside it and how much of an allocation's lifetime falls inside it.

use super::intervals::Allocation;
use super::overlap::{passed_budget, OverlapIndex};
use super::timeline::Timeline;

/// `start..end` clamped to the trace (an empty trace gives `0..0`).
pub fn clamp(tl: &Timeline, start: usize, end: usize) -> (usize, usize) {
    let end = end.min(tl.len());
    (start.min(end), end)
}

/// First entry of `start..end` after which allocated bytes are highest.
pub fn peak_index_in(tl: &Timeline, start: usize, end: usize) -> Option<usize> {
    let (start, end) = clamp(tl, start, end);
    tl.allocated.first_max(start, end)
}

/// The band threshold that draws about the `count` largest allocations live inside
/// `start..end` (as MemoryViz.js draws only the largest ones): the size of the `count`-th
/// largest, never below `floor`. Smaller ones are summarised.
pub fn min_bytes_for_count(
    tl: &Timeline,
    start: usize,
    end: usize,
    count: usize,
    floor: u64,
) -> u64 {
    let (list, index) = (&tl.allocations.list, &tl.overlap);
    threshold(list, index, start, end, count, floor, passed_budget(count))
}

fn threshold(
    list: &[Allocation],
    index: &OverlapIndex,
    start: usize,
    end: usize,
    count: usize,
    floor: u64,
    budget: usize,
) -> u64 {
    if count == 0 {
        return u64::MAX;
    }
    // Largest first: at a wide range the `count`-th is found after about `count` reads. As
    // the scan by start below, a range with at most `count` allocations has no threshold.
    let (mut seen, mut kth, mut below_floor) = (0, 0, false);
    let fast = index.largest_first(list, start, end, budget, |_, size| {
        seen += 1;
        if seen > count {
            return false;
        }
        kth = size;
        // Then the `count`-th is below the floor too, or there is none: the floor it is.
        below_floor = size < floor;
        !below_floor
    });
    let kth = if fast {
        match seen {
            0 => u64::MAX,
            _ if below_floor || seen <= count => 0,
            _ => kth,
        }
    } else {
        let mut sizes: Vec<u64> = Vec::new();
        index.for_each(list, start, end, |_, a| sizes.push(a.size));
        if sizes.is_empty() {
            u64::MAX
        } else if sizes.len() <= count {
            0
        } else {
            let k = sizes.len() - count;
            *sizes.select_nth_unstable(k).1
        }
    };
    kth.max(floor).max(1)
}

/// Entries of `start..end` after which the allocation is live.
pub fn lifetime_in(a: &Allocation, start: usize, end: usize) -> u64 {
    a.end.min(end).saturating_sub(a.start.max(start)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::Action;

    #[test]
    fn peak_and_lifetime_inside_a_range() {
        let t = vec![
            entry(Action::Alloc, 0x1000, 4 * MB),         // 0
            entry(Action::FreeRequested, 0x1000, 4 * MB), // 1
            entry(Action::Alloc, 0x2000, MB),             // 2
            entry(Action::Alloc, 0x3000, MB),             // 3
            entry(Action::FreeRequested, 0x3000, MB),     // 4
        ];
        let tl = Timeline::build(&snapshot(vec![], t), 0);
        assert_eq!(peak_index_in(&tl, 0, 5), Some(0));
        assert_eq!(peak_index_in(&tl, 1, 5), Some(3));
        assert_eq!(peak_index_in(&tl, 4, 99), Some(4));
        assert_eq!(peak_index_in(&tl, 5, 9), None);
        assert_eq!(clamp(&tl, 7, 9), (5, 5));
        assert_eq!(min_bytes_for_count(&tl, 0, 5, 1, 1), 4 * MB);
        assert_eq!(min_bytes_for_count(&tl, 0, 5, 2, 1), MB);
        assert_eq!(min_bytes_for_count(&tl, 0, 5, 9, 1), 1);
        assert_eq!(min_bytes_for_count(&tl, 2, 5, 1, 2 * MB), 2 * MB);
        let second = &tl.allocations.list[1];
        assert_eq!((second.start, second.end), (2, 5));
        assert_eq!(lifetime_in(second, 0, 5), 3);
        assert_eq!(lifetime_in(second, 3, 4), 1);
        assert_eq!(lifetime_in(second, 0, 2), 0);
    }

    proptest::proptest! {
        #[test]
        fn the_threshold_is_the_count_th_largest_live_size_by_either_scan(
            list in lifetimes(3000, 2000, 1..60, 0..1500),
            a in 0usize..5000,
            len in 0usize..2000,
            count in 0usize..40,
            floor in 0u64..50,
        ) {
            let b = a + len;
            let mut sizes: Vec<u64> = list
                .iter()
                .filter(|al| al.start < al.end && al.start < b && al.end > a)
                .map(|al| al.size)
                .collect();
            sizes.sort_unstable_by(|x, y| y.cmp(x));
            let kth = match count {
                0 => u64::MAX,
                _ if sizes.is_empty() => u64::MAX,
                // Every one gets a band.
                _ if sizes.len() <= count => 0,
                _ => sizes[count - 1],
            };
            let want = kth.max(floor).max(1);
            let index = OverlapIndex::new(&list);
            for budget in [0, 3, usize::MAX] {
                let got = threshold(&list, &index, a, b, count, floor, budget);
                proptest::prop_assert_eq!(got, want, "budget {}", budget);
            }
        }
    }
}
