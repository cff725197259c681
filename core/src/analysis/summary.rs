//! Whole-file counts and byte totals: what `memsnap stats` prints (and `--json` emits field
//! for field). tests/py/stats.py computes the same numbers from `pickle.load` with the same
//! definitions, so each definition below is stated exactly.

use std::collections::{BTreeMap, BTreeSet};

use crate::snapshot::{Action, Block, BlockState, Snapshot};

/// Totals over the whole snapshot, all devices together.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Summary {
    /// Number of segments.
    pub segments: u64,
    /// Number of blocks over all segments.
    pub blocks: u64,
    /// Device indices with a segment (a segment without `device` is device 0) or a non-empty
    /// trace, ascending ([`Snapshot::devices`]).
    pub devices: Vec<i64>,
    /// Length of each `device_traces` list, in file order (empty when the key is absent).
    pub trace_entries: Vec<u64>,
    /// Trace entries per `action` string, over all devices.
    pub actions: BTreeMap<String, u64>,
    /// Sum of segment `total_size`.
    pub reserved_bytes: u64,
    /// Sum of `size` of blocks in state `active_allocated`.
    pub allocated_bytes: u64,
    /// Sum of `size` of active blocks (`active_allocated` and `active_pending_free`).
    pub active_bytes: u64,
    /// Sum of [`requested_of`] over active blocks.
    pub requested_bytes: u64,
    /// Largest `size` of an `inactive` block (0 when none).
    pub largest_free_block_bytes: u64,
    /// Sum of `size` of `inactive` blocks.
    pub total_free_bytes: u64,
    /// Number of distinct integers in the set made of the `size` of every `active_allocated`
    /// block and the `size` of every trace entry whose action is `alloc` (entries without a
    /// `size` are skipped). Block sizes are rounded and alloc sizes are as requested, so a
    /// request and its rounding count as two sizes, as the allocator sees both.
    pub distinct_alloc_sizes: u64,
}

/// The same byte totals for one device, for the human-readable output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeviceSummary {
    pub device: i64,
    pub segments: u64,
    pub blocks: u64,
    /// Length of this device's trace (0 when absent).
    pub trace_entries: u64,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub active_bytes: u64,
    pub requested_bytes: u64,
    pub largest_free_block_bytes: u64,
    pub total_free_bytes: u64,
}

/// Pinned host memory (`host_segments`, `host_traces`), counted apart from every device: the
/// same definitions as [`Summary`] over the host allocator's segments and its one trace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostSummary {
    /// Number of host segments.
    pub segments: u64,
    /// Number of blocks over all host segments.
    pub blocks: u64,
    /// Length of `host_traces` (0 when absent).
    pub trace_entries: u64,
    /// Host trace entries per `action` string.
    pub actions: BTreeMap<String, u64>,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub active_bytes: u64,
    pub requested_bytes: u64,
    pub largest_free_block_bytes: u64,
    pub total_free_bytes: u64,
}

impl HostSummary {
    /// `None` when the file has neither `host_segments` nor `host_traces`.
    pub fn of(s: &Snapshot) -> Option<HostSummary> {
        if s.host_segments.is_none() && s.host_traces.is_none() {
            return None;
        }
        let mut h = HostSummary::default();
        let mut bytes = Bytes::default();
        for seg in s.host_segments.iter().flatten() {
            h.segments += 1;
            h.reserved_bytes = h.reserved_bytes.saturating_add(seg.total_size);
            for b in &seg.blocks {
                h.blocks += 1;
                bytes.add(b);
            }
        }
        for e in s.host_traces.iter().flatten() {
            h.trace_entries += 1;
            *h.actions.entry(e.action().as_str().to_owned()).or_insert(0) += 1;
        }
        h.allocated_bytes = bytes.allocated;
        h.active_bytes = bytes.active;
        h.requested_bytes = bytes.requested;
        h.largest_free_block_bytes = bytes.largest_free;
        h.total_free_bytes = bytes.free;
        Some(h)
    }
}

/// Bytes a block's user asked for: `requested_size` when present; for legacy blocks (torch
/// <= 2.0, no `requested_size`) `history[0]["real_size"]`, as MemoryViz.js reads it; else the
/// block's `size`.
pub fn requested_of(b: &Block) -> u64 {
    if let Some(r) = b.requested_size {
        return r;
    }
    b.history_entries()
        .first()
        .and_then(|h0| h0.real_size)
        .unwrap_or(b.size)
}

/// Byte totals of a set of blocks, shared by the whole-file and per-device summaries.
#[derive(Default)]
struct Bytes {
    allocated: u64,
    active: u64,
    requested: u64,
    largest_free: u64,
    free: u64,
}

impl Bytes {
    fn add(&mut self, b: &Block) {
        match b.state {
            BlockState::ActiveAllocated => self.allocated = self.allocated.saturating_add(b.size),
            BlockState::ActivePendingFree => {}
            BlockState::Inactive => {
                self.free = self.free.saturating_add(b.size);
                self.largest_free = self.largest_free.max(b.size);
            }
        }
        if b.state.is_active() {
            self.active = self.active.saturating_add(b.size);
            self.requested = self.requested.saturating_add(requested_of(b));
        }
    }
}

