//! The fleet overview's rows: one per rank open, with `analysis::fleet`'s flags, sortable by
//! the figures a user hunts a bad rank by; and a rank set beside the fleet's median rank.

use std::cmp::Reverse;
use std::collections::HashMap;

use memsnap_core::analysis::fleet::{fleet, Fleet, RankFlags};
use memsnap_core::analysis::rank_summary::RankSummary;

#[derive(Debug, Clone, PartialEq)]
pub struct FleetRow {
    /// Index of the rank in the set (what a click opens).
    pub index: usize,
    pub rank: u32,
    pub file: String,
    pub peak_reserved: u64,
    pub peak_allocated: u64,
    /// Cached free bytes outside the largest hole, over reserved, on the device where that share
    /// is highest (0..1): memory a large request cannot use.
    pub fragmentation: f64,
    pub ooms: usize,
    pub top_frame: Option<String>,
    pub flags: RankFlags,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortKey {
    #[default]
    PeakReserved,
    PeakAllocated,
    Fragmentation,
    Ooms,
    Rank,
}

impl SortKey {
    pub const ALL: [SortKey; 5] = [
        SortKey::PeakReserved,
        SortKey::PeakAllocated,
        SortKey::Fragmentation,
        SortKey::Ooms,
        SortKey::Rank,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::PeakReserved => "peak-reserved",
            SortKey::PeakAllocated => "peak-allocated",
            SortKey::Fragmentation => "fragmentation",
            SortKey::Ooms => "ooms",
            SortKey::Rank => "rank",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SortKey::PeakReserved => "peak reserved",
            SortKey::PeakAllocated => "peak allocated",
            SortKey::Fragmentation => "fragmentation",
            SortKey::Ooms => "OOMs",
            SortKey::Rank => "rank",
        }
    }

