//! The pools' own records: a pool of free blocks and unmapped expandable ranges, a private
//! pool's counts, a capture in progress (the allocator's use of them is `pool`).

use std::collections::BTreeSet;

use super::backing::StreamId;
use super::block::BlockId;
use super::free_blocks::FreeBlocks;

/// `MempoolId_t`: (graph pool counter, user pool counter); (0, 0) = the default pools.
pub type MempoolId = (i64, i64);

pub const LARGE_POOL: usize = 0;
pub const SMALL_POOL: usize = 1;

#[derive(Debug, Clone)]
pub struct BlockPool {
    pub blocks: FreeBlocks,
    pub unmapped: BTreeSet<(StreamId, u64, BlockId)>,
    pub is_small: bool,
    pub owner: Option<MempoolId>,
    /// Calls of `get_free_block` (ages cached blocks for garbage collection).
    pub get_free_blocks_call_count: u64,
}

impl BlockPool {
    pub fn new(is_small: bool, owner: Option<MempoolId>) -> BlockPool {
        BlockPool {
            blocks: FreeBlocks::new(),
            unmapped: BTreeSet::new(),
            is_small,
            owner,
            get_free_blocks_call_count: 0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct PrivatePool {
    pub large: usize,
    pub small: usize,
    pub use_count: u32,
    /// Segments (or mapped ranges) it holds; the pool goes away when this is 0 and unused.
    pub cuda_malloc_count: u32,
}

/// A capture in progress: allocations on streams the filter accepts go to the private pool.
#[derive(Debug, Clone)]
pub struct Capture {
    pub pool: MempoolId,
    /// `None`: every stream.
    pub stream: Option<StreamId>,
}
