//! `--replay` of real snapshots: the same allocations and frees, one for one, in order, with
//! the same sizes and frames.

mod common;

use std::collections::HashSet;

use memsnap_core::snapshot::{self, Action, Snapshot, TraceEntry};

/// (file, line, name).
type FrameText = (String, i64, String);
/// (action, size, frames).
type Request = (Action, u64, Vec<FrameText>);

/// (action, size, frames as (file, line, name) lists) of the alloc and free_requested entries,
/// leaving out frees of blocks allocated before the trace starts. Frees are compared by size
/// and order only: the model records a free with the block's allocation frames (PyTorch's
/// `context="alloc"`), while these files captured the freeing code's stack (`context="all"`).
fn requests(s: &Snapshot) -> Vec<Request> {
    let device = (0..4).find(|d| !s.trace(*d).is_empty()).expect("a trace");
    let mut live = HashSet::new();
    let frames = |e: &TraceEntry| -> Vec<FrameText> {
        e.frames()
            .map(|st| {
                s.stacks
                    .frames_of(st)
                    .map(|f| (f.filename.to_string(), f.line, f.name.to_string()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for e in s.trace(device) {
        match e.action() {
            Action::Alloc => {
                live.insert(e.addr());
                out.push((Action::Alloc, e.size().unwrap(), frames(e)));
            }
            Action::FreeRequested if live.remove(&e.addr()) => {
                out.push((Action::FreeRequested, e.size().unwrap(), Vec::new()));
            }
            _ => {}
        }
    }
    out
}

#[test]
fn replay_reproduces_real_allocations_one_for_one() {
    let Some(dir) = common::real_fixtures() else {
        return;
    };
    let tmp = common::temp_dir("replay");
    for name in [
        "cs336-b-metadata.pickle",
        "adam-small-settings.pickle",
        "cs336-a-2.7b-forward.pickle",
        "memsnapdump-empty-cache.pkl",
        "memsnapdump-expandable-empty-cache.pkl",
        "select-n-multidevice.pickle",
    ] {
        let src = dir.join(name);
        let out = tmp.join(name);
        let o = common::capture(&[
            "--replay",
            src.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{name}: {}", common::stderr(&o));
        let orig = snapshot::read(&std::fs::read(&src).unwrap()).unwrap();
        let again = snapshot::read(&std::fs::read(&out).unwrap()).unwrap();
        let (a, b) = (requests(&orig), requests(&again));
        assert!(a.len() > 10, "{name}: {} requests", a.len());
        assert_eq!(a.len(), b.len(), "{name}: request count");
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert_eq!(x, y, "{name}: request {i}");
        }
        // The file's settings are kept.
        let key = |s: &Snapshot| {
            s.allocator_settings
                .as_ref()
                .and_then(|a| a.get("expandable_segments"))
                .and_then(|v| v.as_bool())
        };
        if orig.allocator_settings.is_some() {
            assert_eq!(key(&orig), key(&again), "{name}");
        }
        // Expandable segments are recognised by the actions when the file has no settings.
        let maps = |s: &Snapshot| s.trace(0).iter().any(|e| e.action() == Action::SegmentMap);
        assert_eq!(maps(&orig), maps(&again), "{name}: segment kind");
    }
}

#[test]
fn replay_under_other_settings_changes_the_layout_not_the_requests() {
    let Some(dir) = common::real_fixtures() else {
        return;
    };
    let tmp = common::temp_dir("replay-set");
    let src = dir.join("cs336-b-metadata.pickle");
    let out = tmp.join("exp.pickle");
    let o = common::capture(&[
        "--replay",
        src.to_str().unwrap(),
        "--set",
        "expandable_segments=true",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let orig = snapshot::read(&std::fs::read(&src).unwrap()).unwrap();
    let again = snapshot::read(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(requests(&orig), requests(&again));
    assert!(again.segments.iter().all(|s| s.is_expandable == Some(true)));
    assert!(again
        .trace(0)
        .iter()
        .any(|e| e.action() == Action::SegmentMap));
}

#[test]
fn replay_of_a_file_without_trace_is_a_clear_error() {
    let Some(dir) = common::real_fixtures() else {
        return;
    };
    let src = dir.join("layoutediting-segment-list.pkl");
    let o = common::capture(&["--replay", src.to_str().unwrap(), "-o", "/tmp/never.pickle"]);
    assert!(!o.status.success());
    let e = common::stderr(&o);
    assert!(e.contains("the file has no trace to replay"), "{e}");
    assert_eq!(e.lines().count(), 1);
}
