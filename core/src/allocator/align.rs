//! torch_npu's base-address alignment (NPUCachingAllocator.cpp `malloc`, after a block is found):
//! with expandable segments, a request of 2 MiB or more whose block does not start on a
//! `base_addr_aligned_kb` boundary (16 KiB by default) starts at the next boundary instead, when
//! the block still holds it there; the bytes skipped stay behind as a free block. CUDA's
//! allocator has no such step.

use super::backing::Backing;
use super::block::{Block, BlockId};
use super::model::Allocator;
use super::rules::Rules;
use super::sizes::ROUND_LARGE;

impl<B: Backing> Allocator<B> {
    /// The block the request is served from: `block` itself, or its aligned tail.
    pub(crate) fn align_block_start(&mut self, block: BlockId, size: u64) -> BlockId {
        let align = self.config.base_addr_aligned;
        if self.config.rules != Rules::Npu
            || !self.config.expandable_segments
            || size < ROUND_LARGE
            || align == 0
        {
            return block;
        }
        let (addr, bsize) = (self.blocks[block].addr, self.blocks[block].size);
        let offset = match addr % align {
            0 => return block,
            r => align - r,
        };
        if offset + size > bsize {
            return block;
        }
        let front = &self.blocks[block];
        let mut tail = Block::new(addr + offset, bsize - offset, front.stream, front.pool);
        tail.expandable = front.expandable;
        tail.prev = Some(block);
        tail.next = front.next;
        let id = self.blocks.insert(tail);
        if let Some(n) = self.blocks[id].next {
            self.blocks[n].prev = Some(id);
        }
        // The found block keeps its place (and the segment's stack) as the skipped bytes.
        let f = &mut self.blocks[block];
        f.next = Some(id);
        f.size = offset;
        self.pool_insert(block);
        id
    }
}
