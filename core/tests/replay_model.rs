//! Replay fidelity on traces the model itself wrote: under every setting the model supports,
//! with cross-stream frees, empty_cache, OOM retries and truncated (ring-buffer) traces,
//! replaying a run's trace from its reconstructed start must make every decision the run made
//! and end in the run's segments. Also: what-if under the file's own settings reproduces it.

mod exact_replay;

use exact_replay::assert_exact;
use memsnap_core::allocator::{Allocator, Config, SimBacking};
use memsnap_core::analysis::replay::{replay, what_if, Start};
use memsnap_core::analysis::state_at::StateHistory;
use memsnap_core::snapshot::Snapshot;

const MIB: u64 = 1 << 20;

/// A deterministic random program: allocs of mixed sizes on two streams, frees, some blocks
/// used on a side stream before being freed, occasional empty_cache.
fn run(conf: &str, capacity: u64, steps: usize, max_entries: Option<usize>, seed: u64) -> Snapshot {
    let mut a = Allocator::new(SimBacking::new(capacity), Config::parse(conf).unwrap());
    a.trace_mut().set_max_entries(max_entries);
    a.backing_mut().hold_stream(9);
    let mut live: Vec<u64> = Vec::new();
    let mut x = seed | 1;
    for step in 0..steps {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let size = match x % 10 {
            0..=4 => 1 + (x >> 8) % (1 << 20),
            5..=7 => (1 << 20) + (x >> 8) % (30 << 20),
            _ => (30 << 20) + (x >> 8) % (400 << 20),
        };
        match (x >> 32) % 16 {
            0..=7 => {
                if let Ok(p) = a.malloc(size, ((x >> 50) % 2) as i64, None) {
                    live.push(p);
                }
            }
            8..=13 if !live.is_empty() => {
                let p = live.swap_remove((x >> 20) as usize % live.len());
                if (x >> 44).is_multiple_of(5) {
                    a.record_stream(p, 9).unwrap();
                }
                a.free(p).unwrap();
            }
            14 => {
                a.backing_mut().complete_stream(9);
                a.backing_mut().hold_stream(9);
            }
            15 if step % 7 == 0 => a.empty_cache(),
            _ => {}
        }
    }
    a.check_invariants().unwrap();
    a.snapshot()
}

const CONFS: [&str; 6] = [
    "",
    "max_split_size_mb:64",
    "roundup_power2_divisions:[4:8,64:2,>:1]",
    "expandable_segments:True",
    "max_split_size_mb:128,max_non_split_rounding_mb:40,roundup_power2_divisions:4",
    "expandable_segments:True,roundup_power2_divisions:2",
];

#[test]
fn full_traces_replay_exactly() {
    for conf in CONFS {
        for seed in [1, 7, 99] {
            let s = run(conf, 64 << 30, 3000, None, seed);
            assert_exact(&s, &format!("{conf:?} seed {seed}"));
            assert!(StateHistory::new(&s, 0, &Config::parse(conf).unwrap()).starts_empty());
        }
    }
}

#[test]
fn truncated_traces_replay_exactly_from_the_reconstructed_start() {
    for conf in CONFS {
        for seed in [3, 11] {
            let s = run(conf, 64 << 30, 4000, Some(2500), seed);
            let h = StateHistory::new(&s, 0, &Config::parse(conf).unwrap());
            assert!(
                !h.starts_empty(),
                "{conf:?}: the ring buffer dropped the start"
            );
            assert_exact(&s, &format!("truncated {conf:?} seed {seed}"));
        }
    }
}

#[test]
fn oom_retries_and_ooms_replay_exactly() {
    for conf in ["", "max_split_size_mb:64", "expandable_segments:True"] {
        let s = run(conf, 3 << 30, 3000, None, 5);
        let ooms = s
            .trace(0)
            .iter()
            .filter(|e| e.action().as_str() == "oom")
            .count();
        assert!(ooms > 0, "{conf:?}: the 3 GiB device should run out");
        assert_exact(&s, &format!("small device {conf:?}"));
    }
}

#[test]
fn what_if_under_the_files_settings_reproduces_the_run() {
    let s = run("", 64 << 30, 3000, Some(2000), 13);
    let r = replay(&s, 0).unwrap();
    let w = what_if(&s, 0, Config::default(), Start::Reconstructed, None).unwrap();
    assert_eq!(w.figures.peak_reserved, r.figures.peak_reserved);
    assert_eq!(w.figures.final_reserved, r.figures.final_reserved);
    assert_eq!(w.failed_requests, 0);
    // Expandable segments reserve no more at the peak than the file's settings on this workload.
    let e = what_if(
        &s,
        0,
        Config::parse("expandable_segments:True").unwrap(),
        Start::Clean,
        None,
    )
    .unwrap();
    let c = what_if(&s, 0, Config::default(), Start::Clean, None).unwrap();
    assert!(
        e.figures.peak_reserved <= c.figures.peak_reserved + 40 * MIB,
        "{e:?} vs {c:?}"
    );
    assert_eq!(e.requests, c.requests);
}

#[test]
fn private_pool_traces_replay_exactly() {
    let mut a = Allocator::new(SimBacking::new(64 << 30), Config::default());
    let mut graph = Vec::new();
    let mut eager = Vec::new();
    for round in 0..40u64 {
        a.begin_allocate_to_pool((1, 0), Some(3));
        for k in 0..6 {
            graph.push(a.malloc((k + 1) * 3 * MIB + round * 4096, 3, None).unwrap());
            eager.push(a.malloc((k + 2) * 5 * MIB, 0, None).unwrap());
        }
        a.end_allocate_to_pool((1, 0));
        for p in graph.drain(..3) {
            a.free(p).unwrap();
        }
        for p in eager.drain(..) {
            a.free(p).unwrap();
        }
        if round == 30 {
            for p in graph.drain(..) {
                a.free(p).unwrap();
            }
            a.release_pool((1, 0));
            a.empty_cache();
        }
    }
    let s = a.snapshot();
    assert!(s
        .trace(0)
        .iter()
        .any(|e| e.extra().iter().any(|(k, _)| &**k == "pool_id")));
    assert_exact(&s, "private pool");
}
