//! Best fit and the oversize rule (`get_free_block`): the smallest cached block on the request's
//! stream that is at least the rounded size, unless `max_split_size` forbids it; with expandable
//! segments, among such blocks the one whose segment grows least.

use super::backing::{Backing, StreamId};
use super::block::BlockId;
use super::model::Allocator;

impl<B: Backing> Allocator<B> {
    pub(crate) fn get_free_block(
        &mut self,
        pool: usize,
        stream: StreamId,
        size: u64,
    ) -> Option<BlockId> {
        if self.gc_enabled() {
            self.pools[pool].get_free_blocks_call_count += 1;
        }
        let chosen = self.find_free_block(pool, stream, size)?;
        self.pool_erase(chosen);
        Some(chosen)
    }

    /// Whether `malloc(orig_size, stream)` would be served from the cache right now.
    pub fn would_reuse_cached(&self, orig_size: u64, stream: StreamId) -> bool {
        let size = super::rounding::round_size(orig_size, &self.config);
        let pool = self.get_pool(size, stream);
        self.find_free_block(pool, stream, size).is_some()
    }

    /// The block `get_free_block` would take, without taking it.
    fn find_free_block(&self, pool: usize, stream: StreamId, size: u64) -> Option<BlockId> {
        let expandable_on = self.config.expandable_segments;
        let chosen = {
            let blocks = &self.blocks;
            let mut it = self.pools[pool].blocks.at_least(stream, size).map(|k| k.3);
            let mut cur = it.next()?;
            if blocks[cur].expandable.is_some() {
                if expandable_on {
                    // "Expandable size": what the block could grow to by mapping the unmapped
                    // range right after it.
                    let exp_size = |id: BlockId| {
                        let b = &blocks[id];
                        b.size
                            + b.next
                                .map(|n| &blocks[n])
                                .filter(|n| !n.mapped)
                                .map_or(0, |n| n.size)
                    };
                    for next in it {
                        if blocks[cur].expandable.is_some() && exp_size(next) < exp_size(cur) {
                            cur = next;
                        } else {
                            break;
                        }
                    }
                } else {
                    // Expandable segments were turned off: use only ordinary blocks.
                    cur = it.find(|id| blocks[*id].expandable.is_none())?;
                }
            }
            cur
        };
        let block_size = self.blocks[chosen].size;
        let max_split = self.config.max_split_size;
        // A normal request never takes an oversize block...
        if size < max_split && block_size >= max_split {
            return None;
        }
        // ...and an oversize request takes one only if little is wasted.
        if size >= max_split
            && block_size >= size.saturating_add(self.config.max_non_split_rounding_size)
        {
            return None;
        }
        Some(chosen)
    }
}
