//! Structural invariants of the model, for tests: blocks tile each segment exactly with
//! consistent links, no two adjacent free blocks of the same mapping remain unmerged, pools hold
//! exactly the free blocks, and the byte counters agree with the blocks.

use std::collections::HashSet;

use super::backing::Backing;
use super::model::Allocator;

impl<B: Backing> Allocator<B> {
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut in_pools = HashSet::new();
        let mut pooled = 0usize;
        for p in &self.pools {
            for k in p.blocks.iter() {
                let b = self.blocks.get(k.3).ok_or("pool holds a removed block")?;
                if (b.stream, b.size, b.addr) != (k.0, k.1, k.2) || !b.mapped || !b.allocatable() {
                    return Err(format!("pool key {k:?} disagrees with its block {b:?}"));
                }
                in_pools.insert(k.3);
                pooled += 1;
            }
            for k in &p.unmapped {
                let b = self
                    .blocks
                    .get(k.2)
                    .ok_or("unmapped set holds a removed block")?;
                if (b.stream, b.addr) != (k.0, k.1) || b.mapped {
                    return Err(format!("unmapped key {k:?} disagrees with its block"));
                }
                in_pools.insert(k.2);
                pooled += 1;
            }
        }
        if pooled != in_pools.len() {
            return Err("a block is in two pool sets".into());
        }
        let (mut allocated, mut reserved, mut active) = (0u64, 0u64, 0u64);
        for (id, b) in self.blocks.iter() {
            if let Some(n) = b.next {
                let nb = self.blocks.get(n).ok_or("next link to a removed block")?;
                if nb.prev != Some(id) {
                    return Err(format!("block 0x{:x}: next's prev is not it", b.addr));
                }
                if b.addr + b.size != nb.addr {
                    return Err(format!(
                        "block 0x{:x}+{} does not tile with next at 0x{:x}",
                        b.addr, b.size, nb.addr
                    ));
                }
                if b.allocatable() && nb.allocatable() && b.mapped == nb.mapped {
                    return Err(format!(
                        "adjacent free blocks at 0x{:x} and 0x{:x} not merged",
                        b.addr, nb.addr
                    ));
                }
                if b.stream != nb.stream || b.pool != nb.pool {
                    return Err(format!(
                        "block 0x{:x}: neighbours of different stream/pool",
                        b.addr
                    ));
                }
            }
            if let Some(p) = b.prev {
                let pb = self.blocks.get(p).ok_or("prev link to a removed block")?;
                if pb.next != Some(id) {
                    return Err(format!("block 0x{:x}: prev's next is not it", b.addr));
                }
            }
            let free = b.allocatable();
            if free != in_pools.contains(&id) {
                return Err(format!(
                    "block 0x{:x} free={free} but pooled={}",
                    b.addr,
                    in_pools.contains(&id)
                ));
            }
            let is_active = b.allocated || b.event_count > 0 || !b.stream_uses.is_empty();
            if is_active != (self.active.get(&b.addr) == Some(&id)) {
                return Err(format!(
                    "block 0x{:x}: active={is_active} disagrees with the address map",
                    b.addr
                ));
            }
            if b.allocated {
                allocated += b.size;
            }
            if is_active {
                active += b.size;
            }
            if b.mapped {
                reserved += b.size;
            }
        }
        if self.active.len() != self.blocks.iter().filter(|(_, b)| !b.allocatable()).count() {
            return Err("address map holds stale entries".into());
        }
        if allocated != self.stats.allocated {
            return Err(format!(
                "allocated counter {} != blocks {allocated}",
                self.stats.allocated
            ));
        }
        if active != self.stats.active {
            return Err(format!(
                "active counter {} != blocks {active}",
                self.stats.active
            ));
        }
        if reserved != self.stats.reserved {
            return Err(format!(
                "reserved counter {} != mapped blocks {reserved}",
                self.stats.reserved
            ));
        }
        Ok(())
    }
}
