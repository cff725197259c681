//! A bounded pool of workers that turns rank files into `RankSummary`s.
//!
//! Each worker takes the next queued file, parses it, answers its summary and drops the
//! snapshot, so the page's memory is bounded by the pool's size and the largest file, not by
//! how many files there are (one worker per file stopped at ~120 of 256 ranks: each held its
//! whole snapshot). A worker that dies (out of memory, a panic) fails its file and is replaced;
//! the rest go on. When the queue is empty and every worker idle, the pool stops them all:
//! a wasm instance's memory never shrinks, so only ending the worker gives it back.
//!
//! Not gloo-worker: its messages go through its own serde codec, and a `File` cannot be
//! serialised; each file's bytes would have to be read on the page and copied into the worker,
//! doubling the memory per file. Here a `File` rides as a structured-clone attachment (a handle,
//! not the bytes) and the worker reads it in slices (`worker::file`).

#[cfg(target_arch = "wasm32")]
mod pool;
#[cfg(target_arch = "wasm32")]
pub use pool::{Job, WorkerPool};

/// The most workers at once: each may grow to ~2.5× the largest file it parsed
/// (`size_limit`), so more than this risks the tab's memory for little gain in speed.
pub const MAX_WORKERS: usize = 8;

/// How many workers to run: the browser's logical cores, at least one, at most `MAX_WORKERS`,
/// and never more than there are files.
pub fn pool_size(hardware_concurrency: f64, files: usize) -> usize {
    let cores = if hardware_concurrency.is_finite() && hardware_concurrency >= 1.0 {
        hardware_concurrency as usize
    } else {
        1
    };
    cores.clamp(1, MAX_WORKERS).min(files.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_size_follows_cores_within_bounds() {
        assert_eq!(pool_size(4.0, 100), 4);
        assert_eq!(pool_size(64.0, 100), MAX_WORKERS);
        assert_eq!(pool_size(4.0, 2), 2, "never more workers than files");
        assert_eq!(pool_size(0.0, 10), 1);
        assert_eq!(pool_size(f64::NAN, 10), 1);
        assert_eq!(pool_size(8.0, 0), 1);
    }
}
