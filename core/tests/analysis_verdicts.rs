//! The verdict engine on traces built with the allocator model (not recorded): a workload that
//! only expandable segments fix, one that only a split limit fixes, and what the replay of
//! each fix saves, against the model's own figures.

use memsnap_core::allocator::{Allocator, Config, SimBacking};
use memsnap_core::analysis::diagnosis::diagnose;
use memsnap_core::analysis::verdicts::Verdicts;
use memsnap_core::snapshot::Snapshot;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Runs `steps` (allocate `Some(size)` into slot i, or free slot i with `None`) through the
/// model with default settings; the snapshot with its whole history.
fn build(steps: &[(usize, Option<u64>)]) -> Snapshot {
    let mut a = Allocator::new(SimBacking::new(64 * GIB), Config::default());
    a.trace_mut().set_enabled(true);
    let mut slots = vec![0u64; 64];
    for &(i, op) in steps {
        match op {
            Some(size) => slots[i] = a.malloc(size, 0, None).expect("fits"),
            None => a.free(slots[i]).expect("live"),
        }
    }
    a.snapshot()
}

fn verdicts(s: &Snapshot) -> Verdicts {
    let v = diagnose(s, 0).verdicts;
    eprintln!(
        "base {} MiB; fixes: {:?}; not: {:?}",
        v.base.peak_reserved / MIB,
        v.fixes
            .iter()
            .map(|f| (f.setting.as_str(), f.saves / MIB as i64))
            .collect::<Vec<_>>(),
        v.no_saving
            .iter()
            .map(|f| (f.setting.as_str(), f.saves / MIB as i64))
            .collect::<Vec<_>>()
    );
    v
}

#[test]
fn only_expandable_segments_helps() {
    // Eight 20 MiB segments, each holding two 8 MiB tensors of which the first is freed: 12
    // MiB free in every one, in two holes, none of it a whole free segment. Then 16 MiB.
    let mut steps = Vec::new();
    for k in 0..8 {
        steps.push((2 * k, Some(8 * MIB)));
        steps.push((2 * k + 1, Some(8 * MIB)));
        steps.push((2 * k, None));
    }
    steps.push((40, Some(16 * MIB)));
    let v = verdicts(&build(&steps));
    // Growable segments map only what is used: 16 MiB less at the peak; nothing else tried
    // lowers it (no segment is ever wholly free, so no cap or empty_cache releases one).
    let names: Vec<(&str, i64)> = v
        .fixes
        .iter()
        .map(|f| (f.setting.as_str(), f.saves))
        .collect();
    assert_eq!(
        names,
        vec![(
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
            16 * MIB as i64
        )]
    );
    assert_eq!(
        v.try_line.as_deref(),
        Some("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
    );
    assert!(v.no_saving.iter().all(|f| f.saves <= 0 && !f.helps));
    assert!(
        v.no_saving
            .iter()
            .any(|f| f.setting.contains("max_split_size_mb")),
        "split limits were tried"
    );
}

#[test]
fn only_a_split_limit_helps() {
    // A 100 MiB block cached (a 40 MiB tensor allocated after it stays), then carved by a
    // 30 MiB tensor that stays: the next 100 MiB request no longer fits in what is left.
    let steps = [
        (0, Some(100 * MIB)),
        (3, Some(40 * MIB)),
        (0, None),
        (1, Some(30 * MIB)),
        (2, Some(100 * MIB)),
    ];
    let v = verdicts(&build(&steps));
    // A limit at the large requests' size keeps the 30 MiB tensor out of the cached 100 MiB
    // block, which the second 100 MiB request then reuses: 240 -> 170 MiB. Expandable
    // segments cannot help: the freed range is not at the segment's end, so the second
    // request maps 100 MiB more all the same.
    assert_eq!(v.base.peak_reserved, 240 * MIB);
    let names: Vec<(&str, i64)> = v
        .fixes
        .iter()
        .map(|f| (f.setting.as_str(), f.saves))
        .collect();
    assert_eq!(
        names,
        vec![(
            "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:100",
            70 * MIB as i64
        )]
    );
    let exp = v
        .no_saving
        .iter()
        .find(|f| f.setting == "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
        .expect("expandable segments were tried");
    assert_eq!(exp.saves, 0);
    // The costs measured: the same three cudaMalloc calls (the 30 MiB tensor gets one, the
    // second 100 MiB request none), and the tensors that landed in another segment.
    let f = &v.fixes[0];
    assert_eq!(v.base.segment_creations, 3);
    assert_eq!(f.with.segment_creations, 3);
    assert!(f.moved_allocations >= 1, "{f:#?}");
}