impl Summary {
    pub fn of(s: &Snapshot) -> Summary {
        let mut bytes = Bytes::default();
        let mut reserved = 0u64;
        let mut blocks = 0u64;
        let mut sizes = BTreeSet::new();
        for seg in &s.segments {
            reserved = reserved.saturating_add(seg.total_size);
            for b in &seg.blocks {
                blocks += 1;
                bytes.add(b);
                if b.state == BlockState::ActiveAllocated {
                    sizes.insert(b.size);
                }
            }
        }
        let mut actions = BTreeMap::new();
        let mut trace_entries = Vec::new();
        for trace in s.device_traces.iter().flatten() {
            trace_entries.push(trace.len() as u64);
            for e in trace {
                *actions.entry(e.action().as_str().to_owned()).or_insert(0) += 1;
                if e.is(&Action::Alloc) {
                    sizes.extend(e.size());
                }
            }
        }
        Summary {
            segments: s.segments.len() as u64,
            blocks,
            devices: s.devices(),
            trace_entries,
            actions,
            reserved_bytes: reserved,
            allocated_bytes: bytes.allocated,
            active_bytes: bytes.active,
            requested_bytes: bytes.requested,
            largest_free_block_bytes: bytes.largest_free,
            total_free_bytes: bytes.free,
            distinct_alloc_sizes: sizes.len() as u64,
        }
    }
}

impl DeviceSummary {
    /// One summary per device of [`Snapshot::devices`], ascending.
    pub fn per_device(s: &Snapshot) -> Vec<DeviceSummary> {
        s.devices()
            .into_iter()
            .map(|device| {
                let mut d = DeviceSummary {
                    device,
                    trace_entries: usize::try_from(device).map_or(0, |i| s.trace(i).len() as u64),
                    ..DeviceSummary::default()
                };
                let mut bytes = Bytes::default();
                for seg in s
                    .segments
                    .iter()
                    .filter(|g| g.device.unwrap_or(0) == device)
                {
                    d.segments += 1;
                    d.reserved_bytes = d.reserved_bytes.saturating_add(seg.total_size);
                    for b in &seg.blocks {
                        d.blocks += 1;
                        bytes.add(b);
                    }
                }
                d.allocated_bytes = bytes.allocated;
                d.active_bytes = bytes.active;
                d.requested_bytes = bytes.requested;
                d.largest_free_block_bytes = bytes.largest_free;
                d.total_free_bytes = bytes.free;
                d
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{History, HistoryEntry, Segment, TraceEntry};

    fn block(size: u64, requested: Option<u64>, state: BlockState) -> Block {
        Block {
            address: None,
            size,
            requested_size: requested,
            state,
            frames: None,
            history: None,
            extra: Vec::new(),
        }
    }

    #[test]
    fn totals_follow_the_stated_definitions() {
        let mut legacy = block(2048, None, BlockState::ActivePendingFree);
        legacy.history = Some(History::Entries(vec![HistoryEntry {
            addr: None,
            real_size: Some(1500),
            frames: None,
            extra: Vec::new(),
        }]));
        let seg = |device, blocks: Vec<Block>| Segment {
            device: Some(device),
            total_size: blocks.iter().map(|b| b.size).sum(),
            blocks,
            ..Segment::default()
        };
        let s = Snapshot {
            segments: vec![
                seg(
                    0,
                    vec![block(512, Some(100), BlockState::ActiveAllocated), legacy],
                ),
                seg(
                    1,
                    vec![
                        block(1024, Some(0), BlockState::Inactive),
                        block(4096, Some(0), BlockState::Inactive),
                        block(512, Some(512), BlockState::ActiveAllocated),
                    ],
                ),
            ],
            device_traces: Some(vec![
                vec![
                    TraceEntry::new(Action::Alloc, 1, 100),
                    TraceEntry::new(Action::Alloc, 2, 512),
                ],
                vec![TraceEntry::new(Action::FreeRequested, 1, 100)],
            ]),
            ..Snapshot::default()
        };
        let sum = Summary::of(&s);
        assert_eq!(sum.segments, 2);
        assert_eq!(sum.blocks, 5);
        assert_eq!(sum.devices, vec![0, 1]);
        assert_eq!(sum.trace_entries, vec![2, 1]);
        assert_eq!(sum.actions.get("alloc"), Some(&2));
        assert_eq!(sum.reserved_bytes, 512 + 2048 + 1024 + 4096 + 512);
        assert_eq!(sum.allocated_bytes, 1024);
        assert_eq!(sum.active_bytes, 512 + 2048 + 512);
        assert_eq!(sum.requested_bytes, 100 + 1500 + 512);
        assert_eq!(sum.largest_free_block_bytes, 4096);
        assert_eq!(sum.total_free_bytes, 5120);
        // {512 (blocks, and an alloc entry), 100 (alloc entry)}
        assert_eq!(sum.distinct_alloc_sizes, 2);
        let per = DeviceSummary::per_device(&s);
        assert_eq!(per.len(), 2);
        assert_eq!(
            (per[1].device, per[1].trace_entries, per[1].total_free_bytes),
            (1, 1, 5120)
        );
        assert_eq!(per[0].requested_bytes, 1600);
    }
}
