//! Fragmentation, pinning and fit on the real snapshots, cross-checked with the segment dicts'
//! own totals and with `analysis::totals` (computed independently).

mod analysis_fixtures;

use memsnap_core::analysis::fragmentation::{fits, fragmentation};
use memsnap_core::analysis::intervals::device_segments;
use memsnap_core::analysis::pinning::pinning;
use memsnap_core::analysis::sizes::Rounding;
use memsnap_core::analysis::totals::device_totals;

#[test]
fn totals_equal_the_dump() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    for (name, snap) in &all {
        for d in analysis_fixtures::devices(snap) {
            let f = fragmentation(snap, d);
            let t = device_totals(snap, d as i64);
            assert_eq!(f.reserved, t.reserved, "{name}");
            assert_eq!(f.allocated, t.allocated, "{name}");
            assert_eq!(f.free, t.inactive, "{name}");
            assert_eq!(f.active, t.allocated + t.pending_free, "{name}");
            assert_eq!(f.active + f.free, f.reserved, "{name}");
            // Free runs are merged neighbours: at least the largest single block.
            assert!(f.largest_free >= t.largest_free, "{name}");
            assert!(f.largest_free <= f.free, "{name}");
            for (s, seg) in f.segments.iter().zip(device_segments(snap, d)) {
                if let Some(a) = seg.allocated_size {
                    assert_eq!(s.allocated, a, "{name} segment {:#x}", seg.address);
                }
                if let Some(a) = seg.active_size {
                    assert_eq!(s.active, a, "{name} segment {:#x}", seg.address);
                }
                if let Some(r) = seg.requested_size {
                    // requested_size sums requests of active blocks: size − waste.
                    assert_eq!(
                        s.active - s.internal_waste,
                        r,
                        "{name} segment {:#x}",
                        seg.address
                    );
                }
                assert!((0.0..=1.0).contains(&s.ratio));
            }
            // The largest hole fits; one byte more than any hole of its pool does not.
            if f.largest_free > 0 {
                let big = f
                    .segments
                    .iter()
                    .filter(|s| !s.small)
                    .map(|s| s.largest_free)
                    .max();
                if let Some(big) = big.filter(|b| *b > 2 << 20) {
                    // The request that rounds to the hole: torch_npu pads requests by 32 bytes.
                    let pad = Rounding::for_device(snap, d).config.rules.request_padding();
                    assert!(fits(snap, d, big - pad).best.is_some(), "{name}");
                    assert!(fits(snap, d, big - pad + 512).best.is_none(), "{name}");
                }
            }
            eprintln!(
                "{name} dev {d}: reserved {} allocated {} free {} largest {} ratio {:.3} waste {} releasable {}",
                f.reserved, f.allocated, f.free, f.largest_free, f.ratio, f.internal_waste, f.releasable
            );
        }
    }
}

#[test]
fn pinning_blocks_are_active_and_ranked() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    let mut found = 0;
    for (name, snap) in &all {
        for d in analysis_fixtures::devices(snap) {
            let p = pinning(snap, d, None);
            for w in p.windows(2) {
                assert!(w[0].pinned >= w[1].pinned, "{name}");
            }
            for b in &p {
                let seg = device_segments(snap, d)
                    .find(|s| s.address == b.segment_address)
                    .expect("segment of a pinning block");
                assert!(b.block_size * 4 <= seg.total_size, "{name}");
                assert!(b.pinned * 2 >= seg.total_size, "{name}");
                assert!(b.pinned + b.block_size <= seg.total_size, "{name}");
            }
            found += p.len();
            if let Some(top) = p.first() {
                eprintln!(
                    "{name} dev {d}: {} pinning blocks; top {} B block pins {} B of a {} B segment",
                    p.len(),
                    top.block_size,
                    top.pinned,
                    top.segment_size
                );
            }
        }
    }
    assert!(found > 0, "no fixture shows a pinning block");
}
