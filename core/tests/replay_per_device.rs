//! Other allocators on some devices only: a torch_npu file's trace copied onto device 1, with
//! no segments of device 1 in the dump (the dump check cannot see it), must still be detected
//! from the trace alone: replay says "not a CUDA allocator trace" instead of reporting false
//! mismatches. And no real CUDA trace is flagged by the trace check.

mod analysis_fixtures;

use memsnap_core::allocator::Config;
use memsnap_core::analysis::replay::{check_cuda_policy, replay, traced_devices};

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
        let pc = check_cuda_policy(&snap, 1, &Config::default());
        assert!(
            !pc.is_cuda(),
            "{name}: device 1 ({} checked) passed as CUDA",
            pc.checked
        );
        let r = replay(&snap, 1).unwrap();
        assert!(
            r.not_replayed
                .as_deref()
                .is_some_and(|m| m.starts_with("not a CUDA allocator trace")),
            "{name}: {:?} ({} of {} decisions)",
            r.not_replayed,
            r.decisions_matched,
            r.decisions
        );
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
            let pc = check_cuda_policy(&snap, d, &Config::default());
            assert!(pc.is_cuda(), "{name} device {d}: {:?}", pc.examples);
        }
    }
}
