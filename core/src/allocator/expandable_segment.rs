//! One expandable segment: a reserved virtual range of pages (the allocator's use of them is
//! `expandable`). Which pages are mapped is kept on the blocks (`Block::mapped`), not per page
//! here: a replay on an unbounded device reserves ranges of 2^50 bytes, and a flag per page
//! of one was a 576 MB vector, which the page's worker took 0.7 s to grow its memory for.

use super::backing::StreamId;

/// A reserved virtual range and the size of its pages.
#[derive(Debug, Clone)]
pub struct ExpandableSegment {
    pub base: u64,
    pub size: u64,
    pub page: u64,
    pub stream: StreamId,
}
