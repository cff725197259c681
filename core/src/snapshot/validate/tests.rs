use super::*;
use crate::snapshot::model::{Block, Segment, TraceEntry};

fn block(addr: u64, size: u64, state: BlockState) -> Block {
    Block {
        address: Some(addr),
        size,
        requested_size: Some(size),
        state,
        frames: None,
        history: None,
        extra: Vec::new(),
    }
}

fn seg(addr: u64, total: u64, blocks: Vec<Block>) -> Segment {
    let allocated = blocks
        .iter()
        .filter(|b| b.state == BlockState::ActiveAllocated)
        .map(|b| b.size)
        .sum();
    Segment {
        address: addr,
        total_size: total,
        allocated_size: Some(allocated),
        active_size: Some(allocated),
        requested_size: Some(allocated),
        blocks,
        ..Segment::default()
    }
}

fn kinds(s: &Snapshot) -> Vec<WarningKind> {
    validate(s).into_iter().map(|w| w.kind).collect()
}

fn with_trace(segments: Vec<Segment>, trace: Vec<TraceEntry>) -> Snapshot {
    Snapshot {
        segments,
        device_traces: Some(vec![trace]),
        ..Snapshot::default()
    }
}

#[test]
fn consistent_segment_has_no_warning() {
    let s = with_trace(
        vec![seg(
            0x1000,
            0x800,
            vec![
                block(0x1000, 0x200, BlockState::ActiveAllocated),
                block(0x1200, 0x600, BlockState::Inactive),
            ],
        )],
        vec![
            TraceEntry::new(Action::Alloc, 0x1000, 0x200),
            TraceEntry::new(Action::FreeRequested, 0x1200, 0x10),
            TraceEntry::new(Action::FreeCompleted, 0x1200, 0x10),
        ],
    );
    assert_eq!(validate(&s), vec![]);
}

#[test]
fn block_outside_overlap_and_sum() {
    let s = with_trace(
        vec![seg(
            0x1000,
            0x800,
            vec![
                block(0x1000, 0x400, BlockState::Inactive),
                block(0x1200, 0x400, BlockState::Inactive),
                block(0x1700, 0x200, BlockState::Inactive),
            ],
        )],
        vec![],
    );
    let k = kinds(&s);
    assert!(k.contains(&WarningKind::BlockOutsideSegment), "{k:?}");
    assert!(k.contains(&WarningKind::BlocksOverlap), "{k:?}");
    assert!(k.contains(&WarningKind::BlockSizesDisagree), "{k:?}");
}

#[test]
fn counters_and_segment_overlap() {
    let mut a = seg(
        0x1000,
        0x400,
        vec![block(0x1000, 0x400, BlockState::ActiveAllocated)],
    );
    a.allocated_size = Some(1);
    let b = seg(
        0x1200,
        0x400,
        vec![block(0x1200, 0x400, BlockState::Inactive)],
    );
    let k = kinds(&with_trace(vec![a, b], vec![]));
    assert!(k.contains(&WarningKind::SegmentCounterDisagrees), "{k:?}");
    assert!(k.contains(&WarningKind::SegmentsOverlap), "{k:?}");
}

#[test]
fn trace_double_free_and_unknown_free() {
    let s = with_trace(
        vec![seg(
            0x1000,
            0x400,
            vec![block(0x1000, 0x400, BlockState::Inactive)],
        )],
        vec![
            // Allocated before the trace began: fine.
            TraceEntry::new(Action::FreeRequested, 0x1000, 8),
            TraceEntry::new(Action::FreeCompleted, 0x1000, 8),
            TraceEntry::new(Action::FreeCompleted, 0x1000, 8),
            TraceEntry::new(Action::FreeRequested, 0x9000, 8),
            TraceEntry::new(Action::Alloc, 0x9000, 8),
            TraceEntry::new(Action::Alloc, 0x9000, 8),
        ],
    );
    let w = validate(&s);
    let k: Vec<_> = w.iter().map(|w| w.kind).collect();
    assert_eq!(
        k,
        vec![
            WarningKind::FreeOfUnallocated,
            WarningKind::FreeOfUnallocated,
            WarningKind::AllocOutsideSegments,
            WarningKind::AllocOfLive
        ],
        "{w:?}"
    );
    assert!(w[0].message.contains("device_traces[0][2]"), "{}", w[0]);
    assert!(w[1].message.contains("never allocated"), "{}", w[1]);
}

#[test]
fn segment_entries_make_addresses_known() {
    let s = with_trace(
        vec![],
        vec![
            TraceEntry::new(Action::SegmentAlloc, 0x4000, 0x1000),
            TraceEntry::new(Action::Alloc, 0x4000, 8),
            TraceEntry::new(Action::FreeRequested, 0x4800, 8),
        ],
    );
    assert_eq!(validate(&s), vec![]);
}

#[test]
fn many_warnings_of_a_kind_are_summarised() {
    let trace: Vec<TraceEntry> = (0..1000)
        .map(|i| TraceEntry::new(Action::FreeCompleted, 0x10_0000 + i * 512, 8))
        .collect();
    let w = validate(&with_trace(vec![], trace));
    assert_eq!(w.len(), MAX_PER_KIND + 1);
    let last = w.last().map(|w| w.message.clone()).unwrap_or_default();
    assert!(
        last.contains("and 980 more") && last.contains("1000 in all"),
        "{last}"
    );
}
