//! Reads one snapshot file N times with `snapshot::read` and prints the throughput: a small
//! driver to run under a profiler (`perf record`, `valgrind --tool=callgrind`).
//!
//! `cargo run --release -p memsnap-core --example read_loop -- FILE [N]`

use std::process::ExitCode;
use std::time::Instant;

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
    let start = Instant::now();
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
    let secs = start.elapsed().as_secs_f64() / f64::from(n);
    println!(
        "{path}: {} bytes, {entries} trace entries, {:.3} ms per read, {:.1} MB/s",
        bytes.len(),
        secs * 1e3,
        bytes.len() as f64 / secs / 1e6
    );
    ExitCode::SUCCESS
}
