//! Two snapshots of one program side by side (two steps, two commits, two settings): peak,
//! reserved and fragmentation of each, what grew and shrank by top user frame (live bytes at
//! each file's peak and at its dump, as `peak::composition` groups them), stacks live in AFTER
//! that BEFORE never allocated from, and segments added or gone.
//!
//! Stack ids are per file, so frames and stacks are matched by their text (`file:line:name`).

use std::collections::{HashMap, HashSet};

use super::fragmentation::fragmentation;
use super::frames::{format_stack, label};
use super::intervals::device_segments;
use super::peak::{composition, Peak};
use super::timeline::Timeline;
use crate::snapshot::{Snapshot, StackId};

/// One file's headline numbers for a device.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Side {
    pub entries: usize,
    /// Most bytes allocated after any entry (the dump's, without a trace).
    pub peak_allocated: u64,
    /// Most bytes reserved after any entry (the dump's, without a trace).
    pub peak_reserved: u64,
    pub dump_allocated: u64,
    pub dump_reserved: u64,
    /// Reserved minus allocated at the dump.
    pub reserved_minus_allocated: u64,
    /// Cached free bytes at the dump, and the largest hole among them.
    pub free: u64,
    pub largest_free: u64,
    /// 1 − largest hole / free bytes, at the dump.
    pub fragmentation: f64,
    pub segments: usize,
}

impl Side {
    /// `device`'s numbers, over its already built timeline.
    pub fn of(snap: &Snapshot, device: usize, tl: &Timeline) -> Side {
        let s = tl.summary();
        let f = fragmentation(snap, device);
        Side {
            entries: s.entries,
            peak_allocated: s.peak_allocated,
            peak_reserved: s.peak_reserved,
            dump_allocated: tl.dump_allocated,
            dump_reserved: tl.dump_reserved,
            reserved_minus_allocated: f.reserved_minus_allocated,
            free: f.free,
            largest_free: f.largest_free,
            fragmentation: f.ratio,
            segments: device_segments(snap, device).count(),
        }
    }
}

/// Live bytes of one top user frame in both files. Changes are AFTER − BEFORE.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FrameChange {
    /// `file:line:name`, or `<no user frame>` / `<no stack>`.
    pub label: String,
    pub before_peak: u64,
    pub after_peak: u64,
    pub peak_change: i64,
    pub before_dump: u64,
    pub after_dump: u64,
    pub dump_change: i64,
}

/// Allocations of AFTER from a stack BEFORE never allocated from (live at AFTER's peak or
/// dump).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NewStack {
    /// The stack's name (`frames::label`: its top user frame, or the best frame it has).
    pub label: String,
    /// Innermost first, capture machinery left out (as the page's stack panel shows).
    pub frames: Vec<String>,
    pub peak_bytes: u64,
    pub peak_count: usize,
    pub dump_bytes: u64,
    pub dump_count: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SegmentChange {
    pub address: u64,
    pub size: u64,
    pub stream: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Comparison {
    pub device: usize,
    pub before: Side,
    pub after: Side,
    /// Top frames whose live bytes changed at the peak or at the dump; largest change first.
    pub frames: Vec<FrameChange>,
    /// Most bytes at AFTER's peak first.
    pub new_stacks: Vec<NewStack>,
    /// Segments (address and size) of AFTER that BEFORE does not have, and the reverse.
    pub segments_added: Vec<SegmentChange>,
    pub segments_removed: Vec<SegmentChange>,
}

/// One file's analyses the comparison reads.
struct Analysed<'a> {
    snap: &'a Snapshot,
    timeline: Timeline,
    peak: Peak,
    dump: Peak,
}

