//! Reader throughput on the real fixtures next to CPython's `pickle.loads`, measured in the same
//! run. A measurement, not a pass/fail gate (machines differ): run it in release with
//! `cargo test --release -p memsnap-tests --test throughput -- --ignored --nocapture`.
//!
//! Both sides count the CPU time of the measuring thread (Linux `/proc/thread-self/schedstat`
//! here, `time.thread_time()` in Python), so a machine shared with other jobs skews neither.

use std::time::Instant;

/// Nanoseconds this thread has run on a CPU, or wall time where Linux's schedstat is missing.
fn cpu_ns(wall: Instant) -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or_else(|| wall.elapsed().as_nanos() as u64)
}

use memsnap_core::snapshot::read;
use memsnap_tests::{fixtures, python};

/// Best of 5 rounds of at least 0.2 s each, in MB/s (10^6 bytes of pickle per second).
fn best_rate(bytes: &[u8]) -> f64 {
    let mut best = 0.0f64;
    for _ in 0..5 {
        let wall = Instant::now();
        let (mut n, start) = (0u32, cpu_ns(wall));
        let secs = loop {
            let s = read(bytes).expect("fixture reads");
            std::hint::black_box(&s);
            n += 1;
            let secs = (cpu_ns(wall) - start) as f64 / 1e9;
            if secs >= 0.2 {
                break secs;
            }
        };
        best = best.max(f64::from(n) * bytes.len() as f64 / secs / 1e6);
    }
    best
}

#[test]
#[ignore = "measurement; run in release with --ignored --nocapture"]
fn read_throughput_vs_cpython() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let paths: Vec<&std::path::Path> = files.iter().map(|p| p.as_path()).collect();
    let cpython = python::run("pickle_speed.py", &paths);
    println!(
        "{:<40} {:>10} {:>10} {:>10} {:>7}",
        "file", "bytes", "memsnap", "CPython", "ratio"
    );
    let (mut ours_total, mut theirs_total) = (0.0, 0.0);
    for (f, line) in files.iter().zip(cpython.lines()) {
        let bytes = std::fs::read(f).expect("read");
        let ours = best_rate(&bytes);
        let theirs: f64 = line
            .rsplit(' ')
            .next()
            .and_then(|r| r.parse().ok())
            .expect("python rate");
        ours_total += bytes.len() as f64 / ours;
        theirs_total += bytes.len() as f64 / theirs;
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        println!(
            "{name:<40} {:>10} {ours:>8.0}MB/s {theirs:>6.0}MB/s {:>6.1}x",
            bytes.len(),
            ours / theirs
        );
    }
    println!(
        "all files: {:.1}x CPython's total time",
        theirs_total / ours_total
    );
}
