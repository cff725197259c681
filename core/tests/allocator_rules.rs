//! The allocator model's rules at their exact boundaries, on a simulated device.

use memsnap_core::allocator::{Allocator, Config, SimBacking};
use memsnap_core::snapshot::{Action, BlockState};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn alloc(conf: &str) -> Allocator<SimBacking> {
    Allocator::new(SimBacking::new(80 * GIB), Config::parse(conf).unwrap())
}

fn segment_allocs(a: &Allocator<SimBacking>) -> Vec<u64> {
    a.trace()
        .entries()
        .filter(|e| e.action() == Action::SegmentAlloc)
        .filter_map(|e| e.size())
        .collect()
}

#[test]
fn small_large_pool_boundary_at_1mib() {
    let mut a = alloc("");
    a.malloc(MIB, 0, None).unwrap();
    a.malloc(MIB + 1, 0, None).unwrap();
    assert_eq!(segment_allocs(&a), vec![2 * MIB, 20 * MIB]);
    let segs = a.segments();
    assert_eq!(segs.len(), 2);
    assert!(segs
        .iter()
        .any(|s| s.total_size == 2 * MIB && s.segment_type.map(|t| t.as_str()) == Some("small")));
    a.check_invariants().unwrap();
}

#[test]
fn segment_sizes_by_request() {
    let mut a = alloc("");
    a.malloc(10 * MIB - 513, 0, None).unwrap(); // rounds to 10 MiB - 512: a 20 MiB segment
    a.malloc(10 * MIB, 0, None).unwrap(); // fits the 10 MiB + 512 left (512 B tail not split)
    a.malloc(11 * MIB + 1, 0, None).unwrap(); // >= 10 MiB: rounded to 2 MiB multiple
    assert_eq!(segment_allocs(&a), vec![20 * MIB, 12 * MIB]);
    a.check_invariants().unwrap();
}

#[test]
fn small_pool_splits_at_512_remainder() {
    let mut a = alloc("");
    let p = a.malloc(MIB, 0, None).unwrap();
    let q = a.malloc(MIB - 512, 0, None).unwrap();
    assert_eq!(q, p + MIB);
    let r = a.malloc(512, 0, None).unwrap();
    assert_eq!(
        r,
        p + 2 * MIB - 512,
        "512 B remainder was split off and reused"
    );
    assert_eq!(segment_allocs(&a).len(), 1);
    a.check_invariants().unwrap();
}

#[test]
fn large_pool_splits_only_above_1mib_remainder() {
    let mut a = alloc("");
    // 20 MiB segment, request 19 MiB: remainder exactly 1 MiB -> not split.
    let p = a.malloc(19 * MIB, 0, None).unwrap();
    let seg = &a.segments()[0];
    assert_eq!(seg.blocks.len(), 1);
    assert_eq!(seg.blocks[0].size, 20 * MIB);
    a.free(p).unwrap();
    // Request 19 MiB - 512: remainder 1 MiB + 512 -> split.
    a.malloc(19 * MIB - 512, 0, None).unwrap();
    let seg = &a.segments()[0];
    assert_eq!(seg.blocks.len(), 2);
    assert_eq!(seg.blocks[1].size, MIB + 512);
    assert_eq!(seg.blocks[1].state, BlockState::Inactive);
    a.check_invariants().unwrap();
}

#[test]
fn best_fit_takes_the_smallest_block_that_fits() {
    let mut a = alloc("");
    let x = a.malloc(100 * MIB, 0, None).unwrap();
    let y = a.malloc(60 * MIB, 0, None).unwrap();
    let z = a.malloc(80 * MIB, 0, None).unwrap();
    for p in [x, y, z] {
        a.free(p).unwrap();
    }
    assert_eq!(a.malloc(50 * MIB, 0, None).unwrap(), y);
    assert_eq!(a.malloc(61 * MIB, 0, None).unwrap(), z);
    a.check_invariants().unwrap();
}

#[test]
fn max_split_size_oversize_rules() {
    let mut a = alloc("max_split_size_mb:100");
    let big = a.malloc(200 * MIB, 0, None).unwrap();
    a.free(big).unwrap();
    // A normal request never takes the oversize cached block: new segment.
    let n = a.malloc(50 * MIB, 0, None).unwrap();
    assert_ne!(n, big);
    // An oversize request takes it only within max_non_split_rounding (20 MiB) of its size.
    assert_ne!(
        a.malloc(150 * MIB, 0, None).unwrap(),
        big,
        "200 >= 150 + 20: refused"
    );
    let fit = a.malloc(181 * MIB, 0, None).unwrap();
    assert_eq!(fit, big, "200 < 181 + 20: taken whole");
    let seg = a.segments().into_iter().find(|s| s.address == big).unwrap();
    assert_eq!(seg.blocks.len(), 1, "oversize blocks are never split");
    a.check_invariants().unwrap();
}

