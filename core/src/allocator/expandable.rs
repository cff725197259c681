//! Expandable segments (Note [Expandable Segments]): one reserved virtual range per stream and
//! pool, backed by physical pages (2 MiB small, 20 MiB large; torch_npu's page options change
//! the large page: `Config::expandable_page`) mapped on demand. A request maps
//! pages at the first place on its stream where free and unmapped space together fit it;
//! `empty_cache` unmaps the fully free pages of free blocks.

use crate::snapshot::{Action, StackId};

use super::backing::{Backing, StreamId};
use super::block::{Block, BlockId};
use super::model::Allocator;

pub use super::expandable_segment::ExpandableSegment;

impl<B: Backing> Allocator<B> {
    /// `find_expandable_block`: the lowest-address unmapped range on this stream (starting at
    /// the free block right before it, if any) with room for `size`; else a new virtual range.
    fn find_expandable_block(
        &mut self,
        pool: usize,
        stream: StreamId,
        size: u64,
    ) -> Option<BlockId> {
        let candidates: Vec<BlockId> = self.pools[pool]
            .unmapped
            .range((stream, 0, BlockId(0))..)
            .take_while(|k| k.0 == stream)
            .map(|k| k.2)
            .collect();
        for c in candidates {
            let mut start = c;
            if let Some(p) = self.blocks[c].prev {
                if self.blocks[p].allocatable() {
                    start = p;
                }
            }
            let mut bytes = 0;
            let mut cur = Some(start);
            while bytes < size {
                match cur {
                    Some(id) if self.blocks[id].allocatable() => {
                        bytes += self.blocks[id].size;
                        cur = self.blocks[id].next;
                    }
                    _ => break,
                }
            }
            if bytes >= size {
                return Some(start);
            }
        }
        let page = self.config.expandable_page(self.pools[pool].is_small);
        let total = self.backing.mem_info().1;
        // 1 1/8 of device memory, so pages can be unmapped early and re-mapped at the end.
        let va_size = (total + total / 8).div_ceil(page).max(1) * page;
        let base = self.backing.reserve_virtual(va_size, stream)?;
        let idx = self.expandable.len();
        self.expandable.push(Some(ExpandableSegment {
            base,
            size: va_size,
            page,
            stream,
        }));
        let mut b = Block::new(base, va_size, stream, pool);
        b.mapped = false;
        b.expandable = Some(idx);
        let id = self.blocks.insert(b);
        self.pool_insert(id);
        Some(id)
    }

    /// Maps the pages under `[block.addr, block.addr + size)`; returns the mapped (page-rounded)
    /// length, 0 when the device has no room.
    fn map_pages(&mut self, seg: usize, addr: u64, size: u64) -> u64 {
        let Some(es) = self.expandable[seg].as_ref() else {
            return 0;
        };
        let from = addr - es.base;
        let to = (from + size).div_ceil(es.page) * es.page;
        if to == from || !self.backing.map(es.base + from, to - from) {
            return 0;
        }
        to - from
    }

    /// `map_block`: maps the start of unmapped block `to_map`, merges it with free mapped
    /// neighbours and caches it.
    fn map_block(&mut self, to_map: BlockId, size: u64, frames: Option<StackId>) -> bool {
        let (addr, bsize, seg, stream, pool) = {
            let b = &self.blocks[to_map];
            (b.addr, b.size, b.expandable, b.stream, b.pool)
        };
        let Some(seg) = seg else { return false };
        let mapped = self.map_pages(seg, addr, size);
        if mapped == 0 {
            return false;
        }
        self.pool_erase(to_map);
        self.blocks[to_map].mapped = true;
        if mapped < bsize {
            let mut rest = Block::new(addr + mapped, bsize - mapped, stream, pool);
            rest.mapped = false;
            rest.expandable = Some(seg);
            rest.prev = Some(to_map);
            rest.next = self.blocks[to_map].next;
            let rid = self.blocks.insert(rest);
            if let Some(n) = self.blocks[rid].next {
                self.blocks[n].prev = Some(rid);
            }
            self.blocks[to_map].next = Some(rid);
            self.blocks[to_map].size = mapped;
            self.pool_insert(rid);
        }
        let (prev, next) = (self.blocks[to_map].prev, self.blocks[to_map].next);
        self.try_merge_blocks(to_map, prev);
        self.try_merge_blocks(to_map, next);
        self.pool_insert(to_map);
        self.add_reserved(mapped);
        self.stats.num_device_alloc += 1;
        self.record(Action::SegmentMap, addr, mapped, stream, frames);
        let b = &mut self.blocks[to_map];
        if b.prev.is_none() && b.segment_frames.is_none() {
            b.segment_frames = frames;
        }
        true
    }

