//! Starting the model from an existing state (the segments of a snapshot, or a reconstructed
//! state at some trace entry), so that a truncated trace can be replayed from where it begins.

use crate::snapshot::{BlockState, Segment, SegmentType};

use super::backing::Backing;
use super::block::{Block, BlockId};
use super::expandable::ExpandableSegment;
use super::model::Allocator;
use super::pool::{MempoolId, LARGE_POOL, SMALL_POOL};
use super::rounding::SMALL_BUFFER;

/// Stream standing for the unknown streams whose work holds a seeded pending-free block (and
/// that replays use for blocks the run freed with pending stream uses).
pub const PENDING_STREAM: i64 = i64::MIN + 7;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedError {
    pub segment: u64,
    pub message: String,
}

impl std::fmt::Display for SeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "segment 0x{:x}: {}", self.segment, self.message)
    }
}

impl std::error::Error for SeedError {}

fn is_small_segment(s: &Segment) -> bool {
    match s.segment_type {
        Some(t) => t == SegmentType::Small,
        // Only small-pool segments are exactly 2 MiB (large ones are 20 MiB or >= 10 MiB).
        None => s.total_size == SMALL_BUFFER,
    }
}

impl<B: Backing> Allocator<B> {
    fn seed_pool(&mut self, small: bool, pool_id: MempoolId) -> usize {
        if pool_id == (0, 0) {
            return if small { SMALL_POOL } else { LARGE_POOL };
        }
        let p = self.private_pool_entry(pool_id);
        if p.use_count == 0 {
            p.use_count = 1;
        }
        if small {
            p.small
        } else {
            p.large
        }
    }

    /// Adds blocks for `seg`'s blocks at `addr`.., linked after `prev`; returns (first, last).
    fn seed_blocks(
        &mut self,
        seg: &Segment,
        pool: usize,
        expandable: Option<usize>,
        prev: Option<BlockId>,
    ) -> Result<(Option<BlockId>, Option<BlockId>), SeedError> {
        let stream = seg.stream.unwrap_or(0);
        let mut at = seg.address;
        let mut first = None;
        let mut last = prev;
        for b in &seg.blocks {
            if let Some(a) = b.address {
                if a != at {
                    return Err(SeedError {
                        segment: seg.address,
                        message: format!(
                            "block at 0x{a:x} does not follow the previous one (expected 0x{at:x})"
                        ),
                    });
                }
            }
            let mut blk = Block::new(at, b.size, stream, pool);
            blk.expandable = expandable;
            blk.requested = b.requested_size.unwrap_or(0);
            blk.frames = b.frames;
            blk.prev = last;
            match b.state {
                BlockState::ActiveAllocated => blk.allocated = true,
                BlockState::ActivePendingFree => blk.event_count = 1,
                BlockState::Inactive => {}
            }
            let id = self.blocks.insert(blk);
            if let Some(l) = last {
                self.blocks[l].next = Some(id);
            }
            if first.is_none() {
                first = Some(id);
                self.blocks[id].segment_frames = seg.frames;
            }
            match b.state {
                BlockState::Inactive => self.pool_insert(id),
                BlockState::ActiveAllocated => {
                    self.active.insert(at, id);
                    self.stats.allocated += b.size;
                    self.stats.active += b.size;
                    self.stats.requested += self.blocks[id].requested;
                }
                BlockState::ActivePendingFree => {
                    self.active.insert(at, id);
                    self.stats.active += b.size;
                    // Its events belong to unknown streams: a stand-in stream the caller controls.
                    let ev = self.backing.record_event(PENDING_STREAM);
                    self.events
                        .entry(PENDING_STREAM)
                        .or_default()
                        .push_back((ev, id));
                }
            }
            last = Some(id);
            at += b.size;
        }
        if at - seg.address != seg.total_size {
            return Err(SeedError {
                segment: seg.address,
                message: format!(
                    "blocks add up to {} bytes, total_size is {}",
                    at - seg.address,
                    seg.total_size
                ),
            });
        }
        Ok((first, last))
    }

