//! Every built-in scenario: the file `capture` writes unpickles in CPython, reads back with
//! core's reader, and equals the allocator model's own final state.

mod common;

use memsnap_capture::capture_cli::device::Sim;
use memsnap_capture::capture_cli::run::run_scenario;
use memsnap_capture::scenario::builtin;
use memsnap_core::allocator::{Allocator, Config};
use memsnap_core::snapshot::{self, BlockState, Snapshot};

/// (address, size, state) of a block.
type BlockShape = (Option<u64>, u64, BlockState);
/// (address, size, stream, blocks) of a segment.
type SegmentShape = (u64, u64, Option<i64>, Vec<BlockShape>);

fn segment_shape(s: &Snapshot) -> Vec<SegmentShape> {
    s.segments
        .iter()
        .map(|seg| {
            (
                seg.address,
                seg.total_size,
                seg.stream,
                seg.blocks
                    .iter()
                    .map(|b| (b.address, b.size, b.state))
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn every_builtin_scenario_makes_a_faithful_snapshot() {
    let dir = common::temp_dir("scenarios");
    for name in builtin::names() {
        let out = dir.join(format!("{name}.pickle"));
        let o = common::capture(&["--scenario", name, "-q", "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", common::stderr(&o));
        let bytes = std::fs::read(&out).unwrap();

        // The model run in-process, on the same seed and capacity.
        let scenario = builtin::get(name).unwrap().unwrap();
        let cap = scenario.capacity.unwrap();
        let mut alloc = Allocator::new(Sim::new(cap), Config::default());
        let outcome = run_scenario(&mut alloc, &scenario, 0, true, name.to_string()).unwrap();
        let stats = alloc.stats().clone();
        alloc
            .check_invariants()
            .unwrap_or_else(|e| panic!("{name}: model invariants: {e}"));

        // The binary's file is exactly the model's snapshot, written (runs are deterministic).
        assert!(
            bytes == snapshot::write(&outcome.snapshot),
            "{name}: file differs from the model's snapshot"
        );

        // Core's reader sees the model's segments and blocks.
        let read = snapshot::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            segment_shape(&read),
            segment_shape(&outcome.snapshot),
            "{name}"
        );
        let live_segments = alloc.segments();
        assert_eq!(read.segments.len(), live_segments.len(), "{name}");
        let reserved: u64 = read.segments.iter().map(|s| s.total_size).sum();
        assert_eq!(reserved, stats.reserved, "{name}: reserved");
        let allocated: u64 = read
            .segments
            .iter()
            .flat_map(|s| &s.blocks)
            .filter(|b| b.state == BlockState::ActiveAllocated)
            .map(|b| b.size)
            .sum();
        assert_eq!(allocated, stats.allocated, "{name}: allocated");
        for seg in &read.segments {
            let sum: u64 = seg.blocks.iter().map(|b| b.size).sum();
            assert_eq!(
                sum, seg.total_size,
                "{name}: blocks tile segment 0x{:x}",
                seg.address
            );
        }
        assert_eq!(
            read.trace(0).len(),
            outcome.snapshot.trace(0).len(),
            "{name}"
        );
        assert!(read.trace(0).len() > 20, "{name}: trace too short");
        // Every allocation carries its step's frame: the scenario file and a line in it.
        for e in read
            .trace(0)
            .iter()
            .filter(|e| e.action() == snapshot::Action::Alloc)
        {
            let st = e
                .frames()
                .unwrap_or_else(|| panic!("{name}: alloc without frames"));
            let top = read.stacks.frames_of(st).next().expect("a frame");
            assert_eq!(&*top.filename, format!("scenarios/{name}.toml"));
            assert!(top.line > 1);
        }

        // The memsnap CLI reads it and agrees with the model.
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_memsnap"))
            .args(["stats", "--json", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{name}: memsnap stats: {}",
            common::stderr(&o)
        );
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["reserved_bytes"].as_u64(), Some(stats.reserved), "{name}");
        assert_eq!(
            j["allocated_bytes"].as_u64(),
            Some(stats.allocated),
            "{name}"
        );
        assert_eq!(
            j["segments"].as_u64(),
            Some(read.segments.len() as u64),
            "{name}"
        );
        assert_eq!(
            j["trace_entries"][0].as_u64(),
            Some(read.trace(0).len() as u64),
            "{name}"
        );

        // CPython agrees on the counts.
        if let Some((segs, blocks, total, entries)) = common::cpython_counts(&out) {
            assert_eq!(segs, read.segments.len(), "{name}");
            assert_eq!(
                blocks,
                read.segments.iter().map(|s| s.blocks.len()).sum::<usize>(),
                "{name}"
            );
            assert_eq!(total, stats.reserved, "{name}");
            assert_eq!(entries, read.trace(0).len(), "{name}");
        }
    }
}

#[test]
fn multi_stream_leaves_pending_frees_on_their_own_streams() {
    let scenario = builtin::get("multi-stream").unwrap().unwrap();
    let mut alloc = Allocator::new(Sim::new(80_000_000_000), Config::default());
    let out = run_scenario(&mut alloc, &scenario, 0, true, String::new()).unwrap();
    let blocks = || out.snapshot.segments.iter().flat_map(|s| &s.blocks);
    let pending = blocks()
        .filter(|b| b.state == BlockState::ActivePendingFree)
        .count();
    assert_eq!(
        pending, 8,
        "the last two steps' 4 buckets each wait for the comm stream"
    );
    let streams: std::collections::BTreeSet<i64> = out
        .snapshot
        .segments
        .iter()
        .filter_map(|s| s.stream)
        .collect();
    assert_eq!(
        streams.len(),
        2,
        "default and copy streams have segments: {streams:?}"
    );
}

#[test]
fn seed_changes_varying_seqlen_but_not_fixed_shape() {
    let run = |name: &str, seed: u64| {
        let s = builtin::get(name).unwrap().unwrap();
        let mut alloc = Allocator::new(Sim::new(80_000_000_000), Config::default());
        let out = run_scenario(&mut alloc, &s, seed, true, String::new()).unwrap();
        snapshot::write(&out.snapshot)
    };
    assert!(run("varying-seqlen", 1) != run("varying-seqlen", 2));
    assert!(run("varying-seqlen", 1) == run("varying-seqlen", 1));
    assert!(run("fixed-shape", 1) == run("fixed-shape", 2));
}
