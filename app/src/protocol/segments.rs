//! One device's segments and blocks as the segment view draws them, and its byte totals.

use serde::{Deserialize, Serialize};

use crate::stack_table::StackTable;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BlockStateVm {
    ActiveAllocated,
    ActivePendingFree,
    Inactive,
}

impl BlockStateVm {
    /// The name PyTorch writes, used as `data-state` and as a CSS class.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockStateVm::ActiveAllocated => "active_allocated",
            BlockStateVm::ActivePendingFree => "active_pending_free",
            BlockStateVm::Inactive => "inactive",
        }
    }
}

/// One device's segments as drawn: segments in address order, blocks in address order within.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentsView {
    pub device: i64,
    pub segments: Vec<SegmentVm>,
    /// The stacks that blocks and segments reference (their `stack` ids), each frame once.
    pub stacks: StackTable,
}

impl SegmentsView {
    pub fn block_count(&self) -> usize {
        self.segments.iter().map(|s| s.blocks.len()).sum()
    }

    /// The (segment, block) indices of the block starting at `addr`.
    pub fn block_at(&self, addr: u64) -> Option<(usize, usize)> {
        self.segments.iter().enumerate().find_map(|(i, s)| {
            let offset = addr.checked_sub(s.address).filter(|&o| o < s.total_size)?;
            let b = s.blocks.iter().position(|b| b.offset == offset)?;
            Some((i, b))
        })
    }

    /// Frames of a stack (`file:line:name`), innermost first (empty for an unknown id).
    pub fn frames_of(&self, stack: u32) -> impl Iterator<Item = &str> + '_ {
        self.stacks.frames_of(stack)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SegmentVm {
    pub address: u64,
    pub total_size: u64,
    pub stream: i64,
    /// "small" or "large" when the file says.
    pub pool: Option<String>,
    /// A private pool's `segment_pool_id` (CUDA graph, MemPool); `None` for the default pools.
    pub pool_id: Option<(i64, i64)>,
    pub expandable: bool,
    /// Index into `SegmentsView::stacks`: where the segment was cudaMalloc'ed.
    pub stack: Option<u32>,
    pub blocks: Vec<BlockVm>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockVm {
    /// Bytes from the segment's start.
    pub offset: u64,
    pub size: u64,
    pub requested_size: Option<u64>,
    pub state: BlockStateVm,
    /// Index into `SegmentsView::stacks`.
    pub stack: Option<u32>,
    /// torch <= 2.0: the block's allocation history, oldest first, as (addr, real_size).
    pub history: Vec<(u64, u64)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameVm {
    pub filename: String,
    pub line: i64,
    pub name: String,
}

impl std::fmt::Display for FrameVm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.filename, self.line, self.name)
    }
}

/// Byte totals of one device (see `memsnap_core::analysis::totals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiagnosticsView {
    pub device: i64,
    pub segments: u64,
    pub blocks: u64,
    pub reserved: u64,
    pub allocated: u64,
    pub pending_free: u64,
    pub inactive: u64,
    pub largest_free: u64,
}
