//! Giving memory back to the device: one cached segment (`release_block`), the oversize blocks
//! a request could use (`release_available_cached_blocks`, only with max_split_size), and every
//! unused segment and expandable page (`release_cached_blocks`, which `empty_cache` is).

use crate::snapshot::Action;

use super::backing::{Backing, StreamId};
use super::block::BlockId;
use super::model::Allocator;
use super::pool::{LARGE_POOL, SMALL_POOL};

impl<B: Backing> Allocator<B> {
    /// cudaFree of a whole cached segment (a free block with no neighbours).
    pub(crate) fn release_block(&mut self, id: BlockId) {
        let (addr, size, stream, pool, frames) = {
            let b = &self.blocks[id];
            (b.addr, b.size, b.stream, b.pool, b.segment_frames)
        };
        self.stats.num_device_free += 1;
        self.record(Action::SegmentFree, addr, size, stream, frames);
        self.backing.free(addr, size);
        self.stats.reserved -= size;
        self.note_segment_removed(pool);
        self.pool_erase(id);
        self.blocks.remove(id);
    }

    /// Frees whole cached segments of `pool`, and unmaps free pages of its expandable ranges.
    pub(crate) fn release_blocks(&mut self, pool: usize) {
        let ids: Vec<BlockId> = self.pools[pool].blocks.iter().map(|k| k.3).collect();
        let mut to_unmap = Vec::new();
        for id in ids {
            let b = &self.blocks[id];
            if b.expandable.is_some() {
                to_unmap.push(id);
            } else if !b.is_split() {
                self.release_block(id);
            }
        }
        for id in to_unmap {
            if self.blocks.get(id).is_none() {
                continue;
            }
            if let Some(u) = self.unmap_block(id) {
                if !self.blocks[u].is_split() {
                    self.release_expandable_segment(u);
                }
            }
        }
    }

    /// With max_split_size set, before giving up: free one cached oversize block of this stream
    /// big enough for the request, or else the largest ones until their sizes add up to it.
    pub(crate) fn release_available_cached_blocks(
        &mut self,
        pool: usize,
        stream: StreamId,
        size: u64,
    ) -> bool {
        if !self.config.max_split_size_limited() {
            return false;
        }
        let max_split = self.config.max_split_size;
        let key = size.max(max_split);
        let releasable = |s: &Self, id: BlockId| {
            let b = &s.blocks[id];
            !b.is_split() && b.expandable.is_none()
        };
        let single = self.pools[pool]
            .blocks
            .at_least(stream, key)
            .next()
            .map(|k| k.3);
        if let Some(id) = single {
            if releasable(self, id) {
                self.release_block(id);
                return true;
            }
        }
        let candidates: Vec<(u64, BlockId)> = self.pools[pool]
            .blocks
            .below(stream, key)
            .take_while(|k| k.1 >= max_split)
            .map(|k| (k.1, k.3))
            .collect();
        let mut released = 0u64;
        for (bsize, id) in candidates {
            if released >= key {
                break;
            }
            if releasable(self, id) {
                released += bsize;
                self.release_block(id);
            }
        }
        released >= key
    }

    /// `release_cached_blocks`: wait for pending frees, then free every unused segment (large
    /// pool first, then small, then graph pools no longer in use).
    pub(crate) fn release_cached_blocks(&mut self) {
        self.synchronize_and_free_events();
        self.release_blocks(LARGE_POOL);
        self.release_blocks(SMALL_POOL);
        for id in self.freeable_pools.clone() {
            let Some(p) = self.private_pools.get(&id) else {
                continue;
            };
            if p.use_count > 0 {
                continue;
            }
            let (small, large) = (p.small, p.large);
            self.release_blocks(small);
            self.release_blocks(large);
            if self
                .private_pools
                .get(&id)
                .is_some_and(|p| p.cuda_malloc_count == 0)
            {
                self.private_pools.remove(&id);
                self.freeable_pools.retain(|p| *p != id);
            }
        }
    }

    /// `torch.cuda.empty_cache()`.
    pub fn empty_cache(&mut self) {
        self.release_cached_blocks();
    }
}