    /// `try_allocate_expandable_block`: a free mapped block of at least `size`, mapping pages as
    /// needed; removed from the pool like a found block.
    pub(crate) fn try_allocate_expandable_block(
        &mut self,
        pool: usize,
        stream: StreamId,
        size: u64,
        frames: Option<StackId>,
    ) -> Option<BlockId> {
        let mut candidate = self.find_expandable_block(pool, stream, size)?;
        if !self.blocks[candidate].mapped {
            let s = self.blocks[candidate].size.min(size);
            if !self.map_block(candidate, s, frames) {
                return None;
            }
        }
        while self.blocks[candidate].size < size {
            let remaining = size - self.blocks[candidate].size;
            let next = self.blocks[candidate].next?;
            let s = remaining.min(self.blocks[next].size);
            if !self.map_block(next, s, frames) {
                return None;
            }
            // map_block merged the free `candidate` into `next`.
            candidate = next;
        }
        self.pool_erase(candidate);
        Some(candidate)
    }

    /// `unmap_block`: unmaps the fully free pages inside free block `id`; the parts before and
    /// after them stay free and mapped. Returns the unmapped block, if any.
    pub(crate) fn unmap_block(&mut self, id: BlockId) -> Option<BlockId> {
        let (addr, size, seg, stream, pool) = {
            let b = &self.blocks[id];
            (b.addr, b.size, b.expandable?, b.stream, b.pool)
        };
        let es = self.expandable[seg].as_ref()?;
        let from = (addr - es.base).div_ceil(es.page) * es.page;
        let to = (addr + size - es.base) / es.page * es.page;
        if from >= to {
            return None;
        }
        let base = es.base;
        self.backing.unmap(base + from, to - from);
        let (uaddr, usize_) = (base + from, to - from);
        self.pool_erase(id);
        let before = uaddr - addr;
        if before > 0 {
            let mut bf = Block::new(addr, before, stream, pool);
            bf.expandable = Some(seg);
            bf.prev = self.blocks[id].prev;
            bf.next = Some(id);
            // The head keeps the segment's stack.
            bf.segment_frames = self.blocks[id].segment_frames.take();
            let bid = self.blocks.insert(bf);
            if let Some(p) = self.blocks[bid].prev {
                self.blocks[p].next = Some(bid);
            }
            self.blocks[id].prev = Some(bid);
            self.pool_insert(bid);
        }
        let after = size - before - usize_;
        if after > 0 {
            let mut af = Block::new(uaddr + usize_, after, stream, pool);
            af.expandable = Some(seg);
            af.prev = Some(id);
            af.next = self.blocks[id].next;
            let aid = self.blocks.insert(af);
            if let Some(n) = self.blocks[aid].next {
                self.blocks[n].prev = Some(aid);
            }
            self.blocks[id].next = Some(aid);
            self.pool_insert(aid);
        }
        {
            let b = &mut self.blocks[id];
            b.addr = uaddr;
            b.size = usize_;
            b.mapped = false;
        }
        let (prev, next) = (self.blocks[id].prev, self.blocks[id].next);
        self.try_merge_blocks(id, prev);
        self.try_merge_blocks(id, next);
        self.pool_insert(id);
        self.stats.reserved -= usize_;
        self.note_segment_removed(pool);
        self.stats.num_device_free += 1;
        let frames = self.blocks[id].segment_frames;
        self.record(Action::SegmentUnmap, uaddr, usize_, stream, frames);
        Some(id)
    }

    /// `release_expandable_segment`: the whole virtual range is unmapped: give it back.
    pub(crate) fn release_expandable_segment(&mut self, id: BlockId) {
        let Some(seg) = self.blocks[id].expandable else {
            return;
        };
        self.pool_erase(id);
        self.blocks.remove(id);
        if let Some(es) = self.expandable[seg].take() {
            self.backing.release_virtual(es.base, es.size);
        }
    }
}
