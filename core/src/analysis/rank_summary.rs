//! One rank's snapshot reduced to a few KB: per device the dump totals, the peaks and where
//! they happened, the OOMs, the largest hole, the top frames at the peak and a reduced
//! timeline. The page's fleet overview, `memsnap fleet` and `memsnap export`'s `ranks` table
//! all read this one type, built by [`RankSummary::of`] from the existing analyses (no figure
//! is computed a second way), so all three agree with `memsnap stats` and the timeline.

use super::anomalies::anomalies;
use super::peak::peak;
use super::phases::phases;
use super::summary::DeviceSummary;
use super::timeline::Timeline;
use crate::snapshot::Snapshot;

/// Points kept of each device's timeline.
pub const TIMELINE_POINTS: usize = 256;
/// Top frames kept at each device's allocated peak.
pub const TOP_FRAMES: usize = 5;

#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RankSummary {
    /// The file's name as the caller gave it.
    pub file: String,
    pub rank: u32,
    /// Size of the file as read (compressed size for a gzipped pickle).
    pub file_bytes: u64,
    /// One per device of [`Snapshot::devices`], ascending.
    pub devices: Vec<DeviceRankSummary>,
}

#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceRankSummary {
    pub device: i64,
    /// At the dump, as `memsnap stats` counts them ([`DeviceSummary`]).
    pub segments: u64,
    pub blocks: u64,
    pub trace_entries: u64,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub active_bytes: u64,
    pub requested_bytes: u64,
    /// Largest `inactive` block, and all `inactive` bytes (the cache's holes).
    pub largest_free_block_bytes: u64,
    pub total_free_bytes: u64,
    /// Highest allocated bytes over the trace (the dump's when there is no trace), and the
    /// first entry after which it was reached ([`Timeline::summary`]).
    pub peak_allocated_bytes: u64,
    pub peak_allocated_entry: Option<u64>,
    pub peak_allocated_time_us: Option<i64>,
    /// Highest reserved bytes over the trace (the dump's when there is no trace), and the first
    /// entry after which it was reached.
    pub peak_reserved_bytes: u64,
    pub peak_reserved_entry: Option<u64>,
    /// The innermost phase of the program holding the allocated peak (`outer > inner`, from
    /// [`super::phases`]); `None` without phases or outside every one.
    pub peak_phase: Option<String>,
    /// Out-of-memory entries, in trace order ([`super::anomalies`]).
    pub ooms: Vec<RankOom>,
    /// Live bytes at the allocated peak by top user frame, most first, at most [`TOP_FRAMES`]
    /// ([`super::peak`]'s `by_top_frame`: the page's peak view).
    pub top_frames: Vec<FrameBytes>,
    /// The timeline cut into at most [`TIMELINE_POINTS`] runs of entries, each with its highest
    /// allocated and reserved bytes, so the peaks survive the reduction.
    pub timeline: Vec<TimelinePoint>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RankOom {
    pub entry: u64,
    /// The request that failed, as the trace records it.
    pub requested_bytes: Option<u64>,
    /// What the driver reported free on the device.
    pub device_free_bytes: Option<u64>,
    /// Allocated and reserved bytes at that entry.
    pub allocated_bytes: u64,
    pub reserved_bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FrameBytes {
    /// `file:line:name`, or `<no user frame>` / `<no stack>`.
    pub frame: String,
    pub bytes: u64,
    pub allocations: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TimelinePoint {
    /// First entry of the run; the run ends where the next point starts (or at the trace end).
    pub entry: u64,
    /// Highest allocated and reserved bytes after any entry of the run.
    pub allocated: u64,
    pub reserved: u64,
}

impl RankSummary {
    /// Reduces one snapshot; `file`, `rank` and `file_bytes` are the caller's (see
    /// [`crate::rank_name`] for the rank).
    pub fn of(snap: &Snapshot, file: &str, rank: u32, file_bytes: u64) -> RankSummary {
        RankSummary {
            file: file.to_owned(),
            rank,
            file_bytes,
            devices: DeviceSummary::per_device(snap)
                .into_iter()
                .map(|d| DeviceRankSummary::of(snap, d))
                .collect(),
        }
    }

    /// Highest allocated peak over the devices (0 with no device).
    pub fn peak_allocated_bytes(&self) -> u64 {
        self.devices
            .iter()
            .map(|d| d.peak_allocated_bytes)
            .max()
            .unwrap_or(0)
    }

    /// Highest reserved peak over the devices (0 with no device).
    pub fn peak_reserved_bytes(&self) -> u64 {
        self.devices
            .iter()
            .map(|d| d.peak_reserved_bytes)
            .max()
            .unwrap_or(0)
    }

    /// Out-of-memory entries over all devices.
    pub fn oom_count(&self) -> usize {
        self.devices.iter().map(|d| d.ooms.len()).sum()
    }

    /// The device with the highest allocated peak (the first of equals).
    pub fn peak_device(&self) -> Option<&DeviceRankSummary> {
        self.devices
            .iter()
            .rev()
            .max_by_key(|d| d.peak_allocated_bytes)
    }

    /// The phase holding the peak of [`Self::peak_device`].
    pub fn peak_phase(&self) -> Option<&str> {
        self.peak_device()?.peak_phase.as_deref()
    }

    /// The frame holding the most bytes at the peak of [`Self::peak_device`].
    pub fn top_frame(&self) -> Option<&FrameBytes> {
        self.peak_device()?.top_frames.first()
    }
}

impl DeviceRankSummary {
    fn of(snap: &Snapshot, d: DeviceSummary) -> DeviceRankSummary {
        let mut out = DeviceRankSummary {
            device: d.device,
            segments: d.segments,
            blocks: d.blocks,
            trace_entries: d.trace_entries,
            reserved_bytes: d.reserved_bytes,
            allocated_bytes: d.allocated_bytes,
            active_bytes: d.active_bytes,
            requested_bytes: d.requested_bytes,
            largest_free_block_bytes: d.largest_free_block_bytes,
            total_free_bytes: d.total_free_bytes,
            peak_allocated_bytes: d.allocated_bytes,
            peak_reserved_bytes: d.reserved_bytes,
            ..DeviceRankSummary::default()
        };
        // A negative device index has segments but no trace to analyse: the dump is its peak.
        let Ok(index) = usize::try_from(d.device) else {
            return out;
        };
        let tl = Timeline::build(snap, index);
        let ts = tl.summary();
        out.peak_allocated_bytes = ts.peak_allocated;
        out.peak_allocated_entry = ts.peak_allocated_index.map(|i| i as u64);
        out.peak_allocated_time_us = ts.peak_allocated_index.and_then(|i| tl.time_us[i]);
        out.peak_reserved_bytes = ts.peak_reserved;
        out.peak_reserved_entry = tl.reserved.first_max(0, tl.len()).map(|i| i as u64);
        out.peak_phase = ts.peak_allocated_index.and_then(|i| {
            let p = phases(snap, index).ok()?;
            p.innermost_at(i).map(|at| p.path(at))
        });
        out.ooms = anomalies(snap, index, &tl)
            .ooms
            .into_iter()
            .map(|o| RankOom {
                entry: o.index as u64,
                requested_bytes: o.requested,
                device_free_bytes: o.device_free,
                allocated_bytes: o.allocated,
                reserved_bytes: o.reserved,
            })
            .collect();
        out.top_frames = peak(snap, &tl)
            .by_top_frame
            .into_iter()
            .take(TOP_FRAMES)
            .map(|g| FrameBytes {
                frame: g.label,
                bytes: g.bytes,
                allocations: g.count as u64,
            })
            .collect();
        let allocated = tl.allocated.buckets(0, tl.len(), TIMELINE_POINTS);
        let reserved = tl.reserved.buckets(0, tl.len(), TIMELINE_POINTS);
        // Same range and width: both series are cut at the same entries.
        out.timeline = allocated
            .iter()
            .zip(&reserved)
            .map(|(a, r)| TimelinePoint {
                entry: a.start as u64,
                allocated: a.max,
                reserved: r.max,
            })
            .collect();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::summary::Summary;
    use crate::analysis::testutil::*;
    use crate::snapshot::Action;
    use crate::snapshot::BlockState::*;

    /// Two allocations from two stacks, a free, an OOM and a second segment: every field has
    /// a known answer.
    fn known() -> Snapshot {
        let mut snap = snapshot(vec![], vec![]);
        let model = stack(&mut snap, &[("/p/model.py", 5, "forward")]);
        let loss = stack(&mut snap, &[("/p/loss.py", 7, "loss")]);
        let mut oom = entry(Action::Oom, 0, 40 * MB);
        oom.set_addr(None);
        oom.set_device_free(Some(3 * MB));
        let t = vec![
            entry(Action::SegmentAlloc, 0x1000_0000, 20 * MB), // 0
            with_stack(entry(Action::Alloc, 0x1000_0000, 8 * MB), model), // 1
            with_stack(entry(Action::Alloc, 0x1080_0000, 4 * MB), loss), // 2: peak 12 MiB
            entry(Action::FreeRequested, 0x1080_0000, 4 * MB), // 3
            entry(Action::FreeCompleted, 0x1080_0000, 4 * MB), // 4
            entry(Action::SegmentAlloc, 0x2000_0000, 2 * MB),  // 5: reserved peak 22 MiB
            oom.with_time_us(99),                              // 6
        ];
        snap.segments = vec![
            segment(
                0x1000_0000,
                &[(8 * MB, ActiveAllocated, 8 * MB), (12 * MB, Inactive, 0)],
            ),
            segment(0x2000_0000, &[(2 * MB, Inactive, 0)]),
        ];
        snap.device_traces = Some(vec![t]);
        snap
    }

    #[test]
    fn known_snapshot() {
        let snap = known();
        let r = RankSummary::of(&snap, "rank3.pickle", 3, 1234);
        assert_eq!(
            (r.file.as_str(), r.rank, r.file_bytes),
            ("rank3.pickle", 3, 1234)
        );
        assert_eq!(r.devices.len(), 1);
        let d = &r.devices[0];
        assert_eq!((d.segments, d.blocks, d.trace_entries), (2, 3, 7));
        assert_eq!((d.reserved_bytes, d.allocated_bytes), (22 * MB, 8 * MB));
        assert_eq!(
            (d.largest_free_block_bytes, d.total_free_bytes),
            (12 * MB, 14 * MB)
        );
        assert_eq!(
            (d.peak_allocated_bytes, d.peak_allocated_entry),
            (12 * MB, Some(2))
        );
        assert_eq!(
            (d.peak_reserved_bytes, d.peak_reserved_entry),
            (22 * MB, Some(5))
        );
        assert_eq!(
            d.ooms,
            vec![RankOom {
                entry: 6,
                requested_bytes: Some(40 * MB),
                device_free_bytes: Some(3 * MB),
                allocated_bytes: 8 * MB,
                reserved_bytes: 22 * MB,
            }]
        );
        let top: Vec<(&str, u64)> = d
            .top_frames
            .iter()
            .map(|f| (f.frame.as_str(), f.bytes))
            .collect();
        assert_eq!(
            top,
            vec![
                ("/p/model.py:5:forward", 8 * MB),
                ("/p/loss.py:7:loss", 4 * MB)
            ]
        );
        // Fewer entries than points: one point per entry.
        let alloc: Vec<u64> = d.timeline.iter().map(|p| p.allocated).collect();
        assert_eq!(
            alloc,
            vec![0, 8 * MB, 12 * MB, 8 * MB, 8 * MB, 8 * MB, 8 * MB]
        );
        assert_eq!(r.peak_allocated_bytes(), 12 * MB);
        assert_eq!(r.oom_count(), 1);
        assert_eq!(
            r.top_frame().map(|f| f.frame.as_str()),
            Some("/p/model.py:5:forward")
        );
    }

    #[test]
    fn long_trace_keeps_the_peak_in_few_points() {
        // 3000 alloc/free pairs of growing size: the single highest entry must survive.
        let mut t = Vec::new();
        for k in 0..3000u64 {
            t.push(entry(Action::Alloc, 0x1000_0000, 512 * (k % 1000 + 1)));
            t.push(entry(Action::FreeRequested, 0x1000_0000, 0));
        }
        let snap = snapshot(vec![], t);
        let r = RankSummary::of(&snap, "r0.pickle", 0, 0);
        let d = &r.devices[0];
        assert_eq!(d.timeline.len(), TIMELINE_POINTS);
        let tl = Timeline::build(&snap, 0);
        let top = d.timeline.iter().map(|p| p.allocated).max();
        assert_eq!(top, Some(tl.summary().peak_allocated));
        assert_eq!(d.peak_allocated_bytes, 512 * 1000);
        assert!(d.timeline.windows(2).all(|w| w[0].entry < w[1].entry));
    }

    #[test]
    fn no_trace_and_no_device() {
        let segs = vec![segment(0x1000, &[(2 * MB, ActiveAllocated, MB)])];
        let mut snap = snapshot(segs, vec![]);
        snap.device_traces = None;
        let r = RankSummary::of(&snap, "a", 0, 0);
        let d = &r.devices[0];
        assert_eq!(
            (d.peak_allocated_bytes, d.peak_allocated_entry),
            (2 * MB, None)
        );
        assert_eq!(
            (d.peak_reserved_bytes, d.peak_reserved_entry),
            (2 * MB, None)
        );
        assert!(d.timeline.is_empty() && d.ooms.is_empty());
        let empty = RankSummary::of(&Snapshot::default(), "b", 1, 0);
        assert!(empty.devices.is_empty());
        assert_eq!((empty.peak_allocated_bytes(), empty.top_frame()), (0, None));
    }

    #[test]
    fn dump_figures_add_up_to_stats() {
        let snap = known();
        let r = RankSummary::of(&snap, "x", 0, 0);
        let s = Summary::of(&snap);
        let sum = |f: fn(&DeviceRankSummary) -> u64| r.devices.iter().map(f).sum::<u64>();
        assert_eq!(sum(|d| d.reserved_bytes), s.reserved_bytes);
        assert_eq!(sum(|d| d.allocated_bytes), s.allocated_bytes);
        assert_eq!(sum(|d| d.segments), s.segments);
        assert_eq!(sum(|d| d.blocks), s.blocks);
    }
}
