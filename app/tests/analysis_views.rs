//! The analysis views' view models on a real snapshot, checked against core's analyses called
//! directly: the worker must ship what core computes, shaped, never recomputed differently.

use std::path::PathBuf;

use memsnap_app::protocol::analysis::{EntryRange, FlameMeasure, FlameRequest, TimelineRequest};
use memsnap_app::protocol::Request;
use memsnap_app::protocol::Response;
use memsnap_app::viewmodel::{answer, Analyses};
use memsnap_core::analysis::replay::{file_config, what_if, Start};
use memsnap_core::analysis::state_at::state_at;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::Snapshot;

fn real(name: &str) -> Option<Snapshot> {
    let dir = match std::env::var_os("MEMSNAP_REAL_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real"),
    };
    let path = dir.join(name);
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!(
            "WARNING: real fixtures not found at {}, skipping",
            dir.display()
        );
        return None;
    };
    Some(memsnap_core::snapshot::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}")))
}

fn ask(snap: &Snapshot, cache: &mut Analyses, req: Request) -> Response {
    let r = answer(snap, cache, &req);
    if let Response::Failed { message } = &r {
        panic!("{req:?} failed: {message}");
    }
    r
}

#[test]
fn views_of_a_full_training_step() {
    let Some(snap) = real("cs336-d-fullstep.pickle") else {
        return;
    };
    let mut cache = Analyses::new();
    let tl = Timeline::build(&snap, 0);
    let n = tl.len() as u64;
    assert!(n > 1000, "the fixture has a trace");

    // Timeline: one point per column, covering the range; the peak is the series' maximum.
    let Response::Timeline(t) = ask(
        &snap,
        &mut cache,
        Request::Timeline(TimelineRequest {
            device: 0,
            range: EntryRange {
                start: 0,
                end: u64::MAX,
            },
            width: 800,
            height: 300,
        }),
    ) else {
        panic!("not a timeline")
    };
    assert_eq!(t.range, EntryRange { start: 0, end: n });
    assert_eq!(t.allocated.len(), 800);
    assert_eq!((t.allocated[0].start, t.allocated[799].end), (0, n));
    let peak = t.peak.clone().expect("a peak");
    assert_eq!(peak.allocated, tl.summary().peak_allocated);
    assert_eq!(Some(peak.index as usize), tl.peak_index());
    assert!(t.y_max >= peak.allocated);
    // Some column has a band, and hit-testing it names an allocation whose details come back.
    let runs = t.bands.tails.len();
    eprintln!(
        "{n} entries, {} allocations, {runs} band runs, bands from {} B",
        tl.allocations.list.len(),
        t.bands.min_bytes
    );
    assert!(runs > 0 && runs < 500_000, "{runs} band runs");
    let (col, cell) = (0..t.bands.columns.len())
        .find_map(|c| t.bands.cells(c).last().map(|&cell| (c, cell)))
        .expect("a band");
    let at = t.bands.columns[col].start as u64;
    assert_eq!(t.hit(at, cell.y0), Some(cell.alloc as u32));
    assert_eq!(t.hit(at, cell.y1), None);
    assert_eq!(cell.y1 - cell.y0, tl.allocations.list[cell.alloc].size);
    let Response::Allocation(a) = ask(
        &snap,
        &mut cache,
        Request::Allocation {
            device: 0,
            alloc: cell.alloc as u32,
        },
    ) else {
        panic!()
    };
    let core_alloc = &tl.allocations.list[cell.alloc];
    assert_eq!(
        (a.size, a.start, a.end),
        (
            core_alloc.size,
            core_alloc.start as u64,
            core_alloc.end as u64
        )
    );
    assert_eq!(a.frames.is_empty(), core_alloc.stack.is_none());
    let with_stack = t
        .bands
        .banded
        .iter()
        .find(|&&k| tl.allocations.list[k].stack.is_some());
    let Response::Allocation(a) = ask(
        &snap,
        &mut cache,
        Request::Allocation {
            device: 0,
            alloc: *with_stack.expect("a band with a stack") as u32,
        },
    ) else {
        panic!()
    };
    assert!(!a.frames.is_empty());

    // Zoomed: a sub-range at fewer columns than entries.
    let Response::Timeline(z) = ask(
        &snap,
        &mut cache,
        Request::Timeline(TimelineRequest {
            device: 0,
            range: EntryRange {
                start: n / 4,
                end: n / 4 + 500,
            },
            width: 1000,
            height: 300,
        }),
    ) else {
        panic!()
    };
    assert_eq!(z.allocated.len(), 500, "at most one point per entry");
    let core_peak =
        memsnap_core::analysis::range::peak_index_in(&tl, (n / 4) as usize, (n / 4 + 500) as usize);
    assert_eq!(z.peak.map(|p| p.index as usize), core_peak);

    // State at an entry: the same segments core's state_at gives.
    for index in [0, n / 3, n] {
        let Response::StateAt(s) = ask(&snap, &mut cache, Request::StateAt { device: 0, index })
        else {
            panic!()
        };
        let native = state_at(&snap, 0, index as usize);
        assert_eq!(
            s.segments.segments.len(),
            native.len(),
            "segments at {index}"
        );
        let blocks: usize = native.iter().map(|s| s.blocks.len()).sum();
        assert_eq!(s.segments.block_count(), blocks, "blocks at {index}");
    }

    // What-if: the model's figures as core's what_if gives them.
    let Response::Insights(ins) = ask(&snap, &mut cache, Request::Insights { device: 0 }) else {
        panic!()
    };
    assert!(!ins.fixes.is_empty() || ins.free == 0);
    let mut req = ins.defaults.clone();
    req.expandable_segments = !req.expandable_segments;
    let Response::WhatIf(w) = ask(&snap, &mut cache, Request::WhatIf(req.clone())) else {
        panic!()
    };
    let start = if w.start == "clean" {
        Start::Clean
    } else {
        Start::Reconstructed
    };
    let mut cfg = file_config(&snap).unwrap();
    cfg.expandable_segments = req.expandable_segments;
    let native = what_if(&snap, 0, cfg, start, req.capacity).unwrap();
    assert_eq!(w.changed.peak_reserved, native.figures.peak_reserved);
    assert_eq!(w.changed.ooms, native.figures.ooms);
    assert_eq!(w.recorded.peak_allocated, tl.summary().peak_allocated);
    assert!(w.plan.is_some_and(|p| p.arena_size >= p.peak_live_block));

    // Flame graph at the peak: the root holds the peak's live bytes, filtered or not.
    for all_frames in [false, true] {
        let Response::Flame(f) = ask(
            &snap,
            &mut cache,
            Request::Flame(FlameRequest {
                device: 0,
                range: EntryRange { start: 0, end: n },
                measure: FlameMeasure::LiveAt(None),
                all_frames,
            }),
        ) else {
            panic!()
        };
        assert_eq!(f.total, peak.allocated);
        assert_eq!(f.point, Some(peak.index));
        assert!(f.nodes.len() > 1);
    }

    // Anomalies over the whole trace and an empty range.
    let Response::Anomalies(an) = ask(
        &snap,
        &mut cache,
        Request::Anomalies {
            device: 0,
            range: EntryRange { start: 0, end: n },
        },
    ) else {
        panic!()
    };
    let Response::Anomalies(none) = ask(
        &snap,
        &mut cache,
        Request::Anomalies {
            device: 0,
            range: EntryRange { start: 0, end: 0 },
        },
    ) else {
        panic!()
    };
    assert!(none.leak_count == 0 && none.ooms.is_empty());
    assert!(an.leak_count >= none.leak_count);

    // Bad ids are errors, not panics.
    assert!(matches!(
        answer(
            &snap,
            &mut cache,
            &Request::Allocation {
                device: 0,
                alloc: u32::MAX
            }
        ),
        Response::Failed { .. }
    ));
    assert!(matches!(
        answer(&snap, &mut cache, &Request::Stack { stack: u32::MAX }),
        Response::Failed { .. }
    ));
}