#[test]
fn max_split_size_releases_oversize_blocks_before_oom() {
    let mut a = Allocator::new(
        SimBacking::new(500 * MIB),
        Config::parse("max_split_size_mb:100").unwrap(),
    );
    let big = a.malloc(300 * MIB, 0, None).unwrap();
    a.free(big).unwrap();
    // 250 MiB cannot take the 300 MiB block (>= 250 + 20) and no room is left for a new one:
    // the oversize block is released and the request retried.
    a.malloc(250 * MIB, 0, None).unwrap();
    let frees: Vec<_> = a
        .trace()
        .entries()
        .filter(|e| e.action() == Action::SegmentFree)
        .collect();
    assert_eq!(frees.len(), 1);
    assert_eq!(frees[0].size(), Some(300 * MIB));
    a.check_invariants().unwrap();
}

#[test]
fn merge_never_crosses_segments() {
    let mut a = alloc("");
    let x = a.malloc(12 * MIB, 0, None).unwrap();
    let y = a.malloc(12 * MIB, 0, None).unwrap();
    a.free(x).unwrap();
    a.free(y).unwrap();
    let segs = a.segments();
    assert_eq!(segs.len(), 2);
    assert!(segs.iter().all(|s| s.blocks.len() == 1));
    // 20 MiB would fit in the two holes together, but they are two segments.
    a.malloc(20 * MIB, 0, None).unwrap();
    assert_eq!(segment_allocs(&a).len(), 3);
    a.check_invariants().unwrap();
}

#[test]
fn freed_neighbours_merge_within_a_segment() {
    let mut a = alloc("");
    let p: Vec<u64> = (0..4)
        .map(|_| a.malloc(4 * MIB, 0, None).unwrap())
        .collect();
    a.free(p[1]).unwrap();
    a.free(p[2]).unwrap();
    let seg = &a.segments()[0];
    let free: Vec<_> = seg
        .blocks
        .iter()
        .filter(|b| b.state == BlockState::Inactive)
        .map(|b| b.size)
        .collect();
    assert_eq!(
        free,
        vec![8 * MIB, 4 * MIB],
        "middle pair merged; tail remainder separate"
    );
    a.check_invariants().unwrap();
}

#[test]
fn streams_are_isolated() {
    let mut a = alloc("");
    let x = a.malloc(4 * MIB, 1, None).unwrap();
    a.free(x).unwrap();
    let y = a.malloc(4 * MIB, 2, None).unwrap();
    assert_eq!(
        segment_allocs(&a).len(),
        2,
        "stream 2 cannot use stream 1's cached block"
    );
    assert_ne!(x, y);
    assert_eq!(a.malloc(4 * MIB, 1, None).unwrap(), x);
    a.check_invariants().unwrap();
}

#[test]
fn record_stream_holds_the_block_until_the_event_completes() {
    let mut a = alloc("");
    a.backing_mut().hold_stream(7);
    let x = a.malloc(4 * MIB, 0, None).unwrap();
    a.record_stream(x, 7).unwrap();
    a.free(x).unwrap();
    let seg = &a.segments()[0];
    assert_eq!(seg.blocks[0].state, BlockState::ActivePendingFree);
    let y = a.malloc(4 * MIB, 0, None).unwrap();
    assert_ne!(x, y, "pending block not reused");
    a.backing_mut().complete_stream(7);
    a.process_events();
    let completed = a
        .trace()
        .entries()
        .filter(|e| e.action() == Action::FreeCompleted && e.addr() == Some(x))
        .count();
    assert_eq!(completed, 1);
    a.check_invariants().unwrap();
}

#[test]
fn empty_cache_frees_only_unused_segments() {
    let mut a = alloc("");
    let x = a.malloc(12 * MIB, 0, None).unwrap();
    let _keep = a.malloc(14 * MIB, 0, None).unwrap();
    a.free(x).unwrap();
    a.empty_cache();
    assert_eq!(a.segments().len(), 1);
    assert_eq!(a.stats().reserved, 14 * MIB);
    a.check_invariants().unwrap();
}

#[test]
fn expandable_grows_in_pages_and_shrinks_on_empty_cache() {
    let mut a = alloc("expandable_segments:True");
    let x = a.malloc(30 * MIB, 0, None).unwrap();
    let y = a.malloc(5 * MIB, 0, None).unwrap();
    assert_eq!(y, x + 30 * MIB, "same range, right after");
    // 30 MiB -> two 20 MiB pages; 5 MiB fits in what is mapped.
    let maps: Vec<_> = a
        .trace()
        .entries()
        .filter(|e| e.action() == Action::SegmentMap)
        .map(|e| e.size())
        .collect();
    assert_eq!(maps, vec![Some(40 * MIB)]);
    let z = a.malloc(10 * MIB, 0, None).unwrap();
    assert_eq!(z, y + 5 * MIB);
    assert_eq!(a.stats().reserved, 60 * MIB);
    let segs = a.segments();
    assert_eq!(segs.len(), 1, "one mapped range");
    assert_eq!(segs[0].is_expandable, Some(true));
    a.free(z).unwrap();
    a.free(y).unwrap();
    a.empty_cache();
    // Pages wholly free are unmapped: [30, 60) MiB holds page 2 [40, 60) fully free.
    assert_eq!(a.stats().reserved, 40 * MIB);
    let unmaps: Vec<_> = a
        .trace()
        .entries()
        .filter(|e| e.action() == Action::SegmentUnmap)
        .map(|e| (e.addr(), e.size()))
        .collect();
    assert_eq!(unmaps, vec![(Some(x + 40 * MIB), Some(20 * MIB))]);
    a.free(x).unwrap();
    a.empty_cache();
    assert_eq!(a.stats().reserved, 0);
    assert!(a.segments().is_empty());
    a.check_invariants().unwrap();
}

