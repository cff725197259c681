//! The offline planner on real traces: a valid assignment, no smaller than the peak, and fast.

mod analysis_fixtures;

use std::collections::BTreeMap;
use std::time::Instant;

use memsnap_core::analysis::intervals::{Allocation, Allocations};
use memsnap_core::analysis::plan::{plan, Plan, PlanSizes};
use memsnap_core::analysis::timeline::Timeline;

/// No two allocations that are live together overlap in the arena: a sweep over entries keeping
/// the live allocations ordered by offset, checking each newcomer against its neighbours.
fn assert_valid(a: &Allocations, p: &Plan, name: &str) {
    let mut events: Vec<(usize, bool, u64, u64)> = Vec::new(); // (time, is_start, offset, end)
    for (x, o) in a.list.iter().zip(&p.offsets) {
        let Some(o) = *o else { continue };
        let size = match p.sizes {
            PlanSizes::Block => x.size,
            PlanSizes::Requested => x.requested.max(1).div_ceil(512) * 512,
        };
        assert!(o + size <= p.arena_size, "{name}");
        events.push((x.start, true, o, o + size));
        events.push((x.end, false, o, o + size));
    }
    // Ends before starts at the same entry: [start, end) intervals.
    events.sort_unstable_by_key(|e| (e.0, e.1, e.2));
    let mut live: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for (t, start, o, end) in events {
        if start {
            if let Some((_, ends)) = live.range(..=o).next_back() {
                let prev_end = ends.iter().copied().max().unwrap_or(0);
                assert!(prev_end <= o, "{name}: collision at entry {t}, offset {o}");
            }
            if let Some((&next, _)) = live.range(o..).next() {
                assert!(next >= end, "{name}: collision at entry {t}, offset {o}");
            }
            live.entry(o).or_default().push(end);
        } else if let Some(v) = live.get_mut(&o) {
            if let Some(i) = v.iter().position(|&x| x == end) {
                v.swap_remove(i);
            }
            if v.is_empty() {
                live.remove(&o);
            }
        }
    }
}

#[test]
fn real_plans_are_valid() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    for (name, snap) in &all {
        let tl = Timeline::build(snap, 0);
        if tl.is_empty() {
            continue;
        }
        // Requested sizes on one file only: debug builds plan slowly.
        let kinds: &[PlanSizes] = if name.starts_with("select-n") {
            &[PlanSizes::Block, PlanSizes::Requested]
        } else {
            &[PlanSizes::Block]
        };
        for &sizes in kinds {
            let t = Instant::now();
            let p = plan(&tl.allocations, sizes);
            let ms = t.elapsed().as_millis();
            assert_valid(&tl.allocations, &p, name);
            assert!(p.arena_size >= p.peak_live_planned, "{name}");
            assert!(p.peak_live_requested <= p.peak_live_block, "{name}");
            // Timeline peak and planner peak are the same sum over the same lifetimes.
            assert_eq!(p.peak_live_block, tl.summary().peak_allocated, "{name}");
            eprintln!(
                "{name}: {:?} peak live {} B, arena {} B (+{:.2}%), peak reserved {} B, {} allocations, {ms} ms",
                sizes,
                p.peak_live_planned,
                p.arena_size,
                (p.arena_size as f64 / p.peak_live_planned.max(1) as f64 - 1.0) * 100.0,
                tl.summary().peak_reserved,
                p.planned
            );
        }
    }
}

/// A training-loop-like synthetic trace: `weights` allocations live throughout, then short-lived
/// activations and temporaries of varied sizes and lifetimes.
fn synthetic(n: usize, weights: usize) -> Allocations {
    let mut x: u64 = 0x2545F4914F6CDD1D;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let n_entries = n * 3;
    let list = (0..n)
        .map(|i| {
            let start = if i < weights { 0 } else { i * 3 };
            let life = if i < weights {
                n_entries
            } else if rnd() % 20 == 0 {
                1 + (rnd() % 3000) as usize
            } else {
                1 + (rnd() % 300) as usize
            };
            let size = 512 * (1 + rnd() % 40_000);
            Allocation {
                addr: i as u64,
                requested: size,
                size,
                size_exact: true,
                new_segment: false,
                start,
                end: (start + life).min(n_entries),
                alloc_index: Some(start),
                free_requested: None,
                free_completed: None,
                stack: None,
                stream: None,
            }
        })
        .collect();
    Allocations {
        list,
        trace_len: n_entries,
        ..Allocations::default()
    }
}

fn timed_plan(n: usize) -> f64 {
    let a = synthetic(n, n / 50);
    let t = Instant::now();
    let p = plan(&a, PlanSizes::Block);
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "{n} allocations planned in {secs:.3} s; arena {} B vs peak live {} B",
        p.arena_size, p.peak_live_planned
    );
    assert_eq!(p.planned, n);
    assert_valid(&a, &p, "synthetic");
    assert!(p.arena_size >= p.peak_live_planned);
    secs
}

#[test]
fn synthetic_plan_is_valid() {
    timed_plan(10_000);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "timing: run with --release")]
fn hundred_thousand_allocations_plan_in_seconds() {
    let secs = timed_plan(100_000);
    assert!(secs < 10.0, "{secs} s");
}