#[test]
fn labels_skip_capture_frames() {
    let Some(snap) = real("cs336-d-fullstep.pickle") else {
        return;
    };
    let mut cache = Analyses::new();
    let Response::Insights(ins) = ask(&snap, &mut cache, Request::Insights { device: 0 }) else {
        panic!()
    };
    for p in &ins.pinning {
        eprintln!("{}", p.label);
        assert!(!p.label.contains("unwind"), "{}", p.label);
    }
}

/// Timings at a million entries (`scripts/gen/gen-large.sh` makes the file): run with
/// `cargo test --release -p memsnap-app --test analysis_views -- --ignored --nocapture`.
#[test]
#[ignore]
fn timeline_requests_at_a_million_entries() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data/large-100mb.pickle");
    let Ok(bytes) = std::fs::read(&path) else {
        eprintln!(
            "WARNING: {} not found (scripts/gen/gen-large.sh), skipping",
            path.display()
        );
        return;
    };
    let snap = memsnap_core::snapshot::read(&bytes).expect("reading the large file");
    let mut cache = Analyses::new();
    let t = std::time::Instant::now();
    let n = cache.timeline(&snap, 0).len() as u64;
    eprintln!("{n} entries: timeline built in {:?}", t.elapsed());
    let mut ask_range = |start: u64, end: u64| {
        let t = std::time::Instant::now();
        let r = answer(
            &snap,
            &mut cache,
            &Request::Timeline(TimelineRequest {
                device: 0,
                range: EntryRange { start, end },
                width: 1000,
                height: 226,
            }),
        );
        let Response::Timeline(v) = r else {
            panic!("not a timeline")
        };
        let bytes = memsnap_app::protocol::encode(1, &Response::Timeline(v.clone())).len();
        let runs = v.bands.tails.len();
        eprintln!(
            "range {start}..{end}: {:?}, {runs} band runs, {bytes} B message",
            t.elapsed()
        );
        assert!(v.allocated.len() <= 1000);
    };
    ask_range(0, n);
    ask_range(0, n);
    ask_range(n / 2, n / 2 + n / 100);
    ask_range(n / 2 + n / 200, n / 2 + n / 100 + n / 200);
    let t = std::time::Instant::now();
    let _ = answer(
        &snap,
        &mut cache,
        &Request::StateAt {
            device: 0,
            index: n / 2,
        },
    );
    eprintln!("first state_at (history build): {:?}", t.elapsed());
    let t = std::time::Instant::now();
    let _ = answer(
        &snap,
        &mut cache,
        &Request::StateAt {
            device: 0,
            index: n / 2 + 777,
        },
    );
    eprintln!("next state_at: {:?}", t.elapsed());
}
