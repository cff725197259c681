//! Read throughput (MB/s of pickle input) of `snapshot::read` (parse + intern frames and
//! stacks + typed trace), and of the viewer's whole load pipeline (read + the per-device
//! timeline index), per real fixture and on the large generated files.
//!
//! `cargo bench -p memsnap-core --bench read`; scripts/bench/bench.sh runs it and tabulates.

mod support;

use support::cpu_time::ThreadCpuTime;

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::read;

fn read_files(
    c: &mut Criterion<ThreadCpuTime>,
    group: &str,
    files: &[(String, Vec<u8>)],
    large: bool,
) {
    let mut g = c.benchmark_group(group);
    if large {
        // Seconds per iteration: 10 single-iteration samples (criterion's minimum; its default
        // linear sampling would run 55 iterations).
        g.sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(1))
            .measurement_time(Duration::from_secs(1));
    } else {
        // 30 benchmarks on a shared machine: short runs, the real fixtures take milliseconds.
        g.warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(2));
    }
    for (name, bytes) in files {
        if let Err(e) = read(bytes) {
            eprintln!("WARNING: {name} does not read ({e}), skipping");
            continue;
        }
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(BenchmarkId::new("read", name), bytes, |b, bytes| {
            b.iter(|| read(black_box(bytes)))
        });
        g.bench_with_input(BenchmarkId::new("pipeline", name), bytes, |b, bytes| {
            b.iter(|| {
                let snap = read(black_box(bytes)).ok()?;
                let devices = snap.device_traces.as_ref().map_or(0, Vec::len);
                let timelines: Vec<Timeline> =
                    (0..devices).map(|d| Timeline::build(&snap, d)).collect();
                Some((snap, timelines))
            })
        });
    }
    g.finish();
}

fn real(c: &mut Criterion<ThreadCpuTime>) {
    read_files(c, "real", &support::real_fixtures(), false);
}

fn large(c: &mut Criterion<ThreadCpuTime>) {
    read_files(c, "large", &support::large_files(), true);
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = real, large
}
criterion_main!(benches);
