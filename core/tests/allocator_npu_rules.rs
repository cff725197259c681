//! torch_npu's rules where they differ from CUDA's (docs/npu-allocator.md), at their boundaries,
//! on a simulated device; each beside the CUDA result for the same calls.

use memsnap_core::allocator::{Allocator, Config, Rules, SimBacking};
use memsnap_core::snapshot::{Action, BlockState};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

fn alloc(rules: Rules, conf: &str) -> Allocator<SimBacking> {
    let mut c = Config::parse(conf).unwrap();
    c.rules = rules;
    c.check_rules().unwrap();
    Allocator::new(SimBacking::new(80 * GIB), c)
}

fn sizes(a: &Allocator<SimBacking>, action: Action) -> Vec<u64> {
    a.trace()
        .entries()
        .filter(|e| e.action() == action)
        .filter_map(|e| e.size())
        .collect()
}

fn block_sizes(a: &Allocator<SimBacking>) -> Vec<(u64, BlockState)> {
    a.segments()
        .iter()
        .flat_map(|s| s.blocks.iter().map(|b| (b.size, b.state)))
        .collect()
}

#[test]
fn requests_are_padded_by_32_bytes_before_rounding() {
    for (req, cuda, npu) in [
        (1, 512, 512),
        (480, 512, 512),
        (481, 512, 1024),
        (512, 512, 1024),
        (1024, 1024, 1536),
        (37632, 37888, 37888),
        (524288, 524288, 524800),
    ] {
        for (rules, want) in [(Rules::Cuda, cuda), (Rules::Npu, npu)] {
            let mut a = alloc(rules, "");
            a.malloc(req, 0, None).unwrap();
            assert_eq!(block_sizes(&a)[0].0, want, "{rules} request {req}");
        }
    }
}

#[test]
fn a_request_of_1mib_goes_to_the_large_pool_on_npu() {
    let mut cuda = alloc(Rules::Cuda, "");
    cuda.malloc(MIB, 0, None).unwrap();
    assert_eq!(sizes(&cuda, Action::SegmentAlloc), vec![2 * MIB]);
    let mut npu = alloc(Rules::Npu, "");
    npu.malloc(MIB, 0, None).unwrap();
    // 1 MiB + 32 rounds to 1 MiB + 512: above kSmallSize, so a 20 MiB large segment.
    assert_eq!(sizes(&npu, Action::SegmentAlloc), vec![20 * MIB]);
    assert_eq!(
        npu.segments()[0].segment_type.map(|t| t.as_str()),
        Some("large")
    );
    // The largest small request: 1 MiB - 32.
    let mut npu = alloc(Rules::Npu, "");
    npu.malloc(MIB - 32, 0, None).unwrap();
    assert_eq!(sizes(&npu, Action::SegmentAlloc), vec![2 * MIB]);
}

#[test]
fn a_40mib_request_gets_a_42mib_segment_on_npu() {
    // The fixtures' first segment: 41943040 requested, 44040192 allocated.
    let mut cuda = alloc(Rules::Cuda, "");
    cuda.malloc(40 * MIB, 0, None).unwrap();
    assert_eq!(sizes(&cuda, Action::SegmentAlloc), vec![40 * MIB]);
    let mut npu = alloc(Rules::Npu, "");
    npu.malloc(40 * MIB, 0, None).unwrap();
    assert_eq!(sizes(&npu, Action::SegmentAlloc), vec![42 * MIB]);
    // The trace records the request, as CUDA's does; the block is the padded size.
    assert_eq!(sizes(&npu, Action::Alloc), vec![40 * MIB]);
    assert_eq!(
        block_sizes(&npu)[0],
        (40 * MIB + 512, BlockState::ActiveAllocated)
    );
    npu.check_invariants().unwrap();
}

