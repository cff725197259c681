//! The fidelity check the model's own traces must pass, shared by the replay tests.

use memsnap_core::analysis::replay::replay;
use memsnap_core::snapshot::Snapshot;

/// Device 0 of `s` replays with every decision matched, the final segments equal and nothing
/// in the trace unexplained; `what` names the case in a failure.
pub fn assert_exact(s: &Snapshot, what: &str) {
    let r = replay(s, 0).unwrap();
    assert!(r.not_replayed.is_none(), "{what}: {:?}", r.not_replayed);
    assert!(r.decisions > 100, "{what}: only {} decisions", r.decisions);
    assert_eq!(
        r.decisions_matched, r.decisions,
        "{what}: {:?}",
        r.first_mismatch
    );
    assert!(r.segments_match, "{what}: {:?}", r.segments_difference);
    assert_eq!(r.inconsistencies, 0, "{what}: {:?}", r.first_inconsistency);
}
