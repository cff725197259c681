//! The files the benches read: the real fixtures and the large generated snapshots.
// Each bench binary uses a part of this module.
#![allow(dead_code)]

pub mod cpu_time;
pub mod generated;

use std::path::{Path, PathBuf};

use criterion::Criterion;

use cpu_time::ThreadCpuTime;

/// Criterion measuring thread CPU time (see [`cpu_time`]).
pub fn criterion() -> Criterion<ThreadCpuTime> {
    Criterion::default().with_measurement(ThreadCpuTime)
}

/// Real fixtures: `$MEMSNAP_REAL_FIXTURES`, else `<workspace>/../shared/fixtures/real`.
pub fn real_fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = std::env::var_os("MEMSNAP_REAL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared/fixtures/real"));
    let files = files_in(&dir, |name| {
        name.ends_with(".pickle") || name.ends_with(".pkl")
    });
    if files.is_empty() {
        eprintln!(
            "WARNING: real fixtures not found at {}, skipping",
            dir.display()
        );
    }
    files
}

/// Large generated files (scripts/gen/gen-large.sh) in `<workspace>/target/bench-data`, if made;
/// with `BENCH_QUICK` set, only the 100 MB one.
pub fn large_files() -> Vec<(String, Vec<u8>)> {
    let dir = workspace().join("target/bench-data");
    let quick = std::env::var_os("BENCH_QUICK").is_some_and(|v| !v.is_empty());
    let files = files_in(&dir, |name| {
        name.starts_with("large-")
            && name.ends_with(".pickle")
            && (!quick || name == "large-100mb.pickle")
    });
    if files.is_empty() {
        eprintln!(
            "WARNING: no large files in {} (run scripts/gen/gen-large.sh), skipping them",
            dir.display()
        );
    }
    files
}

/// The biggest file of a set (by bytes).
pub fn largest(files: &[(String, Vec<u8>)]) -> Option<&(String, Vec<u8>)> {
    files.iter().max_by_key(|(_, b)| b.len())
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            match std::fs::read(&p) {
                Ok(bytes) => Some((name, bytes)),
                Err(e) => {
                    eprintln!("WARNING: cannot read {}: {e}, skipping", p.display());
                    None
                }
            }
        })
        .collect()
}
