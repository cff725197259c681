//! A whole job at once: which ranks stand out among their [`RankSummary`]s. Data-parallel ranks
//! run the same code on the same shapes, so they should look alike; a rank is flagged when its
//! peak is far from the median, when it hit an OOM, when its cache is fragmented, or when a
//! different line of code holds the most memory at its peak than on most ranks, or when it
//! peaks in another phase of the program than most ranks do. `memsnap fleet`
//! and the page's fleet overview both read this.

use std::collections::HashMap;

use super::rank_summary::RankSummary;

/// A peak more than this fraction above or below the median is flagged.
pub const PEAK_TOLERANCE: f64 = 0.10;
/// A rank is fragmented when its cached free bytes are at least this share of reserved...
pub const FRAGMENTED_FREE_SHARE: f64 = 0.25;
/// ...and its largest free block is under this share of them (the holes are scattered).
pub const FRAGMENTED_LARGEST_SHARE: f64 = 0.5;

#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Fleet {
    /// Median over ranks of [`RankSummary::peak_allocated_bytes`] (the lower middle of an even
    /// count, so it is some rank's figure).
    pub median_peak_allocated_bytes: u64,
    /// The top peak frame ([`RankSummary::top_frame`]) of the most ranks, when more than half
    /// of the ranks with one share it.
    pub majority_top_frame: Option<String>,
    /// The peak's phase ([`RankSummary::peak_phase`]) of the most ranks, when more than half of
    /// the ranks with one share it.
    pub majority_peak_phase: Option<String>,
    /// One per summary, in the order given.
    pub ranks: Vec<RankFlags>,
}

#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RankFlags {
    pub rank: u32,
    pub peak_allocated_bytes: u64,
    /// Peak over the median (1.0 = at the median; 0 when the median is 0).
    pub peak_vs_median: f64,
    /// Peak above (below) the median by more than [`PEAK_TOLERANCE`].
    pub high_peak: bool,
    pub low_peak: bool,
    pub ooms: usize,
    /// At the dump, on some device (see [`FRAGMENTED_FREE_SHARE`]).
    pub fragmented: bool,
    /// Its top peak frame differs from [`Fleet::majority_top_frame`].
    pub top_frame_differs: bool,
    /// It peaks in a phase other than [`Fleet::majority_peak_phase`] (ranks whose peak is in no
    /// phase are not compared: their file may have none).
    pub peak_phase_differs: bool,
}

impl RankFlags {
    /// Any reason to look at this rank.
    pub fn is_outlier(&self) -> bool {
        self.high_peak
            || self.low_peak
            || self.ooms > 0
            || self.fragmented
            || self.top_frame_differs
            || self.peak_phase_differs
    }
}

fn median(values: &mut [u64]) -> u64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    values[(values.len() - 1) / 2]
}

fn majority(frames: impl Iterator<Item = String>) -> Option<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut total = 0;
    for f in frames {
        *counts.entry(f).or_insert(0) += 1;
        total += 1;
    }
    counts
        .into_iter()
        .filter(|(_, n)| 2 * n > total)
        .map(|(f, _)| f)
        .next()
}

fn fragmented(r: &RankSummary) -> bool {
    r.devices.iter().any(|d| {
        let free = d.total_free_bytes as f64;
        free > 0.0
            && free >= FRAGMENTED_FREE_SHARE * d.reserved_bytes as f64
            && (d.largest_free_block_bytes as f64) < FRAGMENTED_LARGEST_SHARE * free
    })
}

