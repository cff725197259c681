//! Block pools: free blocks ordered by (stream, size, address) so that a lower bound on
//! (stream, size) is the best fit on that stream; unmapped expandable ranges ordered by
//! (stream, address). Small and large default pools, plus private pools (CUDA graphs, MemPool)
//! by pool id (`get_pool`, `beginAllocateToPool`, `endAllocateToPool`, `releasePool`).

use super::backing::{Backing, StreamId};
use super::block::BlockId;
use super::model::Allocator;
use super::rounding::is_small;

pub use super::block_pool::{BlockPool, Capture, MempoolId, PrivatePool, LARGE_POOL, SMALL_POOL};

impl<B: Backing> Allocator<B> {
    /// The pool a rounded request goes to.
    pub(crate) fn get_pool(&self, size: u64, stream: StreamId) -> usize {
        for c in &self.captures {
            if c.stream.is_none_or(|s| s == stream) {
                if let Some(p) = self.private_pools.get(&c.pool) {
                    return if is_small(size) { p.small } else { p.large };
                }
            }
        }
        if is_small(size) {
            SMALL_POOL
        } else {
            LARGE_POOL
        }
    }

    pub(crate) fn pool_insert(&mut self, id: BlockId) {
        let b = &self.blocks[id];
        let pool = &mut self.pools[b.pool];
        if b.mapped {
            pool.blocks.insert((b.stream, b.size, b.addr, id));
        } else {
            pool.unmapped.insert((b.stream, b.addr, id));
        }
    }

    pub(crate) fn pool_erase(&mut self, id: BlockId) -> bool {
        let b = &self.blocks[id];
        let pool = &mut self.pools[b.pool];
        if b.mapped {
            pool.blocks.remove(&(b.stream, b.size, b.addr, id))
        } else {
            pool.unmapped.remove(&(b.stream, b.addr, id))
        }
    }

    /// The private pool with this id, created on first use.
    pub(crate) fn private_pool_entry(&mut self, id: MempoolId) -> &mut PrivatePool {
        if !self.private_pools.contains_key(&id) {
            let large = self.pools.len();
            self.pools.push(BlockPool::new(false, Some(id)));
            self.pools.push(BlockPool::new(true, Some(id)));
            self.private_pools.insert(
                id,
                PrivatePool {
                    large,
                    small: large + 1,
                    use_count: 0,
                    cuda_malloc_count: 0,
                },
            );
        }
        self.private_pools.get_mut(&id).expect("inserted above")
    }

    /// `beginAllocateToPool`: until `end_allocate_to_pool`, allocations on `stream` (or on every
    /// stream when `None`) go to private pool `id` (a CUDA graph capture or a MemPool context).
    pub fn begin_allocate_to_pool(&mut self, id: MempoolId, stream: Option<StreamId>) {
        self.private_pool_entry(id).use_count += 1;
        self.freeable_pools.retain(|p| *p != id);
        self.captures.push(Capture { pool: id, stream });
    }

    /// `endAllocateToPool`: stop routing allocations to pool `id`.
    pub fn end_allocate_to_pool(&mut self, id: MempoolId) {
        self.captures.retain(|c| c.pool != id);
    }

    /// `releasePool`: the graph is gone; its cached segments are freed by the next `empty_cache`.
    pub fn release_pool(&mut self, id: MempoolId) {
        if let Some(p) = self.private_pools.get_mut(&id) {
            p.use_count = p.use_count.saturating_sub(1);
            if p.use_count == 0 && !self.freeable_pools.contains(&id) {
                self.freeable_pools.push(id);
            }
        }
    }

    /// `malloc` into private pool `id` (as inside a graph capture or MemPool context on `stream`);
    /// `(0, 0)` is the default pools.
    pub fn malloc_in_pool(
        &mut self,
        orig_size: u64,
        stream: StreamId,
        frames: Option<crate::snapshot::StackId>,
        id: MempoolId,
    ) -> Result<u64, super::oom::Oom> {
        if id == (0, 0) {
            return self.malloc(orig_size, stream, frames);
        }
        let p = self.private_pool_entry(id);
        p.use_count = p.use_count.max(1);
        self.captures.insert(
            0,
            Capture {
                pool: id,
                stream: Some(stream),
            },
        );
        let r = self.malloc(orig_size, stream, frames);
        if let Some(i) = self
            .captures
            .iter()
            .position(|c| c.pool == id && c.stream == Some(stream))
        {
            self.captures.remove(i);
        }
        r
    }

    /// Newer PyTorch tags entries of private pools with `pool_id`.
    pub(crate) fn tag_pool(&mut self, pool: usize) {
        if let Some((a, b)) = self.pools[pool].owner {
            if let Some(e) = self.trace.last_mut() {
                let v = crate::snapshot::Value::Tuple(std::sync::Arc::new(vec![
                    crate::snapshot::Value::Int(a),
                    crate::snapshot::Value::Int(b),
                ]));
                e.extra_mut().push((std::sync::Arc::from("pool_id"), v));
            }
        }
    }

    pub(crate) fn note_segment_added(&mut self, pool: usize) {
        if let Some(owner) = self.pools[pool].owner {
            if let Some(p) = self.private_pools.get_mut(&owner) {
                p.cuda_malloc_count += 1;
            }
        }
    }

    pub(crate) fn note_segment_removed(&mut self, pool: usize) {
        if let Some(owner) = self.pools[pool].owner {
            if let Some(p) = self.private_pools.get_mut(&owner) {
                p.cuda_malloc_count = p.cuda_malloc_count.saturating_sub(1);
            }
        }
    }
}