    /// Starts from these segments (one device's, as a snapshot lists them). Expandable segments
    /// of one stream and pool become one virtual range with the gaps between them unmapped.
    pub fn seed_segments(&mut self, segments: &[Segment]) -> Result<(), SeedError> {
        self.seed_segments_with_hints(segments, &[])
    }

    /// As [`Self::seed_segments`], with addresses known to lie in expandable ranges
    /// (`(stream, addr)` of later map/unmap entries): a range starts at the lowest of those
    /// nearest to it, since pages unmapped at the start are not in the segments.
    pub fn seed_segments_with_hints(
        &mut self,
        segments: &[Segment],
        va_hints: &[(i64, u64)],
    ) -> Result<(), SeedError> {
        let mut groups: std::collections::BTreeMap<(i64, bool, MempoolId), Vec<&Segment>> =
            Default::default();
        for seg in segments {
            let small = is_small_segment(seg);
            let pool_id = seg.segment_pool_id.unwrap_or((0, 0));
            if seg.is_expandable == Some(true) {
                groups
                    .entry((seg.stream.unwrap_or(0), small, pool_id))
                    .or_default()
                    .push(seg);
                continue;
            }
            let pool = self.seed_pool(small, pool_id);
            self.seed_blocks(seg, pool, None, None)?;
            self.note_segment_added(pool);
            self.add_reserved(seg.total_size);
        }
        for ((stream, small, pool_id), mut segs) in groups {
            segs.sort_by_key(|s| s.address);
            let pool = self.seed_pool(small, pool_id);
            let page = self.config.expandable_page(small);
            let first = segs[0].address;
            // Hints on this stream nearer to this group than to any other group's first segment.
            let others: Vec<u64> = segments
                .iter()
                .filter(|s| s.is_expandable == Some(true) && s.stream.unwrap_or(0) == stream)
                .filter(|s| {
                    (is_small_segment(s), s.segment_pool_id.unwrap_or((0, 0))) != (small, pool_id)
                })
                .map(|s| s.address)
                .collect();
            let base = va_hints
                .iter()
                .filter(|(st, a)| *st == stream && *a < first && (first - a) % page == 0)
                .filter(|(_, a)| others.iter().all(|o| o.abs_diff(*a) > first - a))
                .map(|(_, a)| *a)
                .min()
                .unwrap_or(first);
            let last_end = segs
                .iter()
                .map(|s| s.address + s.total_size)
                .max()
                .unwrap_or(base);
            let total = self.backing.mem_info().1;
            let size = (last_end - base + total + total / 8).div_ceil(page) * page;
            let idx = self.expandable.len();
            let es = ExpandableSegment {
                base,
                size,
                page,
                stream,
            };
            let mut prev: Option<BlockId> = None;
            let mut at = base;
            for seg in &segs {
                if (seg.address - base) % page != 0
                    || seg.total_size % page != 0
                    || seg.address < at
                {
                    return Err(SeedError {
                        segment: seg.address,
                        message: format!(
                            "expandable range not made of {page}-byte pages from 0x{base:x}"
                        ),
                    });
                }
                if seg.address > at {
                    prev = Some(self.seed_unmapped(at, seg.address - at, stream, pool, idx, prev));
                }
                let (_, last) = self.seed_blocks(seg, pool, Some(idx), prev)?;
                prev = last;
                at = seg.address + seg.total_size;
                self.note_segment_added(pool);
                self.add_reserved(seg.total_size);
            }
            self.seed_unmapped(at, base + size - at, stream, pool, idx, prev);
            self.expandable.push(Some(es));
        }
        Ok(())
    }

    fn seed_unmapped(
        &mut self,
        addr: u64,
        size: u64,
        stream: i64,
        pool: usize,
        seg: usize,
        prev: Option<BlockId>,
    ) -> BlockId {
        let mut b = Block::new(addr, size, stream, pool);
        b.mapped = false;
        b.expandable = Some(seg);
        b.prev = prev;
        let id = self.blocks.insert(b);
        if let Some(p) = prev {
            self.blocks[p].next = Some(id);
        }
        self.pool_insert(id);
        id
    }
}
