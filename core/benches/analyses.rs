//! Time of the analyses the viewer runs after a load (timeline build, full diagnosis) on the
//! largest real fixture, and the verdict engine (every candidate fix replayed) on each real
//! fixture of 3 MB or more (its goal: under 1 s of one core's time for a 4 MB file).
//! `cargo bench -p memsnap-core --bench analyses`.

mod support;

use support::cpu_time::ThreadCpuTime;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use memsnap_core::analysis::churn::churn;
use memsnap_core::analysis::diagnosis::diagnose;
use memsnap_core::analysis::fragmentation::fragmentation;
use memsnap_core::analysis::pinning::pinning;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::analysis::verdicts::{verdicts, Inputs};
use memsnap_core::snapshot::read;

fn analyses(c: &mut Criterion<ThreadCpuTime>) {
    let files = support::real_fixtures();
    let Some((name, bytes)) = support::largest(&files) else {
        return;
    };
    let snap = match read(bytes) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("WARNING: {name} does not read ({e}), skipping");
            return;
        }
    };
    let mut g = c.benchmark_group("analyses");
    g.bench_function(format!("timeline/{name}"), |b| {
        b.iter(|| Timeline::build(black_box(&snap), 0))
    });
    g.bench_function(format!("diagnose/{name}"), |b| {
        b.iter(|| diagnose(black_box(&snap), 0))
    });
    g.finish();

    // Every candidate fix replayed (both starts where the trace began late), as the page's
    // diagnostics and `memsnap diagnose` run it; the analyses it is weighed from are made once.
    let mut g = c.benchmark_group("verdicts");
    g.sample_size(10);
    for (name, bytes) in files.iter().filter(|(_, b)| b.len() >= 3_000_000) {
        let Ok(snap) = read(bytes) else { continue };
        let tl = Timeline::build(&snap, 0);
        let settings = snap.allocator_settings.as_ref();
        let frag = fragmentation(&snap, 0);
        let ch = churn(&tl.allocations, settings);
        let pins = pinning(&snap, 0, Some(&tl.allocations));
        let sizes: Vec<u64> = tl
            .allocations
            .list
            .iter()
            .filter(|a| a.alloc_index.is_some())
            .map(|a| a.size)
            .collect();
        let inputs = Inputs {
            fragmentation: &frag,
            churn: Some(&ch),
            pinning: &pins,
            request_sizes: &sizes,
        };
        let v = verdicts(&snap, 0, &inputs);
        eprintln!(
            "{name}: {} replays, {} ranked fixes, {} not a fix",
            v.replays,
            v.fixes.len(),
            v.no_saving.len()
        );
        g.bench_function(name.as_str(), |b| {
            b.iter(|| verdicts(black_box(&snap), 0, &inputs))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = analyses
}
criterion_main!(benches);