#[test]
fn power_of_two_divisions_round_the_padded_size() {
    // 1 MiB with 4 divisions: CUDA keeps it (a power of two); torch_npu rounds 1 MiB + 32 up
    // to the next quarter step, 1.25 MiB.
    let mut cuda = alloc(Rules::Cuda, "roundup_power2_divisions:4");
    cuda.malloc(MIB, 0, None).unwrap();
    assert_eq!(block_sizes(&cuda)[0].0, MIB);
    let mut npu = alloc(Rules::Npu, "roundup_power2_divisions:4");
    npu.malloc(MIB, 0, None).unwrap();
    assert_eq!(block_sizes(&npu)[0].0, MIB + MIB / 4);
}

/// Under expandable segments the second 4 MiB block starts on the next 16 KiB boundary after
/// the first (4 MiB + 512 long), leaving a 15872-byte free sliver, as the fixtures' large
/// segment shows 50 times.
#[test]
fn expandable_blocks_of_2mib_or_more_start_on_16kib() {
    let mut a = alloc(Rules::Npu, "expandable_segments:True");
    let x = a.malloc(4 * MIB, 0, None).unwrap();
    let y = a.malloc(4 * MIB, 0, None).unwrap();
    assert_eq!(x % (16 << 10), 0);
    assert_eq!(y, x + 4 * MIB + (16 << 10), "next 16 KiB boundary");
    let blocks = block_sizes(&a);
    assert_eq!(blocks[0], (4 * MIB + 512, BlockState::ActiveAllocated));
    assert_eq!(blocks[1], (15872, BlockState::Inactive));
    assert_eq!(blocks[2], (4 * MIB + 512, BlockState::ActiveAllocated));
    a.check_invariants().unwrap();
    // The sliver merges back once its neighbour is freed.
    a.free(y).unwrap();
    assert_eq!(block_sizes(&a)[1].1, BlockState::Inactive);
    assert_eq!(block_sizes(&a).len(), 2);
    a.check_invariants().unwrap();

    // Below 2 MiB (rounded) no block is moved: 1 MiB + 1000 rounds to 1 MiB + 1536.
    let mut a = alloc(Rules::Npu, "expandable_segments:True");
    let x = a.malloc(4 * MIB, 0, None).unwrap();
    let y = a.malloc(MIB + 1000, 0, None).unwrap();
    assert_eq!(y, x + 4 * MIB + 512);
    // 2 MiB - 32 rounds to exactly 2 MiB: moved from y's end (5 MiB + 2 KiB) to 5 MiB + 16 KiB.
    let z = a.malloc(2 * MIB - 32, 0, None).unwrap();
    assert_eq!(z, x + 5 * MIB + (16 << 10));

    // base_addr_aligned_kb:0 turns it off; CUDA has no such step; nor do ordinary segments.
    for (rules, conf) in [
        (
            Rules::Npu,
            "expandable_segments:True,base_addr_aligned_kb:0",
        ),
        (Rules::Cuda, "expandable_segments:True"),
    ] {
        let mut a = alloc(rules, conf);
        let x = a.malloc(4 * MIB, 0, None).unwrap();
        let y = a.malloc(4 * MIB, 0, None).unwrap();
        assert_eq!(y - x, block_sizes(&a)[0].0, "{rules} {conf}");
    }
    let mut a = alloc(Rules::Npu, "");
    let x = a.malloc(4 * MIB, 0, None).unwrap();
    let y = a.malloc(4 * MIB, 0, None).unwrap();
    assert_eq!(y - x, 4 * MIB + 512, "not expandable: blocks abut");

    // A smaller alignment: 4 KiB.
    let mut a = alloc(
        Rules::Npu,
        "expandable_segments:True,base_addr_aligned_kb:4",
    );
    let x = a.malloc(4 * MIB, 0, None).unwrap();
    let y = a.malloc(4 * MIB, 0, None).unwrap();
    assert_eq!(y, x + 4 * MIB + (4 << 10));
}

