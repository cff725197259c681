//! `diagnose` over every real snapshot and device: it runs, and its parts agree.

mod analysis_fixtures;

use memsnap_core::analysis::diagnosis::diagnose;
use memsnap_core::snapshot::Action;

#[test]
fn diagnose_every_fixture() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    for (name, snap) in &all {
        for dev in analysis_fixtures::devices(snap) {
            let d = diagnose(snap, dev);
            let n = snap.trace(dev).len();
            // `snapshot` markers alone (torch 2.0 dumps write one) are no trace.
            let recorded = snap
                .trace(dev)
                .iter()
                .any(|e| e.action() != Action::Snapshot);
            assert_eq!(d.has_trace, recorded, "{name}");
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
            // Every ranked fix saves what its replay shows; none that saves nothing is ranked.
            let v = &d.verdicts;
            for f in &v.fixes {
                assert!(f.helps, "{name}: {}", f.setting);
                assert_eq!(
                    f.saves,
                    v.base.peak_reserved as i64 - f.with.peak_reserved as i64,
                    "{name}: {}",
                    f.setting
                );
                assert!(f.saves > 0 || f.oom.is_some_and(|o| o.served), "{name}");
            }
            assert!(v.no_saving.iter().all(|f| !f.helps), "{name}");
            for w in v.fixes.windows(2) {
                assert!(
                    w[0].saves >= w[1].saves || w[0].oom.is_some(),
                    "{name}: ranked"
                );
            }
            eprintln!(
                "{name} dev {dev}: {} fixes [{}]; churn: {}; {} pinning, {} leak suspects ({} B), {} pending, {} ooms",
                d.verdicts.fixes.len(),
                d.verdicts.fixes.iter().map(|f| f.setting.as_str()).collect::<Vec<_>>().join(" | "),
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
