//! Replay throughput (trace entries per second of thread CPU time, as the other benches): the
//! largest real fixture, and a generated 1M-entry trace (the model's own output on a random
//! workload, replayed for fidelity); choosing a device's allocator rules on it; the state slider.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use memsnap_core::allocator::Config;
use memsnap_core::analysis::policy::{device_config, device_config_quick};
use memsnap_core::analysis::replay::replay;
use memsnap_core::analysis::state_at::StateHistory;
use memsnap_core::snapshot::Snapshot;

mod support;

use support::cpu_time::ThreadCpuTime;
use support::generated::generated;

fn fixture(name: &str) -> Option<Snapshot> {
    let dir = std::env::var_os("MEMSNAP_REAL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real")
        });
    match std::fs::read(dir.join(name)) {
        Ok(b) => memsnap_core::snapshot::read(&b).ok(),
        Err(_) => {
            eprintln!(
                "WARNING: real fixtures not found at {}, skipping",
                dir.display()
            );
            None
        }
    }
}

fn bench(c: &mut Criterion<ThreadCpuTime>) {
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    if let Some(s) = fixture("cs336-c-medium512-training.pickle") {
        g.throughput(Throughput::Elements(s.trace(0).len() as u64));
        g.bench_function("cs336-c-medium512-training", |b| {
            b.iter(|| replay(&s, 0).unwrap())
        });
    }
    let s = generated(1_000_000);
    let r = replay(&s, 0).unwrap();
    assert_eq!(r.decisions_matched, r.decisions, "{:?}", r.first_mismatch);
    assert!(r.segments_match);
    g.throughput(Throughput::Elements(s.trace(0).len() as u64));
    g.bench_function("generated-1M", |b| b.iter(|| replay(&s, 0).unwrap()));
    g.finish();

    // Which allocator's rules the device follows: every check (what replays take), and the
    // dump's sizes only (what the timeline and the state history take).
    let mut g = c.benchmark_group("policy");
    g.sample_size(10);
    g.throughput(Throughput::Elements(s.trace(0).len() as u64));
    g.bench_function("device_config-1M", |b| {
        b.iter(|| device_config(&s, 0).unwrap())
    });
    g.bench_function("device_config_quick-1M", |b| {
        b.iter(|| device_config_quick(&s, 0).unwrap())
    });
    g.finish();

    // The viewer's "state at entry N" slider: one history, then random positions.
    let mut g = c.benchmark_group("state_at");
    g.sample_size(10);
    let cfg = Config::default();
    g.bench_function("history-build-1M", |b| {
        b.iter(|| StateHistory::new(&s, 0, &cfg).len())
    });
    let h = StateHistory::new(&s, 0, &cfg);
    let mut n: usize = 12345;
    g.bench_function("slider-move-1M", |b| {
        b.iter(|| {
            n = (n * 7919 + 104_729) % (h.len() + 1);
            h.state_before(n).len()
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = bench
}
criterion_main!(benches);
