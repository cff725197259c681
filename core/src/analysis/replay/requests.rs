//! The requests of a real run, read from its trace: what a program asked of the allocator
//! (allocations with their sizes, streams, frames and pools; frees; the completion of frees
//! that waited for other streams; `empty_cache()` calls), without the allocator's own decisions.
//! What-if replays and `capture --replay` both run these.

use crate::allocator::{MempoolId, StreamId};
use crate::analysis::pace::{self, Pace, CHUNK};
use crate::snapshot::{Action, StackId, TraceEntry};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `addr` is the address the run got: the key later frees use.
    Alloc {
        addr: u64,
        size: u64,
        stream: StreamId,
        frames: Option<StackId>,
        /// Private pool (graph capture, MemPool); (0, 0) = the default pools.
        pool: MempoolId,
    },
    /// `free` of the block at `addr` (which may have been allocated before the trace began).
    Free {
        addr: u64,
        /// The run's free waited for events (the block was used on another stream): replay it
        /// as a `record_stream` plus a free, completed by a later [`Request::Complete`].
        deferred: bool,
    },
    /// A `free_completed` that did not follow its free at once: a deferred free (or one pending
    /// when the trace began) completes here.
    Complete { addr: u64 },
    /// `torch.cuda.empty_cache()`.
    EmptyCache,
}

/// A request and the trace index of the entry it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Traced {
    pub entry: usize,
    pub request: Request,
}

/// The requests of a trace, in order. `empty_cache_at` are the trace indices where the program
/// called empty_cache, ascending (see [`super::empty_cache_calls`]).
pub fn requests_of(entries: &[TraceEntry], empty_cache_at: &[usize]) -> Vec<Traced> {
    pace::finish(requests_of_paced(
        entries,
        empty_cache_at,
        &mut Pace::never(),
    ))
}

/// [`requests_of`], giving way through `pace` (46 ms at a million entries).
pub async fn requests_of_paced(
    entries: &[TraceEntry],
    empty_cache_at: &[usize],
    pace: &mut Pace<'_>,
) -> Vec<Traced> {
    let mut out = Vec::with_capacity(entries.len() / 2);
    let mut calls = empty_cache_at.iter().copied().peekable();
    for (c, chunk) in entries.chunks(CHUNK).enumerate() {
        pace.check().await;
        for (k, e) in chunk.iter().enumerate() {
            let i = c * CHUNK + k;
            while calls.next_if(|&at| at <= i).is_some() {
                out.push(Traced {
                    entry: i,
                    request: Request::EmptyCache,
                });
            }
            let addr = e.addr().unwrap_or(0);
            let request = match e.action() {
                Action::Alloc => Request::Alloc {
                    addr,
                    size: e.size().unwrap_or(0),
                    stream: e.stream().unwrap_or(0),
                    frames: e.frames(),
                    pool: pool_of(e),
                },
                Action::FreeRequested => Request::Free {
                    addr,
                    deferred: !completes_at(entries, i + 1, addr),
                },
                Action::FreeCompleted if !(i > 0 && frees_at(entries, i - 1, addr)) => {
                    Request::Complete { addr }
                }
                _ => continue,
            };
            out.push(Traced { entry: i, request });
        }
    }
    out
}

/// Where the program called empty_cache when the fidelity replay cannot tell (another
/// allocator's trace): a run of segment_free/segment_unmap entries that no segment growth or
/// OOM follows (a run followed by growth is the allocator's own retry after a failed
/// cudaMalloc, which a model makes by itself).
pub fn empty_cache_by_runs(entries: &[TraceEntry]) -> Vec<usize> {
    let release = |e: &TraceEntry| matches!(e.action(), Action::SegmentFree | Action::SegmentUnmap);
    let mut out = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        if !release(&entries[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < entries.len() && release(&entries[i]) {
            i += 1;
        }
        let growth_follows = entries.get(i).is_some_and(|n| {
            matches!(
                n.action(),
                Action::SegmentAlloc | Action::SegmentMap | Action::Oom
            )
        });
        if !growth_follows {
            out.push(start);
        }
    }
    out
}

/// Entry `i` completes the free of `addr` (then that free did not wait for events).
pub(super) fn completes_at(entries: &[TraceEntry], i: usize, addr: u64) -> bool {
    entries
        .get(i)
        .is_some_and(|n| n.action() == Action::FreeCompleted && n.addr() == Some(addr))
}

fn frees_at(entries: &[TraceEntry], i: usize, addr: u64) -> bool {
    entries
        .get(i)
        .is_some_and(|n| n.action() == Action::FreeRequested && n.addr() == Some(addr))
}

/// The private pool of an entry (newer torch writes `pool_id`); (0, 0) = default pools.
pub fn pool_of(e: &TraceEntry) -> MempoolId {
    if e.extra().is_empty() {
        return (0, 0);
    }
    e.extra()
        .iter()
        .find(|(k, _)| &**k == "pool_id")
        .and_then(|(_, v)| match v.as_seq() {
            Some([a, b]) => Some((a.as_i64()?, b.as_i64()?)),
            _ => None,
        })
        .unwrap_or((0, 0))
}
