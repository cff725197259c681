//! Time of the analyses the viewer runs after a load (timeline build, full diagnosis) on the
//! largest real fixture. `cargo bench -p memsnap-core --bench analyses`.

mod support;

use support::cpu_time::ThreadCpuTime;

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use memsnap_core::analysis::diagnosis::diagnose;
use memsnap_core::analysis::timeline::Timeline;
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
}

criterion_group! {
    name = benches;
    config = support::criterion();
    targets = analyses
}
criterion_main!(benches);
