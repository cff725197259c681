//! Size-class churn: which allocation sizes the trace uses, how often, and whether large sizes
//! keep alternating with frees in between, the pattern where each size leaves a hole the next
//! one cannot reuse, so reserved memory grows while allocated memory does not.

use std::collections::HashMap;

use super::intervals::{Allocation, Allocations};
use super::pace::{self, Pace, CHUNK};
use super::sizes::{Rounding, SMALL_SIZE};
use crate::snapshot::AllocatorSettings;

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SizeStat {
    /// Block size (rounded request).
    pub size: u64,
    pub allocs: usize,
    pub frees: usize,
    pub bytes: u64,
}

/// Power-of-two class `[2^log2, 2^(log2+1))` of block sizes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SizeClass {
    pub log2: u32,
    pub allocs: usize,
    pub frees: usize,
    pub bytes: u64,
    pub distinct_sizes: usize,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Alternation {
    pub smaller: u64,
    pub larger: u64,
    /// Switches between the two sizes where the previous one was already freed (a hole left).
    pub alternations: usize,
    pub allocs_smaller: usize,
    pub allocs_larger: usize,
    /// Allocations of the two sizes, after the first of each, that found no cached block and
    /// needed a new segment: what the alternation costs. Zero means every later request reused
    /// a hole, and the pattern is harmless.
    pub new_segments: usize,
    /// What the smaller size leaves when carved from the larger one's hole.
    pub remainder: u64,
    /// The smaller size may not take the larger's block at all (the larger is at or above
    /// `max_split_size` and the smaller below it).
    pub smaller_blocked_by_max_split: bool,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Churn {
    pub allocs: usize,
    pub frees: usize,
    pub distinct_sizes: usize,
    /// Distinct sizes above 1 MiB (large pool).
    pub distinct_large_sizes: usize,
    /// By allocation count, most first.
    pub sizes: Vec<SizeStat>,
    pub classes: Vec<SizeClass>,
    pub bytes_allocated: u64,
    pub peak_live: u64,
    /// bytes_allocated / peak_live: how many times the peak's worth of memory was recycled.
    pub turnover: f64,
    pub alternating: Option<Alternation>,
    pub verdict: String,
    /// The verdict with exact byte counts, when it names sizes.
    pub verdict_exact: Option<String>,
}

/// Alternations at which the pattern is reported (A B A B: three switches).
pub const ALTERNATION_THRESHOLD: usize = 3;
/// Large sizes considered for pairs (the most frequent ones).
const TOP_SIZES: usize = 8;

/// A large traced allocation of one of the top sizes, as the pair scans read it (packed, so
/// the 28 pair scans do not each walk every allocation: they were 80% of `churn` at 1M entries,
/// and `churn` most of the diagnostics panel's request; perf).
#[derive(Debug, Clone, Copy)]
struct Item {
    /// Position in the list of allocations (the scans' order).
    order: usize,
    start: usize,
    end: usize,
    new_segment: bool,
}

impl Item {
    fn of(order: usize, a: &Allocation) -> Item {
        Item {
            order,
            start: a.start,
            end: a.end,
            new_segment: a.new_segment,
        }
    }
}

/// For the allocations of two sizes, in list order (`x` holds one size's, `y` the other's):
/// the alternations (a switch of size with the previous one freed before it starts) and the
/// misses (allocations that needed a new segment, not counting each size's first).
async fn pair_counts(x: &[Item], y: &[Item], pace: &mut Pace<'_>) -> (usize, usize) {
    let (mut i, mut j) = (0, 0);
    let mut prev: Option<(bool, usize)> = None;
    let (mut seen, mut alternations, mut misses) = ([false; 2], 0, 0);
    while i < x.len() || j < y.len() {
        pace.tick().await;
        let from_y = i == x.len() || (j < y.len() && y[j].order < x[i].order);
        let item = if from_y { y[j] } else { x[i] };
        if from_y {
            j += 1;
        } else {
            i += 1;
        }
        if let Some((prev_y, prev_end)) = prev {
            if prev_y != from_y && prev_end <= item.start {
                alternations += 1;
            }
        }
        prev = Some((from_y, item.end));
        let seen = &mut seen[from_y as usize];
        if *seen && item.new_segment {
            misses += 1;
        }
        *seen = true;
    }
    (alternations, misses)
}

pub fn churn(allocs: &Allocations, settings: Option<&AllocatorSettings>) -> Churn {
    pace::finish(churn_paced(allocs, settings, &mut Pace::never()))
}

/// [`churn`], giving way through `pace` once per allocation (in each of its passes).
pub async fn churn_paced(
    allocs: &Allocations,
    settings: Option<&AllocatorSettings>,
    pace: &mut Pace<'_>,
) -> Churn {
    let mut traced: Vec<&Allocation> = Vec::new();
    for chunk in allocs.list.chunks(CHUNK) {
        pace.check().await;
        traced.extend(chunk.iter().filter(|a| a.alloc_index.is_some()));
    }
    let mut by_size: foldhash::HashMap<u64, SizeStat> = foldhash::HashMap::default();
    for chunk in traced.chunks(CHUNK) {
        pace.check().await;
        for a in chunk {
            let s = by_size.entry(a.size).or_insert(SizeStat {
                size: a.size,
                allocs: 0,
                frees: 0,
                bytes: 0,
            });
            s.allocs += 1;
            s.bytes += a.size;
            if a.end < allocs.trace_len {
                s.frees += 1;
            }
        }
    }
    let mut sizes: Vec<SizeStat> = by_size.into_values().collect();
    pace.check().await;
    // One piece: a trace of random sizes has half a million distinct ones (~10 ms).
    sizes.sort_by(|x, y| y.allocs.cmp(&x.allocs).then(x.size.cmp(&y.size)));
    pace.check().await;

    let mut classes: HashMap<u32, SizeClass> = HashMap::new();
    for s in &sizes {
        let log2 = 63 - s.size.max(1).leading_zeros();
        let c = classes.entry(log2).or_insert(SizeClass {
            log2,
            allocs: 0,
            frees: 0,
            bytes: 0,
            distinct_sizes: 0,
        });
        c.allocs += s.allocs;
        c.frees += s.frees;
        c.bytes += s.bytes;
        c.distinct_sizes += 1;
    }
    let mut classes: Vec<SizeClass> = classes.into_values().collect();
    classes.sort_by_key(|c| c.log2);
    pace.check().await;

    // Peak live bytes by a difference array over the trace.
    let n = allocs.trace_len;
    // i64 (live bytes stay far below 2^63): the scattered writes miss cache, half as often
    // as with i128 at a million entries.
    let mut diff = vec![0i64; n + 1];
    for chunk in allocs.list.chunks(CHUNK) {
        pace.check().await;
        for a in chunk {
            if a.start < a.end {
                diff[a.start] = diff[a.start].wrapping_add(a.size as i64);
                let end = a.end.min(n);
                diff[end] = diff[end].wrapping_sub(a.size as i64);
            }
        }
    }
    let (mut cur, mut peak_live) = (0i64, 0i64);
    for chunk in diff[..n].chunks(CHUNK) {
        pace.check().await;
        for d in chunk {
            cur = cur.wrapping_add(*d);
            peak_live = peak_live.max(cur);
        }
    }
    let peak_live = peak_live as u64;
    let bytes_allocated: u64 = traced.iter().map(|a| a.size).sum();

    let top: Vec<&SizeStat> = sizes
        .iter()
        .filter(|s| s.size > SMALL_SIZE && s.allocs >= 2)
        .take(TOP_SIZES)
        .collect();
    let mut items: Vec<Vec<Item>> = vec![Vec::new(); top.len()];
    for (c, chunk) in traced.chunks(CHUNK).enumerate() {
        pace.check().await;
        for (k, a) in chunk.iter().enumerate() {
            if let Some(t) = top.iter().position(|s| s.size == a.size) {
                items[t].push(Item::of(c * CHUNK + k, a));
            }
        }
    }
    // The costliest pair: most new segments, then most alternations.
    let mut best: Option<(usize, usize, u64, u64)> = None;
    for (i, x) in top.iter().enumerate() {
        for (j, y) in top.iter().enumerate().skip(i + 1) {
            let (a, b) = (x.size.min(y.size), x.size.max(y.size));
            let (n, m) = pair_counts(&items[i], &items[j], pace).await;
            if n < ALTERNATION_THRESHOLD {
                continue;
            }
            if m > 0 && best.is_none_or(|(bm, bn, _, _)| (m, n) > (bm, bn)) {
                best = Some((m, n, a, b));
            }
        }
    }
    let ms = Rounding::from_settings(settings).max_split_size();
    let alternating = best.map(|(m, n, a, b)| {
        let count = |s: u64| sizes.iter().find(|x| x.size == s).map_or(0, |x| x.allocs);
        Alternation {
            smaller: a,
            larger: b,
            alternations: n,
            new_segments: m,
            allocs_smaller: count(a),
            allocs_larger: count(b),
            remainder: b - a,
            smaller_blocked_by_max_split: ms.is_some_and(|m| a < m && b >= m),
        }
    });
    let distinct_large_sizes = sizes.iter().filter(|s| s.size > SMALL_SIZE).count();
    let turnover = if peak_live == 0 {
        0.0
    } else {
        bytes_allocated as f64 / peak_live as f64
    };
    // Sizes as people say them; `verdict_exact` repeats the sentence in bytes for a hover.
    let alternation_sentence = |al: &Alternation, size: &dyn Fn(u64) -> String| {
        format!(
            "alternating sizes: {} and {} switch {} times with frees in between and needed {} \
             new segments; a {} request cannot reuse a {} hole, and a {} request carved from \
             a {} hole leaves {}{}",
            size(al.smaller),
            size(al.larger),
            al.alternations,
            al.new_segments,
            size(al.larger),
            size(al.smaller),
            size(al.smaller),
            size(al.larger),
            size(al.remainder),
            if al.smaller_blocked_by_max_split {
                " (here it may not take it at all: max_split_size)"
            } else {
                ""
            }
        )
    };
    let verdict_exact = alternating
        .as_ref()
        .map(|al| alternation_sentence(al, &|b| format!("{b} bytes")));
    let verdict = match &alternating {
        Some(al) => alternation_sentence(al, &super::units::bytes),
        None if traced.is_empty() => "no allocations in the trace".to_string(),
        None => format!(
            "no costly alternating-size pattern (sizes that alternate reuse their own holes); \
             {} distinct sizes ({} above 1 MiB), turnover {:.1}x the peak",
            sizes.len(),
            distinct_large_sizes,
            turnover
        ),
    };
    Churn {
        allocs: traced.len(),
        frees: sizes.iter().map(|s| s.frees).sum(),
        distinct_sizes: sizes.len(),
        distinct_large_sizes,
        sizes,
        classes,
        bytes_allocated,
        peak_live,
        turnover,
        alternating,
        verdict,
        verdict_exact,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::intervals::allocations;
    use crate::analysis::testutil::*;
    use proptest::prelude::*;

    // The direct definitions, against which the packed pair scan is checked.
    /// Allocations of size `a` or `b` that needed a new segment, not counting each size's first.
    fn count_misses(seq: &[&Allocation], a: u64, b: u64) -> usize {
        let (mut seen_a, mut seen_b, mut n) = (false, false, 0);
        for x in seq.iter().filter(|x| x.size == a || x.size == b) {
            let seen = if x.size == a {
                &mut seen_a
            } else {
                &mut seen_b
            };
            if *seen && x.new_segment {
                n += 1;
            }
            *seen = true;
        }
        n
    }

    fn count_alternations(seq: &[&Allocation], a: u64, b: u64) -> usize {
        let mut prev: Option<&Allocation> = None;
        let mut n = 0;
        for x in seq.iter().filter(|x| x.size == a || x.size == b) {
            if let Some(p) = prev {
                if p.size != x.size && p.end <= x.start {
                    n += 1;
                }
            }
            prev = Some(x);
        }
        n
    }

    proptest! {
        #[test]
        fn pair_counts_equal_the_direct_definitions(
            spans in proptest::collection::vec((0usize..400, 0usize..60, 0u64..4, any::<bool>()), 0..300),
        ) {
            // Sizes 0..4 stand for four large sizes; the pair is sizes 1 and 2.
            let mut list: Vec<Allocation> = spans
                .iter()
                .map(|&(s, l, size, new_segment)| Allocation {
                    new_segment,
                    ..lifetime(s, s + l, size)
                })
                .collect();
            list.sort_by_key(|a| a.start);
            let refs: Vec<&Allocation> = list.iter().collect();
            let of = |size: u64| -> Vec<Item> {
                list.iter()
                    .enumerate()
                    .filter(|(_, a)| a.size == size)
                    .map(|(order, a)| Item::of(order, a))
                    .collect()
            };
            let want = (count_alternations(&refs, 1, 2), count_misses(&refs, 1, 2));
            prop_assert_eq!(pace::finish(pair_counts(&of(1), &of(2), &mut Pace::never())), want);
            prop_assert_eq!(pace::finish(pair_counts(&of(2), &of(1), &mut Pace::never())), want);
        }
    }

    #[test]
    fn detects_alternation() {
        // Each allocation needs a new segment (its holes are elsewhere, e.g. pinned).
        let mut t = Vec::new();
        for k in 0..5u64 {
            let (a, b) = (0x1000_0000 + k * 0x400_0000, 0x4000_0000 + k * 0x400_0000);
            t.push(entry(crate::snapshot::Action::SegmentAlloc, a, 30 * MB));
            t.extend(alloc_free(a, 30 * MB));
            t.push(entry(crate::snapshot::Action::SegmentAlloc, b, 50 * MB));
            t.extend(alloc_free(b, 50 * MB));
        }
        t.extend(alloc_free(0x9000, 1000));
        let snap = snapshot(vec![], t);
        let c = churn(&allocations(&snap, 0), None);
        assert_eq!(c.allocs, 11);
        assert_eq!(c.frees, 11);
        assert_eq!(c.distinct_sizes, 3);
        assert_eq!(c.distinct_large_sizes, 2);
        assert_eq!(c.sizes[0].allocs, 5);
        assert_eq!(c.peak_live, 50 * MB);
        let al = c.alternating.clone().expect("pattern");
        assert_eq!(
            (al.smaller, al.larger, al.alternations),
            (30 * MB, 50 * MB, 9)
        );
        assert_eq!(al.remainder, 20 * MB);
        assert_eq!(al.new_segments, 8);
        assert!(!al.smaller_blocked_by_max_split);
        // Sizes as people say them, the exact bytes kept for a hover.
        assert!(
            c.verdict
                .starts_with("alternating sizes: 30.0 MiB and 50.0 MiB switch 9 times"),
            "{}",
            c.verdict
        );
        assert!(c.verdict.ends_with("leaves 20.0 MiB"), "{}", c.verdict);
        let exact = c.verdict_exact.as_deref().unwrap_or_default();
        assert!(
            exact.contains(&format!("{} bytes and {} bytes", 30 * MB, 50 * MB)),
            "{exact}"
        );
        let settings = AllocatorSettings {
            entries: vec![(
                std::sync::Arc::from("max_split_size"),
                crate::snapshot::Value::Int(40 * MB as i64),
            )],
        };
        let limited = churn(&allocations(&snap, 0), Some(&settings));
        assert!(
            limited
                .alternating
                .expect("pattern")
                .smaller_blocked_by_max_split
        );
        assert!(c.verdict.contains("switch 9 times"));
        let classes: Vec<(u32, usize)> = c.classes.iter().map(|x| (x.log2, x.allocs)).collect();
        assert_eq!(classes, vec![(10, 1), (24, 5), (25, 5)]);
    }

    #[test]
    fn overlapping_sizes_are_not_alternation() {
        // All live at once, freed at the end: no hole is left between switches.
        use crate::snapshot::Action::{Alloc, FreeRequested};
        let addr = |k: u64| 0x1000_0000 + k * 0x1000_0000;
        let mut t = Vec::new();
        for k in 0..10u64 {
            t.push(entry(
                Alloc,
                addr(k),
                if k % 2 == 0 { 30 * MB } else { 50 * MB },
            ));
        }
        for k in 0..10u64 {
            t.push(entry(FreeRequested, addr(k), 0));
        }
        let c = churn(&allocations(&snapshot(vec![], t), 0), None);
        assert!(c.alternating.is_none(), "{:?}", c.alternating);
        assert_eq!(c.peak_live, 400 * MB);
        assert!((c.turnover - 1.0).abs() < 1e-9);
        assert!(c.verdict.starts_with("no costly alternating"));
    }

    #[test]
    fn alternation_that_reuses_holes_is_harmless() {
        // The same sizes alternate, but after the first of each every request reuses a hole.
        let mut t = vec![
            entry(crate::snapshot::Action::SegmentAlloc, 0x1000_0000, 30 * MB),
            entry(crate::snapshot::Action::SegmentAlloc, 0x4000_0000, 50 * MB),
        ];
        for _ in 0..5 {
            t.extend(alloc_free(0x1000_0000, 30 * MB));
            t.extend(alloc_free(0x4000_0000, 50 * MB));
        }
        let c = churn(&allocations(&snapshot(vec![], t), 0), None);
        assert!(c.alternating.is_none(), "{:?}", c.alternating);
    }
}
