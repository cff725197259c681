//! Blocks and their arena. A block is a run of bytes inside a segment; a segment is the chain of
//! blocks linked by `prev`/`next` (CUDACachingAllocator's `Block`). Ids stand in for the C++
//! pointers so that merging and splitting can relink neighbours without shared ownership.

use crate::snapshot::StackId;

use super::backing::StreamId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(pub u32);

#[derive(Debug, Clone)]
pub struct Block {
    pub addr: u64,
    pub size: u64,
    /// Bytes the user asked for (stale once freed, as in PyTorch).
    pub requested: u64,
    pub stream: StreamId,
    /// Index of the owning pool in `Allocator::pools`.
    pub pool: usize,
    pub allocated: bool,
    /// False only for the unmapped parts of an expandable segment's virtual range.
    pub mapped: bool,
    pub prev: Option<BlockId>,
    pub next: Option<BlockId>,
    /// Outstanding events of streams the block was used on (`record_stream`).
    pub event_count: u32,
    pub stream_uses: Vec<StreamId>,
    /// Pool's `get_free_block` call count when the block was freed (GC age).
    pub gc_count_base: u64,
    pub frames: Option<StackId>,
    /// Stack of the cudaMalloc; kept on the segment's head block.
    pub segment_frames: Option<StackId>,
    /// Index into `Allocator::expandable` when the block lives in an expandable segment.
    pub expandable: Option<usize>,
}

impl Block {
    pub fn new(addr: u64, size: u64, stream: StreamId, pool: usize) -> Block {
        Block {
            addr,
            size,
            requested: 0,
            stream,
            pool,
            allocated: false,
            mapped: true,
            prev: None,
            next: None,
            event_count: 0,
            stream_uses: Vec::new(),
            gc_count_base: 0,
            frames: None,
            segment_frames: None,
            expandable: None,
        }
    }

    pub fn is_split(&self) -> bool {
        self.prev.is_some() || self.next.is_some()
    }

    /// Free, with no outstanding stream work: may merge and be handed out.
    pub fn allocatable(&self) -> bool {
        !self.allocated && self.event_count == 0 && self.stream_uses.is_empty()
    }
}

#[derive(Debug, Clone, Default)]
pub struct Arena {
    slots: Vec<Option<Block>>,
    vacant: Vec<u32>,
    live: usize,
}

impl Arena {
    pub fn insert(&mut self, b: Block) -> BlockId {
        self.live += 1;
        if let Some(i) = self.vacant.pop() {
            self.slots[i as usize] = Some(b);
            BlockId(i)
        } else {
            self.slots.push(Some(b));
            BlockId(self.slots.len() as u32 - 1)
        }
    }

    pub fn remove(&mut self, id: BlockId) -> Option<Block> {
        let b = self.slots.get_mut(id.0 as usize)?.take();
        if b.is_some() {
            self.live -= 1;
            self.vacant.push(id.0);
        }
        b
    }

    pub fn get(&self, id: BlockId) -> Option<&Block> {
        self.slots.get(id.0 as usize).and_then(|b| b.as_ref())
    }

    pub fn len(&self) -> usize {
        self.live
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = (BlockId, &Block)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.as_ref().map(|b| (BlockId(i as u32), b)))
    }
}

impl std::ops::Index<BlockId> for Arena {
    type Output = Block;
    fn index(&self, id: BlockId) -> &Block {
        // Ids come only from this arena and are dropped when their block is removed.
        match &self.slots[id.0 as usize] {
            Some(b) => b,
            None => panic!("allocator model bug: block {id:?} used after removal"),
        }
    }
}

impl std::ops::IndexMut<BlockId> for Arena {
    fn index_mut(&mut self, id: BlockId) -> &mut Block {
        match &mut self.slots[id.0 as usize] {
            Some(b) => b,
            None => panic!("allocator model bug: block {id:?} used after removal"),
        }
    }
}
