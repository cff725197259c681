//! The allocator: state, `malloc` and `free` (DeviceCachingAllocator::malloc / free), and the
//! creation of new segments (`alloc_block`). Each further rule lives in its own file:
//! best_fit.rs, split.rs, merge.rs, expandable.rs, events.rs, gc.rs, release.rs, oom.rs.

use std::collections::{BTreeMap, VecDeque};

use foldhash::HashMap as FastMap;

use crate::snapshot::{Action, StackId, Stacks};

use super::backing::{Backing, EventId, StreamId};
use super::block::{Arena, Block, BlockId};
use super::block_pool::{BlockPool, Capture, MempoolId, PrivatePool};
use super::config::Config;
use super::expandable_segment::ExpandableSegment;
use super::oom_error::Oom;
use super::rounding::{get_allocation_size, round_size};
use super::trace::TraceRecorder;

/// Byte counters and their peaks (PyTorch's `memory_stats` subset the analyses use).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes in segments (cudaMalloc'd or mapped): `memory_reserved()`.
    pub reserved: u64,
    pub peak_reserved: u64,
    /// Bytes of blocks handed to users: `memory_allocated()`.
    pub allocated: u64,
    pub peak_allocated: u64,
    /// Allocated plus freed-but-pending blocks.
    pub active: u64,
    pub requested: u64,
    /// Largest reserved-but-unallocated (cached) bytes seen after any malloc or free.
    pub peak_cached: u64,
    pub num_ooms: u64,
    pub num_alloc_retries: u64,
    pub num_device_alloc: u64,
    pub num_device_free: u64,
    pub num_sync_all_streams: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UseError {
    /// `free`/`record_stream` of an address that is not an allocated block.
    NotAllocated(u64),
}

impl std::fmt::Display for UseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UseError::NotAllocated(a) => write!(f, "0x{a:x} is not an allocated block"),
        }
    }
}

impl std::error::Error for UseError {}

pub struct Allocator<B: Backing> {
    pub(crate) backing: B,
    pub(crate) config: Config,
    pub(crate) device: i64,
    pub(crate) blocks: Arena,
    /// Allocated and pending-free blocks by address (`active_blocks`). foldhash: SipHash was
    /// 13% of a replay.
    pub(crate) active: FastMap<u64, BlockId>,
    pub(crate) pools: Vec<BlockPool>,
    pub(crate) private_pools: BTreeMap<MempoolId, PrivatePool>,
    pub(crate) freeable_pools: Vec<MempoolId>,
    pub(crate) captures: Vec<Capture>,
    pub(crate) deferred_events: Vec<BlockId>,
    pub(crate) expandable: Vec<Option<ExpandableSegment>>,
    pub(crate) events: BTreeMap<StreamId, VecDeque<(EventId, BlockId)>>,
    /// `allowed_memory_maximum` when a memory fraction is set.
    pub(crate) allowed_max: Option<u64>,
    pub(crate) stats: Stats,
    pub(crate) trace: TraceRecorder,
    pub(crate) stacks: Stacks,
}

impl<B: Backing> Allocator<B> {
    pub fn new(backing: B, config: Config) -> Allocator<B> {
        Allocator {
            backing,
            config,
            device: 0,
            blocks: Arena::default(),
            active: FastMap::default(),
            pools: vec![BlockPool::new(false, None), BlockPool::new(true, None)],
            private_pools: BTreeMap::new(),
            freeable_pools: Vec::new(),
            captures: Vec::new(),
            deferred_events: Vec::new(),
            expandable: Vec::new(),
            events: BTreeMap::new(),
            allowed_max: None,
            stats: Stats::default(),
            trace: TraceRecorder::new(),
            stacks: Stacks::new(),
        }
    }

    /// The device index written into segments and used as the trace's index.
    pub fn with_device(mut self, device: i64) -> Self {
        self.device = device;
        self
    }

