//! Each device on its own: a torch_npu file's trace copied onto device 1, with no segments of
//! device 1 in the dump (the dump check cannot see it), must still be told from the trace alone
//! (CUDA's policy refuses it, torch_npu's takes it), while device 0 stays torch_npu's by its
//! dump. And no real CUDA trace is flagged by the trace check, nor taken for torch_npu's.

mod analysis_fixtures;

use memsnap_core::allocator::{Config, Rules};
use memsnap_core::analysis::policy::{device_config, device_config_quick, RulesSource};
use memsnap_core::analysis::replay::{check_policy, replay, traced_devices};

#[test]
fn npu_trace_on_a_device_without_dump_segments_is_detected() {
    for name in [
        "memsnapdump-empty-cache.pkl",
        "memsnapdump-expandable-empty-cache.pkl",
    ] {
        let Some(mut snap) = analysis_fixtures::one(name) else {
            return;
        };
        let traces = snap.device_traces.as_mut().unwrap();
        traces[1] = traces[0].clone();
        let pc = check_policy(&snap, 1, &Config::default());
        assert!(
            !pc.fits(),
            "{name}: device 1 ({} checked) passed as CUDA",
            pc.checked
        );
        for choose in [device_config, device_config_quick] {
            let c = choose(&snap, 1).unwrap();
            assert_eq!(c.choice.rules, Rules::Npu, "{name}: {:?}", c.choice);
            assert_eq!(c.choice.source, RulesSource::Detected);
            assert!(c.choice.fits(), "{name}: {:?}", c.choice.check.examples);
            assert_eq!(choose(&snap, 0).unwrap().choice.rules, Rules::Npu);
        }
        // Expandable segments are read off the device's own maps: device 1 has no segments.
        let expandable = name.contains("expandable");
        assert_eq!(
            device_config(&snap, 1).unwrap().config.expandable_segments,
            expandable
        );
        // Replayed under torch_npu's rules, not refused (its start state has no segments to
        // seed, so decisions are not the point here).
        let r = replay(&snap, 1).unwrap();
        assert!(r.not_replayed.is_none(), "{name}: {:?}", r.not_replayed);
        assert_eq!(r.rules.rules, Rules::Npu);
    }
}

#[test]
fn real_cuda_traces_pass_the_trace_check() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    for (name, mut snap) in all {
        if name.starts_with("memsnapdump-") {
            continue;
        }
        // The trace alone: without the dump's segments, only the trace rules speak.
        snap.segments.clear();
        for d in traced_devices(&snap) {
            let pc = check_policy(&snap, d, &Config::default());
            assert!(pc.fits(), "{name} device {d}: {:?}", pc.examples);
            let c = device_config(&snap, d).unwrap();
            assert_eq!(c.choice.rules, Rules::Cuda, "{name} device {d}");
        }
    }
}
