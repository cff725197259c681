//! Allocation lifetimes: every allocation of a device's trace as an interval of entry indices,
//! with its address, sizes and stack. Timeline, peak, flame graph, anomalies and the planner
//! all read this one list.
//!
//! Index convention: an allocation is live *after* entry `i` when `start <= i < end`. `start` is
//! its `alloc` entry (0 when it was allocated before the trace began), `end` is the entry where
//! the user freed it (`free_requested`, or `free_completed` when no request was recorded), or the
//! trace length when it is still allocated at the dump.
//!
//! Block sizes: PyTorch's `allocated` counts the block size, but `alloc` entries carry the
//! requested size. The best exact source is used: an allocation still live at the dump takes its
//! block's size from the dump; one that directly follows the `segment_alloc` of its own address
//! takes the whole segment when the allocator would not split it; the rest take
//! `round_size(requested)` under the file's `roundup_power2_divisions`. The last is exact for
//! small-pool and expandable blocks (they split whenever 512 B remain) and for split large
//! blocks, and may undercount a large-pool block that absorbed an unsplit remainder (at most
//! 1 MiB + 512 B) of a reused free block; `size_exact` is false where that can happen. Measured
//! on the allocator model's traces: allocated is never over, and at worst 0.7% under.

use super::sizes::{splits, Rounding, SMALL_SIZE};
use crate::snapshot::{Action, BlockState, Segment, Snapshot, StackId};

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Allocation {
    pub addr: u64,
    /// Bytes the user asked for (from the trace, or the dump block's `requested_size`).
    pub requested: u64,
    /// Block bytes as PyTorch's `allocated` counts them (see the module note).
    pub size: u64,
    pub size_exact: bool,
    /// The allocation needed a new segment (its `alloc` directly follows the `segment_alloc`
    /// of its address, or a `segment_map`): no cached block fitted.
    pub new_segment: bool,
    pub start: usize,
    pub end: usize,
    /// The `alloc` entry; `None` when allocated before the trace.
    pub alloc_index: Option<usize>,
    pub free_requested: Option<usize>,
    pub free_completed: Option<usize>,
    pub stack: Option<StackId>,
    pub stream: Option<i64>,
}

impl Allocation {
    pub fn is_live_after(&self, i: usize) -> bool {
        self.start <= i && i < self.end
    }

    /// Entries it lived for (at least 1, so bytes x lifetime never vanishes).
    pub fn lifetime(&self) -> u64 {
        (self.end.saturating_sub(self.start)).max(1) as u64
    }
}

#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Allocations {
    /// Ordered by `start`, then by first appearance.
    pub list: Vec<Allocation>,
    pub trace_len: usize,
    /// Active allocated blocks of the dump that the trace left open at the end, matched by address.
    pub matched_dump_blocks: usize,
    /// Allocations the trace leaves open but the dump has no active block for (a dump/trace
    /// mismatch, e.g. recording stopped before the dump).
    pub unmatched_open: usize,
}

/// Segments of one device (segments without a `device` key count as device 0).
pub fn device_segments(snap: &Snapshot, device: usize) -> impl Iterator<Item = &Segment> + '_ {
    snap.segments
        .iter()
        .filter(move |s| s.device.unwrap_or(0) == device as i64)
}

/// Block addresses: explicit, or the prefix sum of sizes (torch < 2.1).
pub fn block_addresses(seg: &Segment) -> impl Iterator<Item = u64> + '_ {
    let mut next = seg.address;
    seg.blocks.iter().map(move |b| {
        let a = b.address.unwrap_or(next);
        next = a + b.size;
        a
    })
}

/// A stack with no frames carries no context: treated as absent.
pub fn nonempty(snap: &Snapshot, s: Option<StackId>) -> Option<StackId> {
    s.filter(|s| !snap.stacks.stack(*s).is_empty())
}

fn is_free_request(a: &Action) -> bool {
    matches!(a, Action::FreeRequested) || matches!(a, Action::Other(s) if &**s == "free")
}