#[test]
fn a_use_on_the_blocks_own_stream_holds_it_back_on_npu_only() {
    for (rules, pending) in [(Rules::Cuda, false), (Rules::Npu, true)] {
        let mut a = alloc(rules, "");
        a.backing_mut().hold_stream(0);
        let x = a.malloc(4 * MIB, 0, None).unwrap();
        a.record_stream(x, 0).unwrap();
        a.free(x).unwrap();
        let state = a.segments()[0].blocks[0].state;
        assert_eq!(state == BlockState::ActivePendingFree, pending, "{rules}");
        a.backing_mut().complete_stream(0);
        a.process_events();
        assert_eq!(
            a.segments()[0].blocks[0].state,
            BlockState::Inactive,
            "{rules}"
        );
        a.check_invariants().unwrap();
    }
}

#[test]
fn large_expandable_pages_follow_the_npu_page_options() {
    for (conf, page) in [
        ("expandable_segments:True", 20 * MIB),
        ("expandable_segments:True,segment_size_mb:64", 64 * MIB),
        (
            "expandable_segments:True,large_segment_size_mb:128",
            128 * MIB,
        ),
        ("expandable_segments:True,page_size:1g", GIB),
    ] {
        let mut a = alloc(Rules::Npu, conf);
        a.malloc(30 * MIB, 0, None).unwrap();
        let mapped = sizes(&a, Action::SegmentMap);
        assert_eq!(mapped, vec![(30 * MIB).div_ceil(page) * page], "{conf}");
    }
    // page_size:1g: ordinary large segments are whole GiB, small ones stay 2 MiB.
    let mut a = alloc(Rules::Npu, "page_size:1g");
    a.malloc(3 * MIB, 0, None).unwrap();
    a.malloc(1000, 0, None).unwrap();
    assert_eq!(sizes(&a, Action::SegmentAlloc), vec![GIB, 2 * MIB]);
    // large_segment_size_mb sizes the segments of 1-10 MiB requests.
    let mut a = alloc(Rules::Npu, "large_segment_size_mb:64");
    a.malloc(3 * MIB, 0, None).unwrap();
    a.malloc(12 * MIB, 0, None).unwrap();
    assert_eq!(sizes(&a, Action::SegmentAlloc), vec![64 * MIB]);
}

#[test]
fn settings_each_allocator_refuses() {
    let npu = |conf: &str| {
        let mut c = Config::parse(conf).unwrap();
        c.rules = Rules::Npu;
        c.check_rules()
    };
    let e = npu("expandable_segments:True,max_split_size_mb:512").unwrap_err();
    assert_eq!(e.key, "max_split_size_mb");
    let e = npu("expandable_segments:True,garbage_collection_threshold:0.8").unwrap_err();
    assert_eq!(e.key, "garbage_collection_threshold");
    assert!(npu("max_split_size_mb:512").is_ok());
    // torch_npu's own options mean nothing to CUDA's allocator.
    for conf in [
        "base_addr_aligned_kb:8",
        "segment_size_mb:64",
        "page_size:1g",
    ] {
        let e = Config::parse(conf).unwrap().check_rules().unwrap_err();
        assert!(e.message.contains("torch_npu option"), "{conf}: {e}");
    }
    assert!(Config::parse("base_addr_aligned_kb:17").is_err());
    assert!(Config::parse("segment_size_mb:10").is_err());
    assert!(Config::parse("page_size:2m").is_err());
    // `>` fills from the interval after the last key on torch_npu, from the last key's own on
    // PyTorch (whose parser overwrites it).
    let mut c = Config {
        rules: Rules::Npu,
        ..Config::default()
    };
    c.set("roundup_power2_divisions", "[256:2,512:8,>:1]")
        .unwrap();
    assert_eq!(&c.roundup_power2_divisions[8..11], &[2, 8, 1]);
    let cuda = Config::parse("roundup_power2_divisions:[256:2,512:8,>:1]").unwrap();
    assert_eq!(&cuda.roundup_power2_divisions[8..11], &[2, 1, 1]);
    // The conf string carries them back.
    let c = Config::parse("base_addr_aligned_kb:0,segment_size_mb:64,page_size:1g").unwrap();
    assert_eq!(Config::parse(&c.to_conf_string()).unwrap(), c);
}
