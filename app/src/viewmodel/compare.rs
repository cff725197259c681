//! The before/after panel (core `compare::compare`, the function `memsnap compare` calls): the
//! open file is AFTER, a file picked in the panel BEFORE.

use memsnap_core::analysis::compare::compare;
use memsnap_core::snapshot::Snapshot;

use super::cache::trace_index;
use crate::protocol::analysis::{CompareView, GroupVm};

/// Rows of each list sent (the panel shows them all; `memsnap compare --json` has the rest).
pub const COMPARE_ROWS: usize = 12;

pub fn compare_view(
    before: &Snapshot,
    after: &Snapshot,
    before_name: &str,
    device: i64,
) -> CompareView {
    let c = compare(before, after, trace_index(device));
    let sum = |v: &[memsnap_core::analysis::compare::SegmentChange]| -> u64 {
        v.iter().map(|s| s.size).sum()
    };
    CompareView {
        before_name: before_name.to_string(),
        device,
        frames_total: c.frames.len() as u64,
        frames: c.frames.iter().take(COMPARE_ROWS).cloned().collect(),
        new_stacks_total: c.new_stacks.len() as u64,
        new_stacks_bytes: c.new_stacks.iter().map(|s| s.peak_bytes).sum(),
        new_stacks: c
            .new_stacks
            .iter()
            .take(COMPARE_ROWS)
            .map(|s| GroupVm {
                label: s.label.clone(),
                bytes: s.peak_bytes,
                count: s.peak_count as u64,
            })
            .collect(),
        segments_added: c.segments_added.len() as u64,
        segments_added_bytes: sum(&c.segments_added),
        segments_removed: c.segments_removed.len() as u64,
        segments_removed_bytes: sum(&c.segments_removed),
        before: c.before,
        after: c.after,
    }
}
