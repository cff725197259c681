//! Peak composition, flame graphs and the band layout on the real snapshots: every view of the
//! peak must add up to the timeline's allocated bytes there.

mod analysis_fixtures;

use memsnap_core::analysis::bands::{layout, min_bytes_for, Hit};
use memsnap_core::analysis::flamegraph::{flamegraph, folded, Measure, Options};
use memsnap_core::analysis::frames::{kind, top_user_frame, FrameKind};
use memsnap_core::analysis::peak::peak;
use memsnap_core::analysis::timeline::Timeline;

#[test]
fn peak_groups_add_up() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    for (name, snap) in &all {
        for d in analysis_fixtures::devices(snap) {
            let tl = Timeline::build(snap, d);
            let p = peak(snap, &tl);
            let by_frame: u64 = p.by_top_frame.iter().map(|g| g.bytes).sum();
            let by_stack: u64 = p.by_stack.iter().map(|g| g.bytes).sum();
            assert_eq!(by_frame, p.allocated, "{name}");
            assert_eq!(by_stack, p.allocated, "{name}");
            assert_eq!(
                p.by_stack.iter().map(|g| g.count).sum::<usize>(),
                p.live_allocations,
                "{name}"
            );
            for w in p.by_top_frame.windows(2) {
                assert!(w[0].bytes >= w[1].bytes, "{name}");
            }
            // A named top frame is user or library code, never torch, stdlib or native.
            for g in &p.by_top_frame {
                if let Some(f) = g.frame {
                    let k = kind(snap.stacks.frame(f));
                    assert!(
                        matches!(k, FrameKind::User | FrameKind::Library),
                        "{name}: {}",
                        g.label
                    );
                }
            }
            if let Some(top) = p.by_top_frame.first() {
                eprintln!(
                    "{name} dev {d}: peak {} B @ {:?}, {} live; top frame {} = {} B",
                    p.allocated, p.index, p.live_allocations, top.label, top.bytes
                );
            }
            let g = flamegraph(snap, &tl, Options::default());
            assert_eq!(g.value, p.allocated, "{name}");
            let lines = folded(&g);
            let sum: u64 = lines
                .iter()
                .map(|l| {
                    l.rsplit_once(' ')
                        .and_then(|(_, v)| v.parse::<u64>().ok())
                        .unwrap_or(0)
                })
                .sum();
            assert_eq!(sum, g.value, "{name}");
            let life = flamegraph(
                snap,
                &tl,
                Options {
                    measure: Measure::BytesTimesLifetime,
                    filter: false,
                },
            );
            let expect: u64 = tl
                .allocations
                .list
                .iter()
                .map(|a| a.size * a.lifetime())
                .sum();
            assert_eq!(life.value, expect, "{name}");
        }
    }
}

#[test]
fn user_frames_found_in_real_stacks() {
    // Python-level stacks name the user's line; autograd's backward stacks are C++ only.
    let Some(snap) = analysis_fixtures::one("cs336-d-fullstep.pickle") else {
        return;
    };
    let tl = Timeline::build(&snap, 0);
    let stacks: Vec<_> = tl.allocations.list.iter().filter_map(|a| a.stack).collect();
    let with_user = stacks
        .iter()
        .filter(|s| top_user_frame(&snap.stacks, **s).is_some())
        .count();
    let python = stacks
        .iter()
        .filter(|s| {
            snap.stacks
                .frames_of(**s)
                .any(|f| f.filename.ends_with(".py") && !f.filename.contains("torch"))
        })
        .count();
    eprintln!(
        "{with_user} of {} stacks have a user frame, {python} have a non-torch .py frame",
        stacks.len()
    );
    assert_eq!(with_user, python);
    assert!(with_user > 0);
}

#[test]
fn band_layout_columns_add_up() {
    let Some(snap) = analysis_fixtures::one("cs336-c-medium512-training.pickle") else {
        return;
    };
    let tl = Timeline::build(&snap, 0);
    let n = tl.len();
    for (a, b, w) in [(0, n, 1000), (1000, 1400, 1000), (0, n, 50)] {
        let mb = min_bytes_for(&tl, a, b, 500);
        let l = layout(&tl, a, b, w, mb);
        let v = tl.allocated.values();
        for (j, c) in l.columns.iter().enumerate() {
            let (lo, hi) = tl.allocated.min_max(c.start, c.end).expect("column range");
            // Visible bands plus the summary at its lowest never go below the true minimum
            // (present-in-column bands can only add), and summary_max is exact.
            assert!(c.top + c.summary_min >= lo);
            if c.end - c.start == 1 {
                assert_eq!(c.top + c.summary_max, v[c.start]);
                assert_eq!(c.summary_min, c.summary_max);
            }
            assert!(c.summary_max <= hi);
            for cell in l.cells(j) {
                assert!(cell.y1 - cell.y0 >= mb);
                let mid = (cell.y0 + cell.y1) / 2;
                assert_eq!(l.hit(c.start, mid), Hit::Allocation(cell.alloc));
                let al = &tl.allocations.list[cell.alloc];
                assert!(al.start < c.end && al.end > c.start);
            }
        }
    }
}
