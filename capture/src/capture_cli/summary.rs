//! The closing summary of a run, on stderr.

use memsnap_core::allocator::Stats;
use memsnap_core::snapshot::{BlockState, Snapshot};

use crate::scenario::size::human;

#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub label: String,
    pub peak_reserved: u64,
    pub peak_allocated: u64,
    pub reserved: u64,
    pub allocated: u64,
    /// The largest inactive block at the end: the biggest request served without a new segment.
    pub largest_hole: u64,
    pub segments: usize,
    pub ooms: u64,
    pub trace_entries: usize,
    pub actions: u64,
}

impl Summary {
    pub fn new(label: String, stats: &Stats, snap: &Snapshot, actions: u64) -> Summary {
        let blocks = || snap.segments.iter().flat_map(|s| s.blocks.iter());
        Summary {
            label,
            peak_reserved: stats.peak_reserved,
            peak_allocated: stats.peak_allocated,
            reserved: snap.segments.iter().map(|s| s.total_size).sum(),
            allocated: blocks()
                .filter(|b| b.state == BlockState::ActiveAllocated)
                .map(|b| b.size)
                .sum(),
            largest_hole: blocks()
                .filter(|b| b.state == BlockState::Inactive)
                .map(|b| b.size)
                .max()
                .unwrap_or(0),
            segments: snap.segments.len(),
            ooms: stats.num_ooms,
            trace_entries: snap.device_traces.iter().flatten().map(|t| t.len()).sum(),
            actions,
        }
    }

    pub fn render(&self) -> String {
        format!(
            "{}\n  peak reserved    {}\n  peak allocated   {}\n  at end           {} reserved in {} segments, {} allocated\n  largest hole     {}\n  OOMs             {}\n  trace entries    {}\n  steps run        {}\n",
            self.label,
            human(self.peak_reserved),
            human(self.peak_allocated),
            human(self.reserved),
            self.segments,
            human(self.allocated),
            human(self.largest_hole),
            self.ooms,
            self.trace_entries,
            self.actions,
        )
    }
}