impl<'a> Analysed<'a> {
    fn new(snap: &'a Snapshot, device: usize) -> Analysed<'a> {
        let timeline = Timeline::build(snap, device);
        let peak = composition(snap, &timeline, timeline.peak_index());
        let dump = composition(snap, &timeline, None);
        Analysed {
            snap,
            timeline,
            peak,
            dump,
        }
    }

    fn stack_text(&self, stack: Option<StackId>) -> Vec<String> {
        match stack {
            Some(s) => format_stack(&self.snap.stacks, s, true),
            None => Vec::new(),
        }
    }
}

fn change(before: u64, after: u64) -> i64 {
    let d = after as i128 - before as i128;
    d.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

fn by_frame(before: &Analysed, after: &Analysed) -> Vec<FrameChange> {
    // label -> [before peak, after peak, before dump, after dump]
    let mut rows: HashMap<&str, [u64; 4]> = HashMap::new();
    for (k, p) in [
        &before.peak.by_top_frame,
        &after.peak.by_top_frame,
        &before.dump.by_top_frame,
        &after.dump.by_top_frame,
    ]
    .into_iter()
    .enumerate()
    {
        for g in p {
            rows.entry(g.label.as_str()).or_default()[k] += g.bytes;
        }
    }
    let mut out: Vec<FrameChange> = rows
        .into_iter()
        .map(|(label, [bp, ap, bd, ad])| FrameChange {
            label: label.to_string(),
            before_peak: bp,
            after_peak: ap,
            peak_change: change(bp, ap),
            before_dump: bd,
            after_dump: ad,
            dump_change: change(bd, ad),
        })
        .filter(|c| c.peak_change != 0 || c.dump_change != 0)
        .collect();
    let size = |c: &FrameChange| {
        c.peak_change
            .unsigned_abs()
            .max(c.dump_change.unsigned_abs())
    };
    out.sort_by(|x, y| size(y).cmp(&size(x)).then(x.label.cmp(&y.label)));
    out
}

fn new_stacks(before: &Analysed, after: &Analysed) -> Vec<NewStack> {
    let known: HashSet<Vec<String>> = {
        let ids: HashSet<Option<StackId>> = before
            .timeline
            .allocations
            .list
            .iter()
            .map(|a| a.stack)
            .collect();
        ids.into_iter().map(|s| before.stack_text(s)).collect()
    };
    let mut found: HashMap<Vec<String>, NewStack> = HashMap::new();
    for (at_peak, groups) in [(true, &after.peak.by_stack), (false, &after.dump.by_stack)] {
        for g in groups {
            let frames = after.stack_text(g.stack);
            if known.contains(&frames) {
                continue;
            }
            let e = found.entry(frames.clone()).or_insert_with(|| NewStack {
                label: label(&after.snap.stacks, g.stack),
                frames,
                peak_bytes: 0,
                peak_count: 0,
                dump_bytes: 0,
                dump_count: 0,
            });
            if at_peak {
                e.peak_bytes += g.bytes;
                e.peak_count += g.count;
            } else {
                e.dump_bytes += g.bytes;
                e.dump_count += g.count;
            }
        }
    }
    let mut out: Vec<NewStack> = found.into_values().collect();
    out.sort_by(|x, y| {
        (y.peak_bytes, y.dump_bytes)
            .cmp(&(x.peak_bytes, x.dump_bytes))
            .then(x.frames.cmp(&y.frames))
    });
    out
}

/// Segments of `a` whose (address, size) `b` does not have, by address.
fn segments_missing(a: &Snapshot, b: &Snapshot, device: usize) -> Vec<SegmentChange> {
    let in_b: HashSet<(u64, u64)> = device_segments(b, device)
        .map(|s| (s.address, s.total_size))
        .collect();
    let mut out: Vec<SegmentChange> = device_segments(a, device)
        .filter(|s| !in_b.contains(&(s.address, s.total_size)))
        .map(|s| SegmentChange {
            address: s.address,
            size: s.total_size,
            stream: s.stream,
        })
        .collect();
    out.sort_by_key(|s| s.address);
    out
}

/// Compares `device` of two snapshots.
pub fn compare(before: &Snapshot, after: &Snapshot, device: usize) -> Comparison {
    let b = Analysed::new(before, device);
    let a = Analysed::new(after, device);
    Comparison {
        device,
        before: Side::of(before, device, &b.timeline),
        after: Side::of(after, device, &a.timeline),
        frames: by_frame(&b, &a),
        new_stacks: new_stacks(&b, &a),
        segments_added: segments_missing(after, before, device),
        segments_removed: segments_missing(before, after, device),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::Action;
    use crate::snapshot::BlockState::*;

    #[test]
    fn names_what_grew_and_what_is_new() {
        let build = |grow: bool| {
            // The dump agrees with the trace: what is live is active.
            let blocks: &[(u64, _, u64)] = if grow {
                &[
                    (4 * MB, ActiveAllocated, 4 * MB),
                    (2 * MB, Inactive, 0),
                    (4 * MB, ActiveAllocated, 4 * MB),
                    (MB, ActiveAllocated, MB),
                    (9 * MB, Inactive, 0),
                ]
            } else {
                &[(4 * MB, ActiveAllocated, 4 * MB), (16 * MB, Inactive, 0)]
            };
            let mut snap = snapshot(vec![segment(0x1000_0000, blocks)], vec![]);
            let model = stack(&mut snap, &[("/p/model.py", 5, "forward")]);
            let loss = stack(&mut snap, &[("/p/loss.py", 7, "loss")]);
            let backward = stack(&mut snap, &[("/p/train.py", 9, "backward")]);
            let mut t = vec![
                with_stack(entry(Action::Alloc, 0x1000_0000, 4 * MB), model),
                with_stack(entry(Action::Alloc, 0x1040_0000, 2 * MB), loss),
            ];
            if grow {
                t.push(with_stack(entry(Action::Alloc, 0x1060_0000, 4 * MB), model));
                t.push(with_stack(entry(Action::Alloc, 0x10a0_0000, MB), backward));
            }
            t.push(entry(Action::FreeRequested, 0x1040_0000, 2 * MB));
            if grow {
                snap.segments
                    .push(segment(0x2000_0000, &[(2 * MB, Inactive, 0)]));
            }
            snap.device_traces = Some(vec![t]);
            snap
        };
        let (before, after) = (build(false), build(true));
        let same = compare(&before, &before, 0);
        assert!(same.frames.is_empty());
        assert!(same.new_stacks.is_empty());
        assert!(same.segments_added.is_empty() && same.segments_removed.is_empty());
        assert_eq!(same.before, same.after);

        let c = compare(&before, &after, 0);
        assert_eq!(c.before.peak_allocated, 6 * MB);
        assert_eq!(c.after.peak_allocated, 11 * MB);
        let rows: Vec<(&str, i64, i64)> = c
            .frames
            .iter()
            .map(|f| (f.label.as_str(), f.peak_change, f.dump_change))
            .collect();
        assert_eq!(
            rows,
            vec![
                ("/p/model.py:5:forward", 4 * MB as i64, 4 * MB as i64),
                ("/p/train.py:9:backward", MB as i64, MB as i64),
            ]
        );
        assert_eq!(c.new_stacks.len(), 1);
        assert_eq!(c.new_stacks[0].frames, vec!["/p/train.py:9:backward"]);
        assert_eq!(
            (c.new_stacks[0].peak_bytes, c.new_stacks[0].dump_count),
            (MB, 1)
        );
        assert_eq!(
            c.segments_added,
            vec![SegmentChange {
                address: 0x2000_0000,
                size: 2 * MB,
                stream: Some(0)
            }]
        );
        assert!(c.segments_removed.is_empty());
        // The reverse comparison shrinks by the same amounts and removes the segment.
        let r = compare(&after, &before, 0);
        assert_eq!(r.frames[0].peak_change, -(4 * MB as i64));
        assert!(r.new_stacks.is_empty());
        assert_eq!(r.segments_removed.len(), 1);
    }
}
