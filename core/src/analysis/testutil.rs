//! Builders for the synthetic snapshots the unit tests use (right answers known by construction).

use std::sync::Arc;

use super::intervals::Allocation;

use crate::snapshot::{
    Action, Block, BlockState, Frame, Segment, SegmentType, Snapshot, StackId, TraceEntry,
};

pub const MB: u64 = 1 << 20;

/// An allocation live after entries `start..end`, of `size` bytes (for the range indexes).
pub fn lifetime(start: usize, end: usize, size: u64) -> Allocation {
    Allocation {
        addr: 0,
        requested: size,
        size,
        size_exact: true,
        new_segment: false,
        start,
        end,
        alloc_index: Some(start),
        free_requested: None,
        free_completed: None,
        stack: None,
        stream: None,
    }
}

/// Random allocations for the range indexes' proptests, ordered by start as
/// `intervals::allocations` lists them: starts below `starts`, lifetimes below `lengths`.
pub fn lifetimes(
    starts: usize,
    lengths: usize,
    sizes: std::ops::Range<u64>,
    count: std::ops::Range<usize>,
) -> impl proptest::strategy::Strategy<Value = Vec<Allocation>> {
    use proptest::strategy::Strategy;
    proptest::collection::vec((0..starts, 0..lengths, sizes), count).prop_map(|mut spans| {
        spans.sort_by_key(|s| s.0);
        spans
            .into_iter()
            .map(|(s, l, size)| lifetime(s, s + l, size))
            .collect()
    })
}

/// A segment at `addr` with blocks `(size, state, requested)` laid out back to back.
pub fn segment(addr: u64, blocks: &[(u64, BlockState, u64)]) -> Segment {
    let mut a = addr;
    let mut out = Vec::new();
    for &(size, state, req) in blocks {
        out.push(Block {
            address: Some(a),
            size,
            requested_size: Some(req),
            state,
            frames: None,
            history: None,
            extra: Vec::new(),
        });
        a += size;
    }
    let total = a - addr;
    let alloc: u64 = out
        .iter()
        .filter(|b| b.state == BlockState::ActiveAllocated)
        .map(|b| b.size)
        .sum();
    let active: u64 = out
        .iter()
        .filter(|b| b.state.is_active())
        .map(|b| b.size)
        .sum();
    Segment {
        device: Some(0),
        address: addr,
        total_size: total,
        allocated_size: Some(alloc),
        active_size: Some(active),
        requested_size: None,
        stream: Some(0),
        segment_type: Some(if total <= 2 * MB {
            SegmentType::Small
        } else {
            SegmentType::Large
        }),
        segment_pool_id: Some((0, 0)),
        is_expandable: Some(false),
        frames: None,
        blocks: out,
        extra: Vec::new(),
    }
}

pub fn entry(action: Action, addr: u64, size: u64) -> TraceEntry {
    TraceEntry::new(action, addr, size)
}

pub fn with_stack(mut e: TraceEntry, s: StackId) -> TraceEntry {
    e.set_frames(Some(s));
    e
}

/// A stack of Python frames `(file, line, name)`, innermost first.
pub fn stack(snap: &mut Snapshot, frames: &[(&str, i64, &str)]) -> StackId {
    let ids: Vec<_> = frames
        .iter()
        .map(|(f, l, n)| {
            snap.stacks.push_frame(Frame {
                filename: Arc::from(*f),
                line: *l,
                name: Arc::from(*n),
                extra: Vec::new(),
            })
        })
        .collect();
    snap.stacks.push_stack(ids.into())
}

/// alloc + free_requested + free_completed entries for a sequence of `(addr, size)` pairs,
/// each freed right after it is allocated.
pub fn alloc_free(addr: u64, size: u64) -> [TraceEntry; 3] {
    [
        entry(Action::Alloc, addr, size),
        entry(Action::FreeRequested, addr, size),
        entry(Action::FreeCompleted, addr, size),
    ]
}

pub fn snapshot(segments: Vec<Segment>, trace: Vec<TraceEntry>) -> Snapshot {
    Snapshot {
        segments,
        device_traces: Some(vec![trace]),
        ..Snapshot::default()
    }
}

/// `rounds` of an `a`-byte then a `b`-byte allocation, each freed at once and each on a new
/// segment (as when the holes they leave are pinned): the costly alternating pattern.
pub fn costly_alternation(rounds: u64, a: u64, b: u64) -> Vec<TraceEntry> {
    let mut t = Vec::new();
    for k in 0..rounds {
        let (x, y) = (
            0x1_0000_0000 + k * 0x1000_0000,
            0x2_0000_0000 + k * 0x1000_0000,
        );
        t.push(entry(Action::SegmentAlloc, x, a));
        t.extend(alloc_free(x, a));
        t.push(entry(Action::SegmentAlloc, y, b));
        t.extend(alloc_free(y, b));
    }
    t
}