pub fn fleet(ranks: &[RankSummary]) -> Fleet {
    let mut peaks: Vec<u64> = ranks.iter().map(|r| r.peak_allocated_bytes()).collect();
    let med = median(&mut peaks);
    let top = |r: &RankSummary| r.top_frame().map(|f| f.frame.clone());
    let majority_top_frame = majority(ranks.iter().filter_map(top));
    let phase = |r: &RankSummary| r.peak_phase().map(str::to_owned);
    let majority_peak_phase = majority(ranks.iter().filter_map(phase));
    let flags = ranks
        .iter()
        .map(|r| {
            let peak = r.peak_allocated_bytes();
            let ratio = if med == 0 {
                0.0
            } else {
                peak as f64 / med as f64
            };
            RankFlags {
                rank: r.rank,
                peak_allocated_bytes: peak,
                peak_vs_median: ratio,
                high_peak: med > 0 && ratio > 1.0 + PEAK_TOLERANCE,
                low_peak: med > 0 && ratio < 1.0 - PEAK_TOLERANCE,
                ooms: r.oom_count(),
                fragmented: fragmented(r),
                top_frame_differs: match (&majority_top_frame, top(r)) {
                    (Some(m), Some(t)) => *m != t,
                    _ => false,
                },
                peak_phase_differs: match (&majority_peak_phase, phase(r)) {
                    (Some(m), Some(p)) => *m != p,
                    _ => false,
                },
            }
        })
        .collect();
    Fleet {
        median_peak_allocated_bytes: med,
        majority_top_frame,
        majority_peak_phase,
        ranks: flags,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::rank_summary::{DeviceRankSummary, FrameBytes, RankOom};

    const MB: u64 = 1 << 20;

    fn rank(rank: u32, peak: u64, frame: &str) -> RankSummary {
        RankSummary {
            file: format!("rank{rank}.pickle"),
            rank,
            file_bytes: 0,
            devices: vec![DeviceRankSummary {
                peak_allocated_bytes: peak,
                reserved_bytes: 2 * peak,
                top_frames: vec![FrameBytes {
                    frame: frame.to_owned(),
                    bytes: peak,
                    allocations: 1,
                }],
                ..DeviceRankSummary::default()
            }],
        }
    }

    #[test]
    fn flags_a_rank_that_peaks_in_another_phase() {
        let mut ranks: Vec<RankSummary> = (0..4)
            .map(|r| rank(r, 100 * MB, "model.py:5:fwd"))
            .collect();
        for r in &mut ranks {
            r.devices[0].peak_phase = Some("step > backward".into());
        }
        ranks[2].devices[0].peak_phase = Some("Optimizer.step#AdamW.step".into());
        // No phases in this rank's file: not compared.
        ranks[3].devices[0].peak_phase = None;
        let f = fleet(&ranks);
        assert_eq!(f.majority_peak_phase.as_deref(), Some("step > backward"));
        let differs: Vec<bool> = f.ranks.iter().map(|r| r.peak_phase_differs).collect();
        assert_eq!(differs, vec![false, false, true, false]);
        assert!(f.ranks[2].is_outlier());
        assert!(!f.ranks[3].is_outlier());
    }

    #[test]
    fn flags_the_odd_ranks() {
        let mut ranks: Vec<RankSummary> = (0..6)
            .map(|r| rank(r, 100 * MB, "model.py:5:fwd"))
            .collect();
        ranks[1].devices[0].peak_allocated_bytes = 150 * MB;
        ranks[2].devices[0].peak_allocated_bytes = 50 * MB;
        ranks[3].devices[0].ooms.push(RankOom::default());
        ranks[4].devices[0].top_frames[0].frame = "loss.py:7:loss".into();
        // 60 MiB free of 200 MiB reserved, in holes of at most 10 MiB.
        ranks[5].devices[0].total_free_bytes = 60 * MB;
        ranks[5].devices[0].largest_free_block_bytes = 10 * MB;
        let f = fleet(&ranks);
        assert_eq!(f.median_peak_allocated_bytes, 100 * MB);
        assert_eq!(f.majority_top_frame.as_deref(), Some("model.py:5:fwd"));
        let flagged: Vec<(u32, bool, bool, usize, bool, bool)> = f
            .ranks
            .iter()
            .map(|r| {
                (
                    r.rank,
                    r.high_peak,
                    r.low_peak,
                    r.ooms,
                    r.top_frame_differs,
                    r.fragmented,
                )
            })
            .collect();
        assert_eq!(
            flagged,
            vec![
                (0, false, false, 0, false, false),
                (1, true, false, 0, false, false),
                (2, false, true, 0, false, false),
                (3, false, false, 1, false, false),
                (4, false, false, 0, true, false),
                (5, false, false, 0, false, true),
            ]
        );
        assert!(!f.ranks[0].is_outlier());
        assert!(f.ranks[1..].iter().all(RankFlags::is_outlier));
        assert_eq!(f.ranks[1].peak_vs_median, 1.5);
    }

    #[test]
    fn no_majority_and_no_ranks() {
        let ranks = vec![rank(0, MB, "a"), rank(1, MB, "b")];
        let f = fleet(&ranks);
        assert_eq!(f.majority_top_frame, None);
        assert!(f.ranks.iter().all(|r| !r.top_frame_differs));
        assert_eq!(fleet(&[]), Fleet::default());
        // Lower middle of an even count.
        let f = fleet(&[rank(0, 10, "a"), rank(1, 30, "a")]);
        assert_eq!(f.median_peak_allocated_bytes, 10);
    }
}
