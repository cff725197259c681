//! One expandable segment: a reserved virtual range and which of its pages are mapped (the
//! allocator's use of them is `expandable`).

use super::backing::StreamId;

/// A reserved virtual range and which of its pages are mapped.
#[derive(Debug, Clone)]
pub struct ExpandableSegment {
    pub base: u64,
    pub size: u64,
    pub page: u64,
    pub stream: StreamId,
    pub mapped: Vec<bool>,
}

impl ExpandableSegment {
    pub(super) fn pages(&self, from: u64, to: u64) -> std::ops::Range<usize> {
        (from / self.page) as usize..(to / self.page) as usize
    }

    pub fn mapped_bytes(&self) -> u64 {
        self.mapped.iter().filter(|m| **m).count() as u64 * self.page
    }
}
