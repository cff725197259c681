//! The split rule (`should_split`) and handing out a found block (`alloc_found_block`).

use crate::snapshot::{Action, StackId};

use super::backing::Backing;
use super::block::{Block, BlockId};
use super::model::Allocator;
use super::rounding::{MIN_BLOCK_SIZE, SMALL_SIZE};

impl<B: Backing> Allocator<B> {
    /// Small pool (and every pool with expandable segments): split when at least 512 B remain.
    /// Large pool: split only requests below `max_split_size` and only when more than 1 MiB
    /// remains (a smaller tail could serve no large request).
    pub(crate) fn should_split(&self, block: BlockId, size: u64) -> bool {
        let b = &self.blocks[block];
        let remaining = b.size - size;
        if self.pools[b.pool].is_small || self.config.expandable_segments {
            remaining >= MIN_BLOCK_SIZE
        } else {
            size < self.config.max_split_size && remaining > SMALL_SIZE
        }
    }

    pub(crate) fn alloc_found_block(
        &mut self,
        mut block: BlockId,
        size: u64,
        orig_size: u64,
        frames: Option<StackId>,
    ) -> u64 {
        if self.should_split(block, size) {
            let remaining = block;
            let r = &self.blocks[remaining];
            let mut front = Block::new(r.addr, size, r.stream, r.pool);
            front.expandable = r.expandable;
            front.prev = r.prev;
            front.next = Some(remaining);
            let prev = r.prev;
            let id = self.blocks.insert(front);
            if let Some(p) = prev {
                self.blocks[p].next = Some(id);
            }
            let r = &mut self.blocks[remaining];
            // The segment's stack stays with its head block.
            let seg_frames = r.segment_frames.take();
            r.prev = Some(id);
            r.addr += size;
            r.size -= size;
            self.blocks[id].segment_frames = seg_frames;
            self.pool_insert(remaining);
            block = id;
        }
        let (addr, bsize, stream) = {
            let b = &mut self.blocks[block];
            b.allocated = true;
            b.requested = orig_size;
            b.frames = frames;
            (b.addr, b.size, b.stream)
        };
        self.active.insert(addr, block);
        self.record(Action::Alloc, addr, orig_size, stream, frames);
        let pool = self.blocks[block].pool;
        self.tag_pool(pool);
        self.stats.allocated += bsize;
        self.stats.peak_allocated = self.stats.peak_allocated.max(self.stats.allocated);
        self.stats.active += bsize;
        self.stats.requested += orig_size;
        self.backing.touch(addr, bsize, stream);
        addr
    }
}
