//! RankSummary on the real snapshots and on the allocator model's traces: its dump figures are
//! `memsnap stats`'s, its peaks are the timeline's and the model's own counters, its top
//! frames are the peak view's, and its reduced timeline keeps the peak.

mod analysis_fixtures;

use memsnap_core::allocator::{Allocator, Config, SimBacking};
use memsnap_core::analysis::anomalies::anomalies;
use memsnap_core::analysis::peak::peak;
use memsnap_core::analysis::rank_summary::{RankSummary, TIMELINE_POINTS, TOP_FRAMES};
use memsnap_core::analysis::summary::{DeviceSummary, Summary};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::Snapshot;

const MIB: u64 = 1 << 20;

/// Every figure of `r` against the analysis it comes from.
fn check(name: &str, snap: &Snapshot, r: &RankSummary) {
    let per = DeviceSummary::per_device(snap);
    assert_eq!(r.devices.len(), per.len(), "{name}");
    for (d, s) in r.devices.iter().zip(&per) {
        assert_eq!(
            (d.device, d.segments, d.blocks, d.trace_entries),
            (s.device, s.segments, s.blocks, s.trace_entries),
            "{name}"
        );
        assert_eq!(
            (d.reserved_bytes, d.allocated_bytes, d.total_free_bytes),
            (s.reserved_bytes, s.allocated_bytes, s.total_free_bytes),
            "{name}"
        );
        assert_eq!(d.largest_free_block_bytes, s.largest_free_block_bytes);
        let Ok(dev) = usize::try_from(d.device) else {
            continue;
        };
        let tl = Timeline::build(snap, dev);
        let ts = tl.summary();
        assert_eq!(d.peak_allocated_bytes, ts.peak_allocated, "{name}");
        assert_eq!(d.peak_reserved_bytes, ts.peak_reserved, "{name}");
        assert_eq!(
            d.peak_allocated_entry,
            ts.peak_allocated_index.map(|i| i as u64),
            "{name}"
        );
        if let Some(i) = d.peak_reserved_entry {
            assert_eq!(tl.reserved.values()[i as usize], ts.peak_reserved, "{name}");
        }
        let p = peak(snap, &tl);
        assert!(d.top_frames.len() <= TOP_FRAMES);
        for (f, g) in d.top_frames.iter().zip(&p.by_top_frame) {
            assert_eq!(
                (f.frame.as_str(), f.bytes),
                (g.label.as_str(), g.bytes),
                "{name}"
            );
        }
        assert_eq!(
            d.top_frames.len(),
            p.by_top_frame.len().min(TOP_FRAMES),
            "{name}"
        );
        let a = anomalies(snap, dev, &tl);
        let ooms: Vec<u64> = a.ooms.iter().map(|o| o.index as u64).collect();
        let got: Vec<u64> = d.ooms.iter().map(|o| o.entry).collect();
        assert_eq!(got, ooms, "{name}");
        assert!(d.timeline.len() <= TIMELINE_POINTS, "{name}");
        assert_eq!(d.timeline.len(), tl.len().min(TIMELINE_POINTS), "{name}");
        if !tl.is_empty() {
            let top = d.timeline.iter().map(|p| p.allocated).max();
            assert_eq!(
                top,
                Some(ts.peak_allocated),
                "{name}: reduced timeline lost the peak"
            );
            let top = d.timeline.iter().map(|p| p.reserved).max();
            assert_eq!(top, Some(ts.peak_reserved), "{name}");
        }
    }
    // The devices add up to the whole-file figures `memsnap stats --json` prints.
    let s = Summary::of(snap);
    let sum = |f: fn(&memsnap_core::analysis::rank_summary::DeviceRankSummary) -> u64| {
        r.devices.iter().map(f).sum::<u64>()
    };
    assert_eq!(sum(|d| d.segments), s.segments, "{name}");
    assert_eq!(sum(|d| d.blocks), s.blocks, "{name}");
    assert_eq!(sum(|d| d.reserved_bytes), s.reserved_bytes, "{name}");
    assert_eq!(sum(|d| d.allocated_bytes), s.allocated_bytes, "{name}");
    assert_eq!(sum(|d| d.total_free_bytes), s.total_free_bytes, "{name}");
}

#[test]
fn real_fixtures() {
    let Some(all) = analysis_fixtures::all() else {
        return;
    };
    for (i, (name, snap)) in all.iter().enumerate() {
        let r = RankSummary::of(snap, name, i as u32, 0);
        check(name, snap, &r);
    }
}

#[test]
fn allocator_model_peaks() {
    // Growing then shrinking batches with a kept tensor each step: the model's own counters
    // are the ground truth for the peaks.
    let config = Config::parse("").expect("default config");
    let mut a = Allocator::new(SimBacking::new(8 << 30), config);
    a.trace_mut().set_enabled(true);
    let mut kept = Vec::new();
    for step in 0..40u64 {
        let size = (1 + (step * 7) % 23) * 3 * MIB + step * 512;
        let t = a.malloc(size, 0, None).expect("malloc");
        kept.push(a.malloc(MIB / 3 + step, 0, None).expect("malloc"));
        a.free(t).expect("free");
        if kept.len() > 5 {
            a.free(kept.remove(0)).expect("free");
        }
    }
    // More than the device holds: one OOM entry (the real fixtures have none).
    assert!(a.malloc(16 << 30, 0, None).is_err());
    let (peak_allocated, peak_reserved) = (a.stats().peak_allocated, a.stats().peak_reserved);
    let snap = a.snapshot();
    let r = RankSummary::of(&snap, "rank0.pickle", 0, 0);
    check("model", &snap, &r);
    assert_eq!(r.peak_allocated_bytes(), peak_allocated);
    assert_eq!(r.peak_reserved_bytes(), peak_reserved);
    let oom = &r.devices[0].ooms;
    assert_eq!(oom.len(), 1);
    assert_eq!(oom[0].requested_bytes, Some(16 << 30));
    assert!(oom[0].device_free_bytes.is_some_and(|f| f < 8 << 30));
}