pub fn allocations(snap: &Snapshot, device: usize) -> Allocations {
    let trace = snap.trace(device);
    let n = trace.len();
    let rounding = Rounding::for_device(snap, device);
    let expandable = rounding.config.expandable_segments;
    let mut list: Vec<Allocation> = Vec::new();
    // Address -> index in `list` of the allocation not yet completely freed there.
    // foldhash, not SipHash: this map is most of building a timeline at 1M entries.
    let mut open: foldhash::HashMap<u64, usize> = foldhash::HashMap::default();
    let mut pre_trace: Vec<usize> = Vec::new();
    for (i, e) in trace.iter().enumerate() {
        let Some(addr) = e.addr() else { continue };
        let size = e.size().unwrap_or(0);
        match &e.action() {
            Action::Alloc => {
                if let Some(prev) = open.remove(&addr) {
                    // A reuse without a recorded free: close the old one here.
                    let p = &mut list[prev];
                    if p.end == n {
                        p.end = i;
                    }
                }
                let rounded = rounding.round(size);
                let mut block = rounded;
                let mut exact = false;
                let new_segment = i > 0
                    && match trace[i - 1].action() {
                        Action::SegmentAlloc => trace[i - 1].addr() == Some(addr),
                        Action::SegmentMap => true,
                        _ => false,
                    };
                if i > 0 && !expandable {
                    let p = &trace[i - 1];
                    if p.is(&Action::SegmentAlloc) && p.addr() == Some(addr) {
                        let seg = p.size().unwrap_or(0);
                        if seg >= rounded && !splits(seg, rounded) {
                            block = seg;
                        }
                        exact = true;
                    }
                }
                open.insert(addr, list.len());
                list.push(Allocation {
                    addr,
                    requested: size,
                    size: block,
                    // Small-pool and expandable blocks split whenever 512 B remain: exact.
                    size_exact: exact || expandable || rounded <= SMALL_SIZE,
                    new_segment,
                    start: i,
                    end: n,
                    alloc_index: Some(i),
                    free_requested: None,
                    free_completed: None,
                    stack: nonempty(snap, e.frames()),
                    stream: e.stream(),
                });
            }
            a if is_free_request(a) || *a == Action::FreeCompleted => {
                let completed = *a == Action::FreeCompleted;
                let idx = match open.get(&addr) {
                    Some(&k) => k,
                    None => {
                        // Freed but allocated before the trace began.
                        let rounded = rounding.round(size);
                        list.push(Allocation {
                            addr,
                            requested: size,
                            size: rounded,
                            size_exact: expandable || rounded <= SMALL_SIZE,
                            new_segment: false,
                            start: 0,
                            end: i,
                            alloc_index: None,
                            free_requested: None,
                            free_completed: None,
                            stack: nonempty(snap, e.frames()),
                            stream: e.stream(),
                        });
                        pre_trace.push(list.len() - 1);
                        open.insert(addr, list.len() - 1);
                        list.len() - 1
                    }
                };
                let al = &mut list[idx];
                if completed {
                    al.free_completed = Some(i);
                    if al.free_requested.is_none() {
                        al.end = al.end.min(i);
                    }
                    open.remove(&addr);
                } else {
                    al.free_requested = Some(i);
                    al.end = al.end.min(i);
                    if matches!(a, Action::Other(_)) {
                        open.remove(&addr);
                    }
                }
            }
            _ => {}
        }
    }
    // Open at the end: take exact sizes from the dump; dump blocks the trace never saw are
    // allocations from before the trace, live throughout.
    let mut matched = 0;
    let mut dump_pre = Vec::new();
    for seg in device_segments(snap, device) {
        for (b, addr) in seg.blocks.iter().zip(block_addresses(seg)) {
            if b.state != BlockState::ActiveAllocated {
                continue;
            }
            match open.get(&addr).copied() {
                Some(k) if list[k].end == n => {
                    let al = &mut list[k];
                    al.size = b.size;
                    al.size_exact = true;
                    if al.stack.is_none() {
                        al.stack = nonempty(snap, b.frames);
                    }
                    open.remove(&addr);
                    matched += 1;
                }
                _ => dump_pre.push(Allocation {
                    addr,
                    requested: b.requested_size.unwrap_or(b.size),
                    size: b.size,
                    size_exact: true,
                    new_segment: false,
                    start: 0,
                    end: n,
                    alloc_index: None,
                    free_requested: None,
                    free_completed: None,
                    stack: nonempty(snap, b.frames),
                    stream: seg.stream,
                }),
            }
        }
    }
    let unmatched_open = open.values().filter(|&&k| list[k].end == n).count();
    // Pre-trace allocations first (they were there before entry 0), then trace order.
    let mut ordered = Vec::with_capacity(list.len() + dump_pre.len());
    let is_pre: Vec<bool> = {
        let mut v = vec![false; list.len()];
        for k in &pre_trace {
            v[*k] = true;
        }
        v
    };
    ordered.extend(pre_trace.iter().map(|&k| list[k].clone()));
    ordered.extend(dump_pre);
    ordered.extend(
        list.into_iter()
            .zip(is_pre)
            .filter(|(_, p)| !p)
            .map(|(a, _)| a),
    );
    Allocations {
        list: ordered,
        trace_len: n,
        matched_dump_blocks: matched,
        unmatched_open,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::BlockState::*;

    #[test]
    fn lifetimes_and_sizes() {
        let mut t = vec![
            entry(Action::FreeRequested, 0x9000, 100), // 0: pre-trace alloc freed
            entry(Action::FreeCompleted, 0x9000, 100), // 1
            entry(Action::SegmentAlloc, 0x100000, 12 * MB), // 2
            entry(Action::Alloc, 0x100000, 11 * MB),   // 3: takes the whole 12 MiB
        ];
        t.extend(alloc_free(0x200000, 1000)); // 4,5,6
        t.push(entry(Action::Alloc, 0x300000, 700)); // 7: live at end
        let segs = vec![
            segment(0x100000, &[(12 * MB, ActiveAllocated, 11 * MB)]),
            segment(
                0x300000,
                &[(1024, ActiveAllocated, 700), (2 * MB - 1024, Inactive, 0)],
            ),
            // An active block the trace never mentions.
            segment(0x500000, &[(2 * MB, ActiveAllocated, 2 * MB)]),
        ];
        let snap = snapshot(segs, t);
        let a = allocations(&snap, 0);
        assert_eq!(a.trace_len, 8);
        assert_eq!(a.list.len(), 5);
        let pre = &a.list[0];
        assert_eq!(
            (pre.addr, pre.start, pre.end, pre.size),
            (0x9000, 0, 0, 512)
        );
        assert_eq!(pre.free_completed, Some(1));
        let dump_only = &a.list[1];
        assert_eq!(
            (dump_only.addr, dump_only.start, dump_only.end),
            (0x500000, 0, 8)
        );
        let big = &a.list[2];
        assert_eq!(
            (big.size, big.start, big.end, big.size_exact),
            (12 * MB, 3, 8, true)
        );
        let short = &a.list[3];
        assert_eq!((short.size, short.start, short.end), (1024, 4, 5));
        assert!(short.is_live_after(4) && !short.is_live_after(5));
        let last = &a.list[4];
        assert_eq!((last.size, last.start, last.end), (1024, 7, 8));
        assert_eq!(a.matched_dump_blocks, 2);
        assert_eq!(a.unmatched_open, 0);
    }

    #[test]
    fn pending_free_stays_open_until_completed() {
        let t = vec![
            entry(Action::Alloc, 0x1000, 512),
            entry(Action::FreeRequested, 0x1000, 512),
        ];
        let snap = snapshot(vec![], t);
        let a = allocations(&snap, 0);
        assert_eq!(a.list[0].end, 1);
        assert_eq!(a.list[0].free_completed, None);
    }
}