    /// The device index (`with_device`).
    pub fn device(&self) -> i64 {
        self.device
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    pub fn backing(&self) -> &B {
        &self.backing
    }

    pub fn backing_mut(&mut self) -> &mut B {
        &mut self.backing
    }

    pub fn stacks(&self) -> &Stacks {
        &self.stacks
    }

    /// Frames passed to `malloc` are ids in this table: intern them here.
    pub fn stacks_mut(&mut self) -> &mut Stacks {
        &mut self.stacks
    }

    /// Replaces the stack table (e.g. with a snapshot's, so that its stack ids can be passed in).
    pub fn set_stacks(&mut self, stacks: Stacks) {
        self.stacks = stacks;
    }

    pub fn trace(&self) -> &TraceRecorder {
        &self.trace
    }

    pub fn trace_mut(&mut self) -> &mut TraceRecorder {
        &mut self.trace
    }

    /// `setMemoryFraction`: cudaMalloc beyond `fraction * capacity` fails (and GC works off it).
    pub fn set_memory_fraction(&mut self, fraction: f64) {
        let total = self.backing.mem_info().1;
        self.allowed_max = Some((fraction.clamp(0.0, 1.0) * total as f64) as u64);
    }

    /// Caps what may be reserved, in bytes (the memory-fraction check with an absolute limit).
    pub fn set_capacity(&mut self, bytes: u64) {
        self.allowed_max = Some(bytes);
    }

    /// The block state at address `addr`, if a block starts there.
    pub fn allocated_size(&self, addr: u64) -> Option<u64> {
        self.active.get(&addr).map(|id| self.blocks[*id].size)
    }

    pub(crate) fn record(
        &mut self,
        action: Action,
        addr: u64,
        size: u64,
        stream: StreamId,
        frames: Option<StackId>,
    ) {
        if !self.trace.enabled() {
            return;
        }
        let t = self.backing.now_us();
        self.trace.push(action, addr, size, stream, t, frames);
    }

    pub(crate) fn add_reserved(&mut self, bytes: u64) {
        self.stats.reserved += bytes;
        self.stats.peak_reserved = self.stats.peak_reserved.max(self.stats.reserved);
    }

    /// `malloc(orig_size, stream)`: the address of a block of at least `orig_size` bytes.
    pub fn malloc(
        &mut self,
        orig_size: u64,
        stream: StreamId,
        frames: Option<StackId>,
    ) -> Result<u64, Oom> {
        if self.captures.is_empty() {
            self.process_events();
        }
        let size = round_size(orig_size, &self.config);
        let pool = self.get_pool(size, stream);
        let alloc_size = get_allocation_size(size, &self.config);

        let mut found = self.get_free_block(pool, stream, size);
        if found.is_none() {
            if self.gc_enabled() {
                self.garbage_collect_cached_blocks();
            }
            found = self.alloc_block(pool, stream, size, alloc_size, frames, false);
            if found.is_none() && self.release_available_cached_blocks(pool, stream, size) {
                found = self.alloc_block(pool, stream, size, alloc_size, frames, false);
            }
            if found.is_none() && self.captures.is_empty() {
                self.release_cached_blocks();
                found = self.alloc_block(pool, stream, size, alloc_size, frames, true);
            }
        }
        let Some(block) = found else {
            return Err(self.out_of_memory(size, alloc_size, stream, frames));
        };
        let block = self.align_block_start(block, size);
        let addr = self.alloc_found_block(block, size, orig_size, frames);
        self.note_cached();
        Ok(addr)
    }

    fn note_cached(&mut self) {
        let cached = self.stats.reserved.saturating_sub(self.stats.allocated);
        self.stats.peak_cached = self.stats.peak_cached.max(cached);
    }

    /// A new segment for the request (`alloc_block`): cudaMalloc of `alloc_size`, or growing an
    /// expandable segment by the rounded `size`.
    pub(crate) fn alloc_block(
        &mut self,
        pool: usize,
        stream: StreamId,
        size: u64,
        alloc_size: u64,
        frames: Option<StackId>,
        is_retry: bool,
    ) -> Option<BlockId> {
        if is_retry {
            self.stats.num_alloc_retries += 1;
        }
        if let Some(max) = self.allowed_max {
            if self.stats.reserved + alloc_size > max {
                return None;
            }
        }
        if self.config.expandable_segments {
            let b = self.try_allocate_expandable_block(pool, stream, size, frames)?;
            self.note_segment_added(pool);
            return Some(b);
        }
        let addr = self.backing.malloc(alloc_size, stream)?;
        self.note_segment_added(pool);
        self.add_reserved(alloc_size);
        self.stats.num_device_alloc += 1;
        let mut b = Block::new(addr, alloc_size, stream, pool);
        b.segment_frames = frames;
        let id = self.blocks.insert(b);
        self.record(Action::SegmentAlloc, addr, alloc_size, stream, frames);
        self.tag_pool(pool);
        Some(id)
    }

    /// `free(ptr)`: the block goes back to its pool, or waits for the events of the streams it
    /// was used on (`record_stream`).
    pub fn free(&mut self, addr: u64) -> Result<(), UseError> {
        let id = match self.active.get(&addr) {
            Some(id) if self.blocks[*id].allocated => *id,
            _ => return Err(UseError::NotAllocated(addr)),
        };
        let (size, requested, stream, frames) = {
            let b = &mut self.blocks[id];
            b.allocated = false;
            (b.size, b.requested, b.stream, b.frames)
        };
        self.stats.allocated -= size;
        self.record(Action::FreeRequested, addr, requested, stream, frames);
        if !self.blocks[id].stream_uses.is_empty() {
            if self.captures.is_empty() {
                self.insert_events(id);
            } else {
                self.deferred_events.push(id);
            }
        } else {
            self.free_block(id);
        }
        self.note_cached();
        Ok(())
    }

    /// Every segment (mapped range) with its blocks, for checks and emission: (head, chain).
    pub(crate) fn segment_heads(&self) -> Vec<BlockId> {
        let mut heads: Vec<(u64, BlockId)> = self
            .blocks
            .iter()
            .filter(|(_, b)| b.mapped && b.prev.is_none_or(|p| !self.blocks[p].mapped))
            .map(|(id, b)| (b.addr, id))
            .collect();
        heads.sort_unstable();
        heads.into_iter().map(|(_, id)| id).collect()
    }

    /// The mapped blocks of the segment starting at `head`, in address order.
    pub(crate) fn segment_chain(&self, head: BlockId) -> Vec<BlockId> {
        let mut out = Vec::new();
        let mut cur = Some(head);
        while let Some(id) = cur {
            let b = &self.blocks[id];
            if !b.mapped {
                break;
            }
            out.push(id);
            cur = b.next;
        }
        out
    }

    /// Size of the largest free (inactive, mapped) block: the biggest request served without
    /// a new segment.
    pub fn largest_free_block(&self) -> u64 {
        self.pools
            .iter()
            .flat_map(|p| p.blocks.iter().map(|k| k.1))
            .max()
            .unwrap_or(0)
    }
}
