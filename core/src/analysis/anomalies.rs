//! Things that look wrong in a trace: frees requested but never completed (blocks waiting on
//! other streams' events after `record_stream`), allocations never freed by the end (leak
//! suspects), and out-of-memory entries with the state of memory when they happened.

use super::intervals::device_segments;
use super::pace::{self, Pace, CHUNK};
use super::timeline::Timeline;
use crate::snapshot::{Action, BlockState, Snapshot, StackId};

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PendingFree {
    pub addr: u64,
    pub size: u64,
    /// The `free_requested` entry; `None` for a dump block whose request predates the trace.
    pub free_requested: Option<usize>,
    pub stack: Option<StackId>,
    pub stream: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LeakSuspect {
    pub addr: u64,
    pub size: u64,
    pub requested: u64,
    pub alloc_index: usize,
    /// Entries from the allocation to the end of the trace.
    pub age_entries: usize,
    pub stack: Option<StackId>,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Oom {
    pub index: usize,
    /// Rounded request size the allocator failed on.
    pub requested: Option<u64>,
    /// Bytes the driver reported free.
    pub device_free: Option<u64>,
    /// Allocated and reserved bytes at that entry.
    pub allocated: u64,
    pub reserved: u64,
    pub stack: Option<StackId>,
    pub time_us: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Anomalies {
    pub pending_frees: Vec<PendingFree>,
    pub pending_bytes: u64,
    /// Largest size × age first.
    pub leak_suspects: Vec<LeakSuspect>,
    pub leak_bytes: u64,
    pub ooms: Vec<Oom>,
}

pub fn anomalies(snap: &Snapshot, device: usize, tl: &Timeline) -> Anomalies {
    pace::finish(anomalies_paced(snap, device, tl, &mut Pace::never()))
}

/// [`anomalies`], giving way through `pace` once per allocation and per entry.
pub async fn anomalies_paced(
    snap: &Snapshot,
    device: usize,
    tl: &Timeline,
    pace: &mut Pace<'_>,
) -> Anomalies {
    let n = tl.allocations.trace_len;
    let mut out = Anomalies::default();
    for chunk in tl.allocations.list.chunks(CHUNK) {
        pace.check().await;
        for a in chunk {
            if let (Some(fr), None) = (a.free_requested, a.free_completed) {
                out.pending_frees.push(PendingFree {
                    addr: a.addr,
                    size: a.size,
                    free_requested: Some(fr),
                    stack: a.stack,
                    stream: a.stream,
                });
            }
            if let Some(i) = a.alloc_index {
                if a.end == n {
                    out.leak_suspects.push(LeakSuspect {
                        addr: a.addr,
                        size: a.size,
                        requested: a.requested,
                        alloc_index: i,
                        age_entries: n - i,
                        stack: a.stack,
                    });
                }
            }
        }
    }
    // Pending blocks in the dump that the trace did not see requested.
    for seg in device_segments(snap, device) {
        for (b, addr) in seg
            .blocks
            .iter()
            .zip(super::intervals::block_addresses(seg))
        {
            if b.state == BlockState::ActivePendingFree
                && !out.pending_frees.iter().any(|p| p.addr == addr)
            {
                out.pending_frees.push(PendingFree {
                    addr,
                    size: b.size,
                    free_requested: None,
                    stack: super::intervals::nonempty(snap, b.frames),
                    stream: seg.stream,
                });
            }
        }
    }
    out.pending_bytes = out.pending_frees.iter().map(|p| p.size).sum();
    out.leak_suspects.sort_by(|x, y| {
        (y.size as u128 * y.age_entries as u128)
            .cmp(&(x.size as u128 * x.age_entries as u128))
            .then(x.alloc_index.cmp(&y.alloc_index))
    });
    out.leak_bytes = out.leak_suspects.iter().map(|l| l.size).sum();
    for (c, chunk) in snap.trace(device).chunks(CHUNK).enumerate() {
        pace.check().await;
        for (k, e) in chunk.iter().enumerate() {
            if !e.is(&Action::Oom) {
                continue;
            }
            let i = c * CHUNK + k;
            out.ooms.push(Oom {
                index: i,
                requested: e.size(),
                device_free: e.device_free(),
                // `tl` is this device's timeline; a shorter one reads as 0 rather than panics.
                allocated: tl.allocated.values().get(i).copied().unwrap_or(0),
                reserved: tl.reserved.values().get(i).copied().unwrap_or(0),
                stack: super::intervals::nonempty(snap, e.frames()),
                time_us: e.time_us(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::BlockState::*;

    #[test]
    fn finds_all_three() {
        let mut oom = entry(Action::Oom, 0, 40 * MB);
        oom.set_addr(None);
        oom.set_device_free(Some(3 * MB));
        let t = vec![
            entry(Action::SegmentAlloc, 0x1000_0000, 20 * MB), // 0
            entry(Action::Alloc, 0x1000_0000, 2 * MB),         // 1: leaked, small
            entry(Action::Alloc, 0x1020_0000, 8 * MB),         // 2: pending free
            entry(Action::FreeRequested, 0x1020_0000, 8 * MB), // 3
            entry(Action::Alloc, 0x10A0_0000, 4 * MB),         // 4: leaked, younger
            oom,                                               // 5
        ];
        let segs = vec![
            segment(
                0x1000_0000,
                &[
                    (2 * MB, ActiveAllocated, 2 * MB),
                    (8 * MB, ActivePendingFree, 8 * MB),
                    (4 * MB, ActiveAllocated, 4 * MB),
                    (6 * MB, Inactive, 0),
                ],
            ),
            segment(0x2000_0000, &[(2 * MB, ActivePendingFree, MB)]),
        ];
        let snap = snapshot(segs, t);
        let tl = Timeline::build(&snap, 0);
        let a = anomalies(&snap, 0, &tl);
        assert_eq!(a.pending_frees.len(), 2);
        assert_eq!(a.pending_frees[0].free_requested, Some(3));
        assert_eq!(a.pending_frees[1].free_requested, None);
        assert_eq!(a.pending_bytes, 10 * MB);
        // 2 MiB x 5 entries = 10 MiB·entries; 4 MiB x 2 = 8.
        let leaks: Vec<u64> = a.leak_suspects.iter().map(|l| l.addr).collect();
        assert_eq!(leaks, vec![0x1000_0000, 0x10A0_0000]);
        assert_eq!(a.leak_bytes, 6 * MB);
        assert_eq!(a.ooms.len(), 1);
        let o = &a.ooms[0];
        assert_eq!(
            (o.index, o.requested, o.device_free),
            (5, Some(40 * MB), Some(3 * MB))
        );
        // The second segment predates the trace: reserved counts it too.
        assert_eq!((o.allocated, o.reserved), (6 * MB, 22 * MB));
    }
}
