//! Fidelity of the allocator model on the real fixtures: replaying each file's trace under its
//! settings and its allocator's rules must make every decision the real allocator made and end
//! in the dump's segments. The torch_npu files must be told apart and replayed under torch_npu's
//! rules; under CUDA's (named by the settings) they must not replay.

mod analysis_fixtures;

use std::sync::Arc;

use memsnap_core::allocator::{Config, Rules};
use memsnap_core::analysis::replay::{replay, traced_devices};
use memsnap_core::analysis::state_at::StateHistory;
use memsnap_core::snapshot::{AllocatorSettings, Value};

#[test]
fn every_trace_replays_exactly_under_its_allocator() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    let (mut replayed, mut npu_replayed) = (0, 0);
    for (name, snap) in all {
        for dev in traced_devices(&snap) {
            let r = replay(&snap, dev).unwrap();
            eprintln!(
                "{name} dev {dev}: entries {} complete {} decisions {}/{} segments_match {} rules {} inconsistencies {} peak_reserved {} peak_allocated {}{}{}{}",
                r.entries,
                r.complete_trace,
                r.decisions_matched,
                r.decisions,
                r.segments_match,
                r.rules.rules,
                r.inconsistencies,
                r.figures.peak_reserved,
                r.figures.peak_allocated,
                r.first_mismatch.as_ref().map(|m| format!("\n   first mismatch at {}: {}", m.entry, m.what)).unwrap_or_default(),
                r.segments_difference.as_ref().map(|m| format!("\n   segments: {m}")).unwrap_or_default(),
                r.not_replayed.as_ref().map(|m| format!("\n   {m}")).unwrap_or_default(),
            );
            let npu = name.starts_with("memsnapdump-");
            assert_eq!(
                r.rules.rules,
                if npu { Rules::Npu } else { Rules::Cuda },
                "{name}"
            );
            npu_replayed += npu as usize;
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
    assert!(replayed >= 11, "replayed {replayed} traces");
    assert_eq!(npu_replayed, 2, "both torch_npu fixtures");
}

/// Named by the settings, CUDA's rules are followed whatever the sizes say: a torch_npu file
/// then shows why it does not fit (and the replay's mismatches), never a silent 100%.
#[test]
fn npu_files_under_cuda_rules_do_not_replay_exactly() {
    for name in [
        "memsnapdump-empty-cache.pkl",
        "memsnapdump-expandable-empty-cache.pkl",
    ] {
        let Some(mut snap) = analysis_fixtures::one(name) else {
            return;
        };
        let mut s = AllocatorSettings::default();
        s.entries
            .push((Arc::from("allocator"), Value::Str(Arc::from("cuda"))));
        snap.allocator_settings = Some(s);
        let r = replay(&snap, 0).unwrap();
        assert_eq!(r.rules.rules, Rules::Cuda);
        assert!(r.not_replayed.is_none(), "named rules are replayed");
        let misfit = r
            .rules
            .misfit()
            .expect("the sizes contradict CUDA's policy");
        assert!(misfit.contains("impossible under its policy"), "{misfit}");
        assert!(
            r.decisions_matched < r.decisions,
            "{name}: {}/{}",
            r.decisions_matched,
            r.decisions
        );
    }
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

/// `memsnap replay --set` builds its what-if plan from the fidelity replay it already reported
/// (`empty_cache_calls_of`); that plan must be the one `Plan::whole` / `Plan::to_oom` find by
/// replaying again: the same requests, capacity and OOM entry. The bundled example (an OOM
/// recording the driver's free bytes) runs without the real fixtures.
#[test]
fn a_plan_from_the_reported_replay_is_the_plan() {
    use memsnap_core::analysis::replay::{device_config, empty_cache_calls_of, replay_with};
    use memsnap_core::analysis::verdicts::Plan;

    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/assets/example.pickle");
    let bytes = std::fs::read(&example).expect("the bundled example");
    let mut files = vec![(
        "example.pickle".to_string(),
        memsnap_core::snapshot::read(&bytes).expect("reads"),
    )];
    let real = analysis_fixtures::all();
    let with_real = real.is_some();
    files.extend(real.unwrap_or_default());
    let (mut with_calls, mut to_an_oom) = (0, 0);
    for (name, snap) in &files {
        for dev in traced_devices(snap) {
            let dc = device_config(snap, dev).unwrap();
            let report = replay_with(snap, dev, dc.clone()).unwrap();
            let calls = empty_cache_calls_of(&report, snap.trace(dev as usize));
            with_calls += !calls.is_empty() as usize;
            let whole = Plan::whole(snap, dev, &dc);
            let from_report = Plan::whole_with(snap, dev, &calls);
            same_requests(
                &from_report.reqs,
                &whole.reqs,
                &format!("{name} dev {dev}: whole"),
            );
            let oom = Plan::to_oom(snap, dev, &dc);
            let from_report = Plan::to_oom_with(snap, dev, &dc.config, &calls);
            same_requests(
                &from_report.reqs,
                &oom.reqs,
                &format!("{name} dev {dev}: to the OOM"),
            );
            assert_eq!(from_report.capacity, oom.capacity, "{name} dev {dev}");
            assert_eq!(from_report.oom_entry, oom.oom_entry, "{name} dev {dev}");
            to_an_oom += oom.oom_entry.is_some() as usize;
        }
    }
    assert!(
        to_an_oom > 0,
        "no file replayed to an OOM: the OOM plan went untested"
    );
    if with_real {
        assert!(
            with_calls > 0,
            "no real trace calls empty_cache: the calls went untested"
        );
    }
}

/// Two request lists equal, or a failure naming the first difference (not both whole lists).
fn same_requests(
    got: &[memsnap_core::analysis::replay::Traced],
    want: &[memsnap_core::analysis::replay::Traced],
    what: &str,
) {
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    assert!(
        got.len() == want.len() && first.is_none(),
        "{what}: {} requests against {}; first difference at {:?}: {:?} against {:?}",
        got.len(),
        want.len(),
        first,
        first.map(|i| got[i]),
        first.map(|i| want[i]),
    );
}
