//! `--replay SNAPSHOT`: the requests of a real run (allocations, frees, their streams, sizes
//! and frames) taken from its trace and run again through the model.
//!
//! A free whose `free_completed` does not follow its `free_requested` at once was held back by
//! events (the block had been used on another stream): it is replayed as a `record_stream` on
//! a side stream plus a free, and completed where the original trace completes it.
//! An `empty_cache()` of the program shows as a run of segment_free/segment_unmap entries that
//! no segment growth follows (a run followed by growth is the allocator's own OOM retry, which
//! the model makes by itself); it is replayed as one.
//!
//! The extraction is core's (`analysis::replay::requests`, which what-if replays use too);
//! this keeps the requests that can run from the trace alone (no frees of blocks allocated
//! before it began). It shares that module's reading of the file's settings.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use memsnap_core::allocator::{Allocator, Config, StreamId};
use memsnap_core::analysis::replay::{device_config, requests, traced_devices};
use memsnap_core::snapshot::{self, Snapshot};

use super::device::Device;
use super::outcome::Outcome;
use super::progress::Progress;
use super::summary::Summary;

pub use memsnap_core::analysis::replay::Request;

pub struct Requests {
    pub requests: Vec<Request>,
    pub config: Config,
    pub snapshot: Snapshot,
    pub device: usize,
    /// Frees of blocks allocated before the trace starts (ring buffer): not replayable.
    pub unmatched_frees: usize,
}

/// Reads `path` and extracts the requests of device `prefer` when it has a trace, else of the
/// first device that has one.
pub fn load(path: &Path, prefer: i64) -> Result<Requests, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("--replay {}: {e}", path.display()))?;
    let snap = snapshot::read(&bytes).map_err(|e| format!("--replay {}: {e}", path.display()))?;
    extract(snap, prefer).map_err(|m| format!("--replay {}: {m}", path.display()))
}

/// The requests of device `prefer` when it has a trace, else of the first device that has one,
/// and the configuration that device is modelled under (the file's settings, its allocator's
/// rules, expandable segments where its segments show them).
pub fn extract(snap: Snapshot, prefer: i64) -> Result<Requests, String> {
    let traced = traced_devices(&snap);
    let device = if traced.contains(&prefer) {
        prefer
    } else {
        *traced
            .first()
            .ok_or("the file has no trace to replay (recorded without _record_memory_history?)")?
    } as usize;
    let config = device_config(&snap, device as i64)
        .map_err(|e| e.to_string())?
        .config;
    let mut out = Vec::new();
    let mut live: HashSet<u64> = HashSet::new();
    let mut pending: HashSet<u64> = HashSet::new();
    let mut unmatched_frees = 0;
    for t in requests(&snap, device as i64) {
        match t.request {
            Request::Alloc { addr, .. } => {
                live.insert(addr);
            }
            Request::Free { addr, deferred } => {
                if !live.remove(&addr) {
                    unmatched_frees += 1;
                    continue;
                }
                // A free with no completion at all in the trace is still pending at the end.
                if deferred {
                    pending.insert(addr);
                }
            }
            // Only completions of the deferred frees above: others free nothing here.
            Request::Complete { addr } if !pending.remove(&addr) => continue,
            Request::Complete { .. } | Request::EmptyCache => {}
        }
        out.push(t.request);
    }
    let requests = out;
    Ok(Requests {
        requests,
        config,
        snapshot: snap,
        device,
        unmatched_frees,
    })
}

/// Runs the requests on `alloc` with the original's frames and takes the snapshot.
pub fn run<D: Device>(
    alloc: &mut Allocator<D>,
    r: &Requests,
    quiet: bool,
    label: String,
) -> Result<Outcome, String> {
    alloc.set_stacks(r.snapshot.stacks.clone());
    let progress = Progress::new(r.requests.len() as u64, "replay", quiet);
    // Original address -> address in this run.
    let mut addrs: HashMap<u64, u64> = HashMap::new();
    let mut streams: HashMap<StreamId, StreamId> = HashMap::from([(0, 0)]);
    let mut side: Option<StreamId> = None;
    let mut failed: HashSet<u64> = HashSet::new();
    let mut ooms = Vec::new();
    for (i, req) in r.requests.iter().enumerate() {
        match req {
            // Private pools are not recreated: the run's blocks all go to the default pools.
            Request::Alloc {
                addr,
                size,
                stream,
                frames,
                pool: _,
            } => {
                let s = match streams.get(stream) {
                    Some(s) => *s,
                    None => {
                        let s = alloc.backing_mut().adopt_stream(*stream)?;
                        streams.insert(*stream, s);
                        s
                    }
                };
                match alloc.malloc(*size, s, *frames) {
                    Ok(a) => {
                        alloc.backing_mut().touch(a, *size, s);
                        addrs.insert(*addr, a);
                        failed.remove(addr);
                    }
                    Err(oom) => {
                        ooms.push(format!("request {i} ({size} bytes): {oom}"));
                        failed.insert(*addr);
                    }
                }
            }
            Request::Free { addr, deferred } => {
                if let Some(a) = addrs.remove(addr) {
                    if *deferred {
                        let s = match side {
                            Some(s) => s,
                            None => {
                                let s = alloc.backing_mut().new_stream()?;
                                side = Some(s);
                                s
                            }
                        };
                        alloc.record_stream(a, s).map_err(|e| e.to_string())?;
                        addrs.insert(*addr ^ PENDING_TAG, a);
                    }
                    alloc.free(a).map_err(|e| e.to_string())?;
                }
            }
            Request::EmptyCache => alloc.empty_cache(),
            Request::Complete { addr } => {
                if let Some(a) = addrs.remove(&(*addr ^ PENDING_TAG)) {
                    alloc.complete_pending_free(a);
                }
            }
        }
        progress.inc();
        alloc.backing_mut().check()?;
    }
    progress.finish();
    let snapshot = alloc.snapshot();
    let mut label = label;
    if r.unmatched_frees > 0 {
        label.push_str(&format!(
            " ({} frees of blocks allocated before the trace starts skipped)",
            r.unmatched_frees
        ));
    }
    let summary = Summary::new(label, alloc.stats(), &snapshot, r.requests.len() as u64);
    Ok(Outcome {
        snapshot,
        summary,
        ooms,
    })
}

/// Keys pending frees apart from live allocations at the same original address (the address
/// can be reused by a new allocation before the pending free completes).
const PENDING_TAG: u64 = 1 << 63;
