//! Replay rate on the generated 1M-entry trace (the replay bench's workload), native; the same
//! code as `replay_wasm` runs in wasm, so `scripts/bench/bench_replay_wasm.sh` compares the two.
//!
//!   cargo run --release -p memsnap-core --example replay_rate [-- RUNS [ENTRIES | FILE]]
//!
//! Prints one JSON object: entries, runs, and the best run's wall and thread-CPU time as
//! entries per second (best of RUNS, as the node side reports; RUNS=1 for a profiler). FILE:
//! a snapshot to replay (device 0) instead of the generated trace.

use std::time::Instant;

use memsnap_core::analysis::replay::replay;

#[path = "../benches/support/generated.rs"]
mod generated;

fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn read_snapshot(path: &str) -> memsnap_core::snapshot::Snapshot {
    let read = std::fs::read(path).map_err(|e| e.to_string());
    match read.and_then(|b| memsnap_core::snapshot::read(&b).map_err(|e| e.to_string())) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("replay_rate: {path}: {e}");
            std::process::exit(2);
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let s = match args.next() {
        None => generated::generated(1_000_000),
        Some(a) => match a.parse() {
            Ok(n) => generated::generated(n),
            Err(_) => read_snapshot(&a),
        },
    };
    let entries = s.trace(0).len();
    let (mut best_wall, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..runs.max(1) {
        let (w, c) = (Instant::now(), cpu_seconds());
        let r = replay(&s, 0);
        let (c, w) = (cpu_seconds() - c, w.elapsed().as_secs_f64());
        match r {
            Ok(r) if r.decisions_matched == r.decisions && r.segments_match => {}
            other => {
                eprintln!("replay_rate: the replay does not match its own trace: {other:?}");
                std::process::exit(1);
            }
        }
        best_wall = best_wall.min(w);
        best_cpu = best_cpu.min(c);
    }
    println!(
        "{{\"entries\": {entries}, \"runs\": {runs}, \"wall_entries_per_s\": {:.0}, \"cpu_entries_per_s\": {:.0}}}",
        entries as f64 / best_wall,
        entries as f64 / best_cpu
    );
}
