//! Snapshots the tests build where no real fixture has the case: made by the `capture` binary
//! (the allocator model), never copies of real files.

use std::path::{Path, PathBuf};
use std::process::Command;

use memsnap_core::snapshot::{self, Snapshot, StackId};

use crate::memsnap_bin::capture_path;

/// Runs `capture ARGS -o OUT` and reads OUT back.
pub fn capture(args: &[&str], out: &Path) -> Snapshot {
    let o = Command::new(capture_path())
        .args(args)
        .arg("--quiet")
        .arg("-o")
        .arg(out)
        .output()
        .expect("run capture");
    assert!(
        o.status.success(),
        "capture {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    crate::web::page::load(out)
}

/// A two-GPU file whose out-of-memory error is on cuda:1: device 0 ran the `example` scenario
/// without trouble, device 1 the `oom` scenario until it failed. Written to `dir/NAME`.
pub fn oom_on_cuda1(dir: &Path) -> PathBuf {
    let d0 = capture(&["--scenario", "example"], &dir.join("d0.pickle"));
    let d1 = capture(
        &["--scenario", "oom", "--device", "1"],
        &dir.join("d1.pickle"),
    );
    let merged = merge_devices(d0, d1);
    let path = dir.join("oom-cuda1.pickle");
    std::fs::write(&path, snapshot::write(&merged)).expect("writing oom-cuda1.pickle");
    path
}

/// One file with `a`'s devices and `b`'s (their device indices must differ): segments side by
/// side, traces by index, `b`'s stacks renumbered after `a`'s.
pub fn merge_devices(mut a: Snapshot, b: Snapshot) -> Snapshot {
    let frame_base = a.stacks.frame_count() as u32;
    let stack_base = a.stacks.stack_count() as u32;
    for f in b.stacks.all_frames() {
        a.stacks.push_frame(f.clone());
    }
    for s in b.stacks.all_stacks() {
        let ids = s
            .iter()
            .map(|f| memsnap_core::snapshot::FrameId(f.0 + frame_base))
            .collect();
        a.stacks.push_stack(ids);
    }
    let shift = |s: Option<StackId>| s.map(|s| StackId(s.0 + stack_base));
    for mut seg in b.segments {
        seg.frames = shift(seg.frames);
        for blk in &mut seg.blocks {
            blk.frames = shift(blk.frames);
        }
        a.segments.push(seg);
    }
    let traces = a.device_traces.get_or_insert_with(Vec::new);
    for (i, t) in b.device_traces.unwrap_or_default().into_iter().enumerate() {
        if t.is_empty() {
            continue;
        }
        if traces.len() <= i {
            traces.resize(i + 1, Vec::new());
        }
        assert!(
            traces[i].is_empty(),
            "both files have a trace for device {i}"
        );
        traces[i] = t
            .into_iter()
            .map(|mut e| {
                e.set_frames(shift(e.frames()));
                e
            })
            .collect();
    }
    a
}
