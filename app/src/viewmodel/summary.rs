use memsnap_core::allocator::Rules;
use memsnap_core::analysis::policy::device_config_quick;
use memsnap_core::snapshot::{Form, Snapshot};

use super::cache::Analyses;
use crate::protocol::{DeviceSummary, FileSummary};

/// `cache` gets each device's timeline (built here for the peaks; the views reuse it).
pub fn file_summary(
    snapshot: &Snapshot,
    cache: &mut Analyses,
    name: &str,
    size: u64,
    parse_ms: f64,
) -> FileSummary {
    let devices: Vec<DeviceSummary> = snapshot
        .devices()
        .into_iter()
        .map(|device| {
            let segs = snapshot
                .segments
                .iter()
                .filter(|s| s.device.unwrap_or(0) == device);
            let (segments, blocks) =
                segs.fold((0u64, 0u64), |(n, b), s| (n + 1, b + s.blocks.len() as u64));
            let trace_entries = usize::try_from(device)
                .map(|d| snapshot.trace(d).len() as u64)
                .unwrap_or(0);
            DeviceSummary {
                device,
                segments,
                blocks,
                trace_entries,
                first_oom: memsnap_core::analysis::oom::first_oom(snapshot, device)
                    .map(|i| i as u64),
                traced_entries: usize::try_from(device)
                    .map(|d| snapshot.traced_entries(d) as u64)
                    .unwrap_or(0),
                host: cache.is_host(device),
                allocator: device_config_quick(snapshot, device)
                    .map_or(Rules::Cuda, |d| d.choice.rules)
                    .name()
                    .to_string(),
            }
        })
        .collect();
    let (mut peak_allocated, mut peak_reserved) = (0, 0);
    // Peaks of device memory: pinned host memory is not on a GPU.
    for d in devices.iter().filter(|d| !d.host) {
        let t = cache.timeline(snapshot, d.device).summary();
        peak_allocated = peak_allocated.max(t.peak_allocated);
        peak_reserved = peak_reserved.max(t.peak_reserved);
    }
    FileSummary {
        name: name.to_string(),
        size,
        form: match snapshot.form {
            Form::Dict => "snapshot",
            Form::SegmentList => "segment list",
        }
        .to_string(),
        devices,
        parse_ms,
        // Filled in by the worker, which measures them.
        read_ms: 0.0,
        index_ms: 0.0,
        worker_memory: 0,
        peak_allocated,
        peak_reserved,
        warnings: memsnap_core::snapshot::validate(snapshot)
            .iter()
            .map(ToString::to_string)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsnap_core::snapshot::{Action, Segment, TraceEntry};

    #[test]
    fn lists_devices_with_segments_or_traces() {
        let s = Snapshot {
            segments: vec![
                Segment {
                    device: Some(2),
                    ..Segment::default()
                },
                Segment::default(),
            ],
            device_traces: Some(vec![
                vec![],
                (0..3)
                    .map(|i| TraceEntry::new(Action::Alloc, i * 512, 512))
                    .collect(),
                vec![],
            ]),
            ..Snapshot::default()
        };
        let f = file_summary(&s, &mut Analyses::new(), "x.pickle", 10, 1.0);
        let got: Vec<_> = f
            .devices
            .iter()
            .map(|d| (d.device, d.segments, d.trace_entries))
            .collect();
        assert_eq!(got, vec![(0, 1, 0), (1, 0, 3), (2, 1, 0)]);
        assert_eq!(f.form, "snapshot");
        // Device 1's three 512-byte allocations, never freed.
        assert_eq!(f.peak_allocated, 3 * 512);
    }

    #[test]
    fn host_memory_is_its_own_device_outside_the_peaks_and_never_replayed() {
        let mut s = Snapshot {
            device_traces: Some(vec![vec![TraceEntry::new(Action::Alloc, 0, 512)]]),
            host_segments: Some(vec![Segment {
                device: Some(0),
                total_size: 4096,
                ..Segment::default()
            }]),
            host_traces: Some(vec![TraceEntry::new(Action::Alloc, 1 << 40, 4096)]),
            ..Snapshot::default()
        };
        let mut cache = Analyses::for_open(&mut s);
        let f = file_summary(&s, &mut cache, "h.pickle", 10, 1.0);
        let got: Vec<_> = f.devices.iter().map(|d| (d.device, d.host)).collect();
        assert_eq!(got, vec![(0, false), (1, true)]);
        assert_eq!(f.opening_device(), Some(0));
        // The host's 4096 bytes are no device's peak.
        assert_eq!(f.peak_allocated, 512);
        let req = crate::protocol::analysis::WhatIfRequest {
            device: 1,
            expandable_segments: true,
            max_split_size_mb: None,
            roundup_power2_divisions: String::new(),
            garbage_collection_threshold: None,
            capacity: None,
        };
        let refused = super::super::whatif::whatif_view(&s, &mut cache, &req).unwrap_err();
        assert_eq!(refused, crate::protocol::analysis::HOST_NOT_REPLAYED);
        let insights = super::super::insights::insights_view(&s, &mut cache, 1);
        assert!(insights.host && insights.fixes.is_empty());
    }

    #[test]
    fn carries_validate_warnings() {
        let clean = file_summary(&Snapshot::default(), &mut Analyses::new(), "a", 0, 0.0);
        assert_eq!(clean.warnings, Vec::<String>::new());
        // Two allocs of one address with no free between them.
        let s = Snapshot {
            device_traces: Some(vec![vec![TraceEntry::new(Action::Alloc, 0, 512); 2]]),
            ..Snapshot::default()
        };
        let f = file_summary(&s, &mut Analyses::new(), "x.pickle", 10, 1.0);
        assert!(
            f.warnings.iter().any(|w| w.contains("already allocated")),
            "{:?}",
            f.warnings
        );
    }
}
