//! The fixes worth replaying for one device: every allocator setting the file does not already
//! use (expandable segments, a few `max_split_size_mb` limits, `roundup_power2_divisions`), and
//! the program changes its trace points at (padding the costliest alternating size). Each
//! carries what in the file led to it, as measured in the dump or the trace; whether it helps
//! is for the replay to say. Candidates that need a first replay (an `empty_cache()` at the
//! peak, a memory cap for `garbage_collection_threshold`) are made by the engine.

use crate::allocator::Config;
use crate::analysis::churn::Churn;
use crate::analysis::fragmentation::DeviceFragmentation;
use crate::analysis::pinning::PinningBlock;
use crate::analysis::sizes::SMALL_SIZE;

use super::change::Change;

/// A fix to replay, before its replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub change: Change,
    pub title: String,
    /// What in the file led to trying it (figures from the dump or the trace).
    pub evidence: Vec<String>,
    /// A cost the model cannot measure (what the replay measures is added to it).
    pub caveat: Option<String>,
}

/// What the candidates are chosen from.
pub struct Causes<'a> {
    pub base: &'a Config,
    pub fragmentation: &'a DeviceFragmentation,
    pub churn: Option<&'a Churn>,
    pub pinning: &'a [PinningBlock],
    /// Block sizes of the trace's allocations.
    pub request_sizes: &'a [u64],
}

const MB: u64 = 1 << 20;

pub(super) fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / MB as f64)
}

/// Free space spread over segments, and the small blocks that pin it: why segments that grow
/// in place might help.
fn spread_evidence(f: &DeviceFragmentation, pinning: &[PinningBlock]) -> Vec<String> {
    let mut out = vec![format!(
        "in the dump: free {} in {} segments, the largest hole {} (fragmentation {:.0}%)",
        mib(f.free),
        f.segments_with_free,
        mib(f.largest_free),
        f.ratio * 100.0
    )];
    if !pinning.is_empty() {
        let mut segs: Vec<(u64, u64)> = pinning
            .iter()
            .map(|p| (p.segment_address, p.pinned))
            .collect();
        segs.sort_unstable();
        segs.dedup();
        let pinned: u64 = segs.iter().map(|s| s.1).sum();
        out.push(format!(
            "in the dump: {} held by {} small pinning blocks",
            mib(pinned),
            pinning.len()
        ));
    }
    out
}

/// The size at or under which `share` of the large requests fall, by selection (a million
/// sizes took 3 ms sorted).
fn large_quantile(sizes: &[u64], share: f64) -> Option<u64> {
    let mut large: Vec<u64> = sizes.iter().copied().filter(|&s| s > SMALL_SIZE).collect();
    if large.is_empty() {
        return None;
    }
    let at = ((large.len() as f64 * share) as usize).min(large.len() - 1);
    Some(*large.select_nth_unstable(at).1)
}

pub fn candidates(c: &Causes) -> Vec<Candidate> {
    let f = c.fragmentation;
    let mut out = Vec::new();
    let expandable = c.base.expandable_segments;
    if !expandable {
        out.push(Candidate {
            change: Change::setting("expandable_segments", "True"),
            title: "Use expandable segments so free space can be joined and unmapped".into(),
            evidence: spread_evidence(f, c.pinning),
            caveat: Some("not usable with some IPC setups".into()),
        });
    }
    // Split limits: the size most large requests stay under, and two round limits. Growable
    // segments are not carved, so no limit is tried beside them.
    if !expandable && c.base.max_split_size == u64::MAX {
        let mut limits: Vec<(u64, String)> = Vec::new();
        if let Some(p90) = large_quantile(c.request_sizes, 0.9) {
            limits.push((
                p90.div_ceil(MB).max(20),
                format!(
                    "in the trace: 90% of large requests are at most {}",
                    mib(p90)
                ),
            ));
        }
        for mb in [128, 512] {
            limits.push((mb, String::new()));
        }
        limits.sort_by_key(|l| l.0);
        limits.dedup_by_key(|l| l.0);
        for (mb, why) in limits {
            let mut evidence = vec![format!(
                "in the dump: reserved − allocated = {} of {} reserved",
                mib(f.reserved_minus_allocated),
                mib(f.reserved)
            )];
            if !why.is_empty() {
                evidence.push(why);
            }
            out.push(Candidate {
                change: Change::setting("max_split_size_mb", &mb.to_string()),
                title: format!(
                    "Never split cached blocks of {mb} MiB or more for smaller requests"
                ),
                evidence,
                caveat: None,
            });
        }
    }
    if c.base.roundup_power2_divisions.iter().all(|&d| d <= 1) {
        let distinct = c.churn.map_or(0, |ch| ch.distinct_sizes);
        for div in [4, 8] {
            out.push(Candidate {
                change: Change::setting("roundup_power2_divisions", &div.to_string()),
                title: format!(
                    "Round sizes up to {div} steps per power of two so near sizes reuse one block"
                ),
                evidence: vec![format!(
                    "in the trace: {distinct} distinct allocation sizes"
                )],
                caveat: None,
            });
        }
    }
    if let Some(al) = c.churn.and_then(|ch| ch.alternating.as_ref()) {
        out.push(Candidate {
            change: Change {
                pad: vec![(al.smaller, al.larger)],
                ..Change::default()
            },
            title: format!(
                "Pad {} allocations to {} so each can reuse the other's hole",
                mib(al.smaller),
                mib(al.larger)
            ),
            evidence: vec![format!(
                "in the trace: {} and {} alternate {} times and needed {} new segments",
                mib(al.smaller),
                mib(al.larger),
                al.alternations,
                al.new_segments
            )],
            caveat: Some(format!(
                "{} more allocated per padded allocation",
                mib(al.remainder)
            )),
        });
    }
    out
}
