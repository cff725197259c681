//! `diagnose` over every real snapshot and device: it runs, and its parts agree.

mod analysis_fixtures;

use memsnap_core::analysis::diagnosis::diagnose;

#[test]
fn diagnose_every_fixture() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    for (name, snap) in &all {
        for dev in analysis_fixtures::devices(snap) {
            let d = diagnose(snap, dev);
            let n = snap.trace(dev).len();
            // A trace of `snapshot` markers alone (torch 2.0's dump) is no trace.
            assert_eq!(d.has_trace, snap.traced_entries(dev) > 0, "{name}");
            assert_eq!(d.timeline.entries, n, "{name}");
            assert_eq!(d.peak.allocated, d.timeline.peak_allocated, "{name}");
            assert_eq!(d.fragmentation.reserved, d.timeline.end_reserved, "{name}");
            // Churn counts each traced allocation once; frees never exceed allocations.
            assert_eq!(
                d.churn.sizes.iter().map(|s| s.allocs).sum::<usize>(),
                d.churn.allocs
            );
            assert!(d.churn.frees <= d.churn.allocs, "{name}");
            assert_eq!(
                d.churn.classes.iter().map(|c| c.allocs).sum::<usize>(),
                d.churn.allocs,
                "{name}"
            );
            // Leak suspects are exactly the traced allocations live at the dump, ranked.
            for w in d.anomalies.leak_suspects.windows(2) {
                let k = |l: &memsnap_core::analysis::anomalies::LeakSuspect| {
                    l.size as u128 * l.age_entries as u128
                };
                assert!(k(&w[0]) >= k(&w[1]), "{name}");
            }
            assert!(
                d.anomalies.leak_bytes <= d.fragmentation.allocated,
                "{name}"
            );
            if let Some(p) = d.plan {
                assert!(p.arena_size >= p.peak_live_block, "{name}");
                assert_eq!(p.peak_live_block, d.timeline.peak_allocated, "{name}");
            }
            // The empty_cache fix, when present, is last.
            if let Some(i) = d
                .fixes
                .iter()
                .position(|f| f.setting.contains("empty_cache"))
            {
                assert_eq!(i, d.fixes.len() - 1, "{name}");
            }
            eprintln!(
                "{name} dev {dev}: {} fixes [{}]; churn: {}; {} pinning, {} leak suspects ({} B), {} pending, {} ooms",
                d.fixes.len(),
                d.fixes.iter().map(|f| f.setting.as_str()).collect::<Vec<_>>().join(" | "),
                d.churn.verdict,
                d.pinning.len(),
                d.anomalies.leak_suspects.len(),
                d.anomalies.leak_bytes,
                d.anomalies.pending_frees.len(),
                d.anomalies.ooms.len()
            );
        }
    }
}
