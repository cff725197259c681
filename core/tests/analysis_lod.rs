//! Level-of-detail queries at a million entries: exact against brute force, and fast.

use std::time::Instant;

use memsnap_core::analysis::bands::layout;
use memsnap_core::analysis::lod::Series;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::{Action, Snapshot, TraceEntry};

fn series(n: usize) -> Vec<u64> {
    let mut x: u64 = 88172645463325252;
    let mut v = 1u64 << 30;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v = (v as i64 + (x % 2_000_001) as i64 - 1_000_000).max(0) as u64;
            v
        })
        .collect()
}

#[test]
fn million_entry_queries_match_brute_force() {
    let v = series(1_000_000);
    let s = Series::new(v.clone());
    for (a, b, w) in [
        (0, 1_000_000, 1920),
        (123_457, 654_321, 1000),
        (999_000, 1_000_000, 1500),
        (17, 1_017, 3),
    ] {
        for bk in s.buckets(a, b, w) {
            let part = &v[bk.start..bk.end];
            assert_eq!(bk.min, *part.iter().min().expect("non-empty"));
            assert_eq!(bk.max, *part.iter().max().expect("non-empty"));
            assert_eq!(bk.last, part[part.len() - 1]);
        }
    }
}

#[test]
#[cfg_attr(debug_assertions, ignore = "timing: run with --release")]
fn million_entry_zoom_and_pan_are_fast() {
    let s = Series::new(series(1_000_000));
    let t = Instant::now();
    let mut checksum = 0u64;
    let queries = 200;
    for q in 0..queries {
        // Zoom in step by step while panning.
        let len = 1_000_000 >> (q % 12);
        let a = (q * 7919) % (1_000_001 - len);
        for b in s.buckets(a, a + len, 1920) {
            checksum = checksum.wrapping_add(b.max ^ b.min);
        }
    }
    let per = t.elapsed().as_secs_f64() / queries as f64;
    eprintln!(
        "1M entries, 1920 px: {:.1} us per query (checksum {checksum})",
        per * 1e6
    );
    assert!(per < 0.005, "{per} s per query");
}

/// A trace of `n` allocations, each freed `life` entries later, of varied sizes.
fn churny(n: usize, life: usize) -> Snapshot {
    let mut x: u64 = 0x853c49e6748fea9b;
    let mut t = Vec::new();
    let mut pending = std::collections::VecDeque::new();
    for i in 0..n as u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let addr = 0x1000_0000 + i * 0x1000_0000;
        t.push(TraceEntry::new(
            Action::Alloc,
            addr,
            512 * (1 + x % 100_000),
        ));
        pending.push_back(addr);
        if pending.len() > life {
            let a = pending.pop_front().unwrap_or(0);
            t.push(TraceEntry::new(Action::FreeRequested, a, 0));
        }
    }
    Snapshot {
        device_traces: Some(vec![t]),
        ..Snapshot::default()
    }
}

#[test]
#[cfg_attr(debug_assertions, ignore = "timing: run with --release")]
fn band_layout_at_a_million_entries() {
    let snap = churny(500_000, 300);
    let t = Instant::now();
    let tl = Timeline::build(&snap, 0);
    let build = t.elapsed().as_secs_f64();
    let n = tl.len();
    let peak = tl.summary().peak_allocated;
    let t = Instant::now();
    let full = layout(&tl, 0, n, 1920, peak / 600);
    let whole = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let zoomed = layout(&tl, n / 2, n / 2 + 5000, 1920, peak / 600);
    let zoom = t.elapsed().as_secs_f64();
    eprintln!(
        "{n} entries: timeline {build:.3} s, band layout whole {:.1} ms ({} runs), zoomed {:.2} ms ({} runs)",
        whole * 1e3,
        full.tails.len(),
        zoom * 1e3,
        zoomed.tails.len()
    );
    assert!(whole < 2.0 && zoom < 0.5);
}
