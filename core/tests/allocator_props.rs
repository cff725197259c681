//! Invariants of the allocator model under random operation sequences: blocks tile every
//! segment, no two adjacent free blocks stay unmerged, pools hold exactly the free blocks,
//! counters match the blocks; and after freeing everything, empty_cache returns all memory.

use memsnap_core::allocator::{Allocator, Config, SimBacking};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;

#[derive(Debug, Clone)]
enum Op {
    Malloc(u64, i64),
    Free(usize),
    RecordStream(usize, i64),
    Complete(i64),
    EmptyCache,
}

fn op() -> impl Strategy<Value = Op> {
    let size = prop_oneof![
        1u64..4096,
        4096u64..(2 * MIB),
        (2 * MIB)..(40 * MIB),
        (40 * MIB)..(300 * MIB)
    ];
    prop_oneof![
        6 => (size, 0i64..3).prop_map(|(s, st)| Op::Malloc(s, st)),
        4 => any::<usize>().prop_map(Op::Free),
        1 => (any::<usize>(), 0i64..3).prop_map(|(i, s)| Op::RecordStream(i, s)),
        1 => (0i64..3).prop_map(Op::Complete),
        1 => Just(Op::EmptyCache),
    ]
}

fn conf() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(""),
        Just("expandable_segments:True"),
        Just("max_split_size_mb:64"),
        Just("roundup_power2_divisions:4"),
        Just("roundup_power2_divisions:[2:8,64:2,>:1],max_split_size_mb:128,max_non_split_rounding_mb:40"),
        Just("expandable_segments:True,roundup_power2_divisions:2"),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn invariants_hold(conf in conf(), ops in prop::collection::vec(op(), 1..120)) {
        let mut a = Allocator::new(SimBacking::new(2048 * MIB), Config::parse(conf).unwrap());
        a.backing_mut().hold_stream(1);
        a.backing_mut().hold_stream(2);
        let mut live: Vec<(u64, u64)> = Vec::new();
        for op in ops {
            match op {
                Op::Malloc(size, stream) => {
                    if let Ok(p) = a.malloc(size, stream, None) {
                        let got = a.allocated_size(p).unwrap();
                        prop_assert!(got >= size, "block {got} smaller than request {size}");
                        // No overlap with any live block.
                        for (q, qs) in &live {
                            prop_assert!(p + got <= *q || *q + qs <= p, "overlap at 0x{p:x}");
                        }
                        live.push((p, got));
                    }
                }
                Op::Free(i) if !live.is_empty() => {
                    let (p, _) = live.swap_remove(i % live.len());
                    a.free(p).unwrap();
                }
                Op::RecordStream(i, s) if !live.is_empty() => {
                    let (p, _) = live[i % live.len()];
                    a.record_stream(p, s).unwrap();
                }
                Op::Complete(s) => {
                    a.backing_mut().complete_stream(s);
                    a.backing_mut().hold_stream(s);
                    a.process_events();
                }
                Op::EmptyCache => a.empty_cache(),
                _ => {}
            }
            if let Err(e) = a.check_invariants() {
                prop_assert!(false, "{}", e);
            }
            let allocated: u64 = live.iter().map(|l| l.1).sum();
            prop_assert_eq!(a.stats().allocated, allocated);
            prop_assert!(a.stats().reserved <= 2048 * MIB);
        }
        for (p, _) in live.drain(..) {
            a.free(p).unwrap();
        }
        a.empty_cache();
        prop_assert!(a.check_invariants().is_ok());
        prop_assert_eq!(a.stats().reserved, 0);
        prop_assert!(a.segments().is_empty());
        prop_assert_eq!(a.backing().used(), 0);
    }
}
