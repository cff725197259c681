//! Freeing a block into its pool (`free_block`) and merging it with free neighbours
//! (`try_merge_blocks`). Neighbours are `prev`/`next` in the segment's chain, so blocks of
//! different segments (and of different streams) never merge.

use crate::snapshot::Action;

use super::backing::Backing;
use super::block::BlockId;
use super::model::Allocator;

impl<B: Backing> Allocator<B> {
    pub(crate) fn free_block(&mut self, id: BlockId) {
        let (addr, size, requested, stream, frames, prev, next) = {
            let b = &self.blocks[id];
            (
                b.addr,
                b.size,
                b.requested,
                b.stream,
                b.frames,
                b.prev,
                b.next,
            )
        };
        self.record(Action::FreeCompleted, addr, requested, stream, frames);
        self.active.remove(&addr);
        self.blocks[id].frames = None;
        for cand in [prev, next] {
            self.try_merge_blocks(id, cand);
        }
        let pool = self.blocks[id].pool;
        self.blocks[id].gc_count_base = self.pools[pool].get_free_blocks_call_count;
        self.pool_insert(id);
        self.stats.active -= size;
        self.stats.requested = self.stats.requested.saturating_sub(requested);
    }

    /// Merges `src` into `dst` when `src` is free, has no pending stream work and is mapped the
    /// same way; returns the bytes taken over. `dst` must not be in a pool set.
    pub(crate) fn try_merge_blocks(&mut self, dst: BlockId, src: Option<BlockId>) -> u64 {
        let Some(src) = src else { return 0 };
        {
            let s = &self.blocks[src];
            if !s.allocatable() || s.mapped != self.blocks[dst].mapped {
                return 0;
            }
        }
        self.pool_erase(src);
        let s = match self.blocks.remove(src) {
            Some(s) => s,
            None => return 0,
        };
        if self.blocks[dst].prev == Some(src) {
            // [src dst]
            let d = &mut self.blocks[dst];
            d.addr = s.addr;
            d.prev = s.prev;
            d.segment_frames = s.segment_frames;
            if let Some(p) = s.prev {
                self.blocks[p].next = Some(dst);
            }
        } else {
            // [dst src]
            self.blocks[dst].next = s.next;
            if let Some(n) = s.next {
                self.blocks[n].prev = Some(dst);
            }
        }
        self.blocks[dst].size += s.size;
        s.size
    }
}
