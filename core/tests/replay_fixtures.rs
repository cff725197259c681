//! Fidelity of the allocator model on the real fixtures: replaying each file's trace under its
//! settings must make every decision the real allocator made and end in the dump's segments.
//! The torch_npu files must be recognised as another allocator's traces.

mod analysis_fixtures;

use memsnap_core::allocator::Config;
use memsnap_core::analysis::replay::{replay, traced_devices};
use memsnap_core::analysis::state_at::StateHistory;

#[test]
fn every_cuda_trace_replays_exactly() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    let mut replayed = 0;
    for (name, snap) in all {
        for dev in traced_devices(&snap) {
            let r = replay(&snap, dev).unwrap();
            eprintln!(
                "{name} dev {dev}: entries {} complete {} decisions {}/{} segments_match {} cuda {} inconsistencies {} peak_reserved {} peak_allocated {}{}{}{}",
                r.entries,
                r.complete_trace,
                r.decisions_matched,
                r.decisions,
                r.segments_match,
                r.policy.is_cuda(),
                r.inconsistencies,
                r.figures.peak_reserved,
                r.figures.peak_allocated,
                r.first_mismatch.as_ref().map(|m| format!("\n   first mismatch at {}: {}", m.entry, m.what)).unwrap_or_default(),
                r.segments_difference.as_ref().map(|m| format!("\n   segments: {m}")).unwrap_or_default(),
                r.not_replayed.as_ref().map(|m| format!("\n   {m}")).unwrap_or_default(),
            );
            if name.starts_with("memsnapdump-") {
                assert!(
                    r.not_replayed
                        .as_deref()
                        .is_some_and(|m| m.starts_with("not a CUDA allocator trace")),
                    "{name}"
                );
                continue;
            }
            replayed += 1;
            assert!(r.not_replayed.is_none(), "{name}: {:?}", r.not_replayed);
            assert!(r.decisions > 0);
            assert_eq!(
                r.decisions_matched, r.decisions,
                "{name}: {:?}",
                r.first_mismatch
            );
            assert!(r.segments_match, "{name}: {:?}", r.segments_difference);
        }
    }
    assert!(replayed >= 9, "replayed {replayed} CUDA traces");
}

#[test]
fn state_history_ends_at_the_dump_and_checkpoints_agree() {
    let Some(snap) = analysis_fixtures::one("cs336-d-fullstep.pickle") else {
        return;
    };
    let cfg = Config::default();
    let h = StateHistory::new(&snap, 0, &cfg);
    let end = h.state_before(h.len());
    let dump: Vec<_> = snap
        .segments
        .iter()
        .filter(|s| s.device.unwrap_or(0) == 0)
        .collect();
    assert_eq!(end.len(), dump.len());
    for (a, b) in end.iter().zip(&dump) {
        assert_eq!(
            (a.address, a.total_size, a.allocated_size),
            (b.address, b.total_size, b.allocated_size)
        );
    }
    // Random access equals a walk from the end.
    for n in [0, 1, 777, 2048, 2049, 10_000, h.len() - 1] {
        let via_checkpoint = h.state_before(n);
        let fresh = memsnap_core::analysis::state_at::state_at(&snap, 0, n);
        assert_eq!(
            format!("{via_checkpoint:?}"),
            format!("{fresh:?}"),
            "entry {n}"
        );
    }
}