#[test]
fn expandable_splits_at_512_in_every_pool() {
    let mut a = alloc("expandable_segments:True");
    a.malloc(19 * MIB, 0, None).unwrap();
    let seg = &a.segments()[0];
    assert_eq!(
        seg.blocks.len(),
        2,
        "1 MiB remainder split (expandable uses the 512 B rule)"
    );
    a.check_invariants().unwrap();
}

#[test]
fn oom_records_an_entry_and_leaves_state_intact() {
    let mut a = Allocator::new(SimBacking::new(100 * MIB), Config::default());
    let _x = a.malloc(60 * MIB, 0, None).unwrap();
    let err = a.malloc(60 * MIB, 0, None).unwrap_err();
    assert_eq!(err.size, 60 * MIB);
    assert!(err.to_string().contains("CUDA out of memory"));
    let last = a.trace().entries().last().unwrap();
    assert_eq!(last.action(), Action::Oom);
    assert_eq!(last.device_free(), Some(40 * MIB));
    assert_eq!(last.addr(), None);
    assert_eq!(a.stats().num_ooms, 1);
    a.check_invariants().unwrap();
}

#[test]
fn private_pool_blocks_stay_in_their_pool() {
    let mut a = alloc("");
    a.begin_allocate_to_pool((1, 0), Some(5));
    let g = a.malloc(4 * MIB, 5, None).unwrap();
    let other = a.malloc(4 * MIB, 6, None).unwrap();
    a.end_allocate_to_pool((1, 0));
    a.free(g).unwrap();
    let n = a.malloc(4 * MIB, 5, None).unwrap();
    assert_ne!(
        n, g,
        "default pool cannot use the graph pool's cached block"
    );
    let segs = a.segments();
    assert!(segs.iter().any(|s| s.segment_pool_id == Some((1, 0))));
    assert_ne!(other, g);
    a.release_pool((1, 0));
    a.empty_cache();
    assert!(a
        .segments()
        .iter()
        .all(|s| s.segment_pool_id == Some((0, 0))));
    a.check_invariants().unwrap();
}

#[test]
fn gc_threshold_frees_old_cached_segments() {
    let mut a = Allocator::new(
        SimBacking::new(GIB),
        Config::parse("garbage_collection_threshold:0.5").unwrap(),
    );
    a.set_memory_fraction(1.0);
    let xs: Vec<u64> = (0..4)
        .map(|_| a.malloc(150 * MIB, 0, None).unwrap())
        .collect();
    for x in &xs {
        a.free(*x).unwrap();
    }
    // 600 MiB cached > 512 MiB threshold: a request that misses the cache triggers GC.
    a.malloc(200 * MIB, 0, None).unwrap();
    assert!(a
        .trace()
        .entries()
        .any(|e| e.action() == Action::SegmentFree));
    assert!(a.stats().reserved <= 600 * MIB);
    a.check_invariants().unwrap();
}

#[test]
fn snapshot_reflects_state_and_settings() {
    let mut a = alloc("expandable_segments:False,max_split_size_mb:256");
    let f = {
        use memsnap_core::snapshot::Frame;
        use std::sync::Arc;
        let st = a.stacks_mut();
        let fr = st.push_frame(Frame {
            filename: Arc::from("t.py"),
            line: 3,
            name: Arc::from("f"),
            extra: vec![],
        });
        st.push_stack(vec![fr].into_boxed_slice())
    };
    let p = a.malloc(1000, 0, Some(f)).unwrap();
    let s = a.snapshot();
    assert_eq!(s.segments.len(), 1);
    let b = &s.segments[0].blocks[0];
    assert_eq!(
        (b.address, b.size, b.requested_size, b.frames),
        (Some(p), 1024, Some(1000), Some(f))
    );
    let settings = s.allocator_settings.unwrap();
    assert_eq!(
        settings.get("max_split_size").and_then(|v| v.as_i64()),
        Some(256 << 20)
    );
    let trace = &s.device_traces.unwrap()[0];
    let actions: Vec<_> = trace
        .iter()
        .map(|e| e.action().as_str().to_string())
        .collect();
    assert_eq!(actions, vec!["segment_alloc", "alloc", "snapshot"]);
}

#[test]
fn ring_buffer_keeps_the_newest_entries() {
    let mut a = alloc("");
    a.trace_mut().set_max_entries(Some(3));
    for _ in 0..5 {
        let p = a.malloc(1000, 0, None).unwrap();
        a.free(p).unwrap();
    }
    assert_eq!(a.trace().len(), 3);
    assert_eq!(
        a.trace().entries().last().unwrap().action(),
        Action::FreeCompleted
    );
}
