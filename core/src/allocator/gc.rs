//! Garbage collection of cached blocks (`garbage_collect_cached_blocks`): with a memory fraction
//! set and `garbage_collection_threshold` > 0, once reserved memory passes threshold * allowed,
//! whole cached large segments are freed oldest first (age = `get_free_block` calls since the
//! block was freed), without waiting for events.

use super::backing::Backing;
use super::model::Allocator;
use super::pool::LARGE_POOL;

impl<B: Backing> Allocator<B> {
    pub(crate) fn gc_enabled(&self) -> bool {
        self.allowed_max.is_some() && self.config.garbage_collection_threshold > 0.0
    }

    pub(crate) fn garbage_collect_cached_blocks(&mut self) {
        let Some(allowed) = self.allowed_max else {
            return;
        };
        let threshold = (self.config.garbage_collection_threshold * allowed as f64) as u64;
        if self.stats.reserved <= threshold {
            return;
        }
        let target = self.stats.reserved - threshold;
        let calls = self.pools[LARGE_POOL].get_free_blocks_call_count;
        let age = |base: u64| calls.saturating_sub(base);
        let freeable = |s: &Self| -> Vec<_> {
            s.pools[LARGE_POOL]
                .blocks
                .iter()
                .map(|k| k.3)
                .filter(|id| !s.blocks[*id].is_split() && s.blocks[*id].expandable.is_none())
                .collect()
        };
        let mut total_age: u64 = freeable(self)
            .iter()
            .map(|id| age(self.blocks[*id].gc_count_base))
            .sum();
        let mut count = freeable(self).len() as u64;
        let mut reclaimed = 0u64;
        let mut freed_any = true;
        while reclaimed < target && freed_any && count > 0 {
            let avg = total_age as f64 / count as f64;
            freed_any = false;
            for id in freeable(self) {
                let a = age(self.blocks[id].gc_count_base);
                if a as f64 >= avg {
                    freed_any = true;
                    reclaimed += self.blocks[id].size;
                    total_age -= a;
                    count -= 1;
                    self.release_block(id);
                }
            }
        }
    }
}