    pub fn parse(s: &str) -> Option<SortKey> {
        SortKey::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Rows of the open ranks (`summaries`, each with its `index` in the set), in the order given,
/// and the fleet's figures.
pub fn fleet_rows(index: &[usize], summaries: &[RankSummary]) -> (Fleet, Vec<FleetRow>) {
    let figures = fleet(summaries);
    let rows = index
        .iter()
        .zip(summaries)
        .zip(&figures.ranks)
        .map(|((index, s), flags)| FleetRow {
            index: *index,
            rank: s.rank,
            file: s.file.clone(),
            peak_reserved: s.peak_reserved_bytes(),
            peak_allocated: s.peak_allocated_bytes(),
            fragmentation: fragmentation(s),
            ooms: s.oom_count(),
            top_frame: s.top_frame().map(|f| f.frame.clone()),
            flags: flags.clone(),
        })
        .collect();
    (figures, rows)
}

fn fragmentation(s: &RankSummary) -> f64 {
    s.devices
        .iter()
        .filter(|d| d.reserved_bytes > 0)
        .map(|d| {
            d.total_free_bytes
                .saturating_sub(d.largest_free_block_bytes) as f64
                / d.reserved_bytes as f64
        })
        .fold(0.0, f64::max)
}

/// Worst first (rank order for `Rank`); ties in rank order.
pub fn sort_rows(rows: &mut [FleetRow], key: SortKey) {
    match key {
        SortKey::PeakReserved => rows.sort_by_key(|r| (Reverse(r.peak_reserved), r.rank)),
        SortKey::PeakAllocated => rows.sort_by_key(|r| (Reverse(r.peak_allocated), r.rank)),
        SortKey::Fragmentation => rows.sort_by(|a, b| {
            b.fragmentation
                .total_cmp(&a.fragmentation)
                .then(a.rank.cmp(&b.rank))
        }),
        SortKey::Ooms => rows.sort_by_key(|r| (Reverse(r.ooms), Reverse(r.peak_reserved), r.rank)),
        SortKey::Rank => rows.sort_by_key(|r| r.rank),
    }
}

/// The flagged rows, most striking first: OOMs, then the peak furthest from the median (as a
/// ratio either way), then rank order.
pub fn outliers(rows: &[FleetRow]) -> Vec<FleetRow> {
    let off = |r: &FleetRow| {
        let v = r.flags.peak_vs_median;
        if v > 0.0 {
            v.max(1.0 / v)
        } else {
            1.0
        }
    };
    let mut out: Vec<FleetRow> = rows
        .iter()
        .filter(|r| r.flags.is_outlier())
        .cloned()
        .collect();
    out.sort_by(|a, b| {
        b.ooms
            .cmp(&a.ooms)
            .then(off(b).total_cmp(&off(a)))
            .then(a.rank.cmp(&b.rank))
    });
    out
}

/// The bars' full height: the highest reserved peak, but at most `CLIP` times the median one,
/// so one huge rank does not flatten the rest; taller bars are drawn clipped.
pub fn bar_scale(rows: &[FleetRow]) -> u64 {
    const CLIP: u64 = 3;
    let mut peaks: Vec<u64> = rows
        .iter()
        .map(|r| r.peak_reserved.max(r.peak_allocated))
        .collect();
    peaks.sort_unstable();
    let highest = peaks.last().copied().unwrap_or(0);
    let median = peaks
        .get(peaks.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0);
    highest.min(median.saturating_mul(CLIP)).max(1)
}

/// Why a row is flagged, in words (empty when it is not).
pub fn reasons(flags: &RankFlags) -> Vec<String> {
    let mut out = Vec::new();
    if flags.ooms > 0 {
        out.push(format!(
            "{} OOM{}",
            flags.ooms,
            if flags.ooms == 1 { "" } else { "s" }
        ));
    }
    if flags.high_peak || flags.low_peak {
        out.push(format!(
            "peak {:.0}% of the median",
            flags.peak_vs_median * 100.0
        ));
    }
    if flags.fragmented {
        out.push("fragmented".into());
    }
    if flags.top_frame_differs {
        out.push("another top frame".into());
    }
    if flags.peak_phase_differs {
        out.push("peaks in another phase".into());
    }
    out
}

/// The index (into the set) of the median rank: the first whose allocated peak is the fleet's
/// median (`analysis::fleet` takes it from some rank, so one has it).
pub fn median_rank(index: &[usize], summaries: &[RankSummary], figures: &Fleet) -> Option<usize> {
    index
        .iter()
        .zip(summaries)
        .find(|(_, s)| s.peak_allocated_bytes() == figures.median_peak_allocated_bytes)
        .map(|(i, _)| *i)
}

/// A frame's bytes at the allocated peak in one rank and in another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameDiff {
    pub frame: String,
    pub bytes: u64,
    pub other_bytes: u64,
}

impl FrameDiff {
    /// Bytes more than the other rank holds (negative: less).
    pub fn excess(&self) -> i128 {
        self.bytes as i128 - self.other_bytes as i128
    }
}

/// What `rank` holds more of than `other` at its allocated peak, by top frame, most first; each
/// rank's frames from its peak device (`RankSummary::peak_device`). Frames outside a rank's
/// top frames count as 0 there, so a large excess can also mean "not among the median's top".
pub fn holds_more(rank: &RankSummary, other: &RankSummary) -> Vec<FrameDiff> {
    let frames = |s: &RankSummary| -> HashMap<String, u64> {
        s.peak_device()
            .map(|d| {
                d.top_frames
                    .iter()
                    .map(|f| (f.frame.clone(), f.bytes))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (mine, theirs) = (frames(rank), frames(other));
    let mut out: Vec<FrameDiff> = mine
        .iter()
        .map(|(frame, &bytes)| FrameDiff {
            frame: frame.clone(),
            bytes,
            other_bytes: theirs.get(frame).copied().unwrap_or(0),
        })
        .filter(|d| d.excess() > 0)
        .collect();
    out.sort_by(|a, b| b.excess().cmp(&a.excess()).then(a.frame.cmp(&b.frame)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsnap_core::analysis::rank_summary::{DeviceRankSummary, FrameBytes, RankOom};

    const MB: u64 = 1 << 20;

    fn rank(rank: u32, peak: u64, frames: &[(&str, u64)]) -> RankSummary {
        RankSummary {
            file: format!("rank{rank}.pickle"),
            rank,
            file_bytes: 0,
            devices: vec![DeviceRankSummary {
                peak_allocated_bytes: peak,
                peak_reserved_bytes: peak + 10 * MB,
                reserved_bytes: 100 * MB,
                top_frames: frames
                    .iter()
                    .map(|(f, b)| FrameBytes {
                        frame: f.to_string(),
                        bytes: *b,
                        allocations: 1,
                    })
                    .collect(),
                ..DeviceRankSummary::default()
            }],
        }
    }

    #[test]
    fn rows_carry_peaks_and_flags_and_sort_worst_first() {
        let mut a = rank(0, 100 * MB, &[("m.py:1:f", 100 * MB)]);
        let b = rank(1, 300 * MB, &[("m.py:1:f", 300 * MB)]);
        let c = rank(2, 100 * MB, &[("m.py:1:f", 100 * MB)]);
        a.devices[0].ooms.push(RankOom::default());
        // 40 MiB cached free of 100 MiB reserved, the largest hole 10 MiB.
        a.devices[0].total_free_bytes = 40 * MB;
        a.devices[0].largest_free_block_bytes = 10 * MB;
        let index = [0, 1, 2];
        let set = [a, b, c];
        let (figures, mut rows) = fleet_rows(&index, &set);
        assert_eq!(figures.median_peak_allocated_bytes, 100 * MB);
        assert_eq!(rows[1].peak_reserved, 310 * MB);
        assert!(rows[1].flags.high_peak);
        assert_eq!(rows[0].ooms, 1);
        assert!((rows[0].fragmentation - 0.3).abs() < 1e-9);
        let order = |rows: &[FleetRow]| rows.iter().map(|r| r.rank).collect::<Vec<_>>();
        sort_rows(&mut rows, SortKey::PeakReserved);
        assert_eq!(order(&rows), vec![1, 0, 2]);
        sort_rows(&mut rows, SortKey::Ooms);
        assert_eq!(order(&rows), vec![0, 1, 2]);
        sort_rows(&mut rows, SortKey::Fragmentation);
        assert_eq!(order(&rows), vec![0, 1, 2]);
        sort_rows(&mut rows, SortKey::Rank);
        assert_eq!(order(&rows), vec![0, 1, 2]);
        assert_eq!(reasons(&rows[0].flags), vec!["1 OOM", "fragmented"]);
        assert_eq!(
            reasons(&rows[1].flags),
            vec!["peak 300% of the median".to_string()]
        );
        assert_eq!(median_rank(&index, &set, &figures), Some(0));
        // Rank 0 has an OOM: first; rank 1's peak is 3x the median: next; rank 2 is not flagged.
        let flagged: Vec<u32> = outliers(&rows).iter().map(|r| r.rank).collect();
        assert_eq!(flagged, vec![0, 1]);
        // Peaks 110, 110, 310 MiB: the median 110 MiB, so the scale stops at 330 > 310.
        assert_eq!(bar_scale(&rows), 310 * MB);
        rows[1].peak_reserved = 1000 * MB;
        assert_eq!(bar_scale(&rows), 330 * MB, "clipped at 3x the median");
        assert_eq!(bar_scale(&[]), 1);
        for k in SortKey::ALL {
            assert_eq!(SortKey::parse(k.as_str()), Some(k));
        }
    }

    #[test]
    fn holds_more_than_the_median_by_frame() {
        let r = rank(
            0,
            0,
            &[
                ("a.py:1:x", 50 * MB),
                ("b.py:2:y", 30 * MB),
                ("c.py:3:z", 5 * MB),
            ],
        );
        let median = rank(1, 0, &[("a.py:1:x", 20 * MB), ("c.py:3:z", 9 * MB)]);
        let got: Vec<(String, i128)> = holds_more(&r, &median)
            .into_iter()
            .map(|d| (d.frame.clone(), d.excess()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a.py:1:x".to_string(), (30 * MB) as i128),
                ("b.py:2:y".to_string(), (30 * MB) as i128),
            ]
        );
        assert!(holds_more(&median, &median).is_empty());
    }
}
