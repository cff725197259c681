//! Reads one snapshot file N times with `snapshot::read` and prints the throughput (in thread
//! CPU time, as the benches measure it): a small driver to run under a profiler (`perf record`,
//! `valgrind --tool=callgrind`) or to compare two builds quickly.
//!
//! `cargo run --release -p memsnap-core --example read_loop -- FILE [N]`

use std::process::ExitCode;

/// Seconds of CPU time this thread has used.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: read_loop FILE [N]");
        return ExitCode::from(2);
    };
    let n: u32 = match args.get(1).map(|s| s.parse()) {
        None => 10,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("read_loop: N must be a positive integer");
            return ExitCode::from(2);
        }
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("read_loop: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let start = cpu_seconds();
    let mut entries = 0;
    for _ in 0..n {
        match memsnap_core::snapshot::read(&bytes) {
            Ok(s) => {
                entries = s
                    .device_traces
                    .iter()
                    .flatten()
                    .map(Vec::len)
                    .sum::<usize>()
            }
            Err(e) => {
                eprintln!("read_loop: {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let secs = (cpu_seconds() - start) / f64::from(n);
    println!(
        "{path}: {} bytes, {entries} trace entries, {:.3} ms per read, {:.1} MB/s",
        bytes.len(),
        secs * 1e3,
        bytes.len() as f64 / secs / 1e6
    );
    ExitCode::SUCCESS
}
