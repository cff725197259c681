//! Cross-stream use (`recordStream`) and the events that hold freed blocks back until the
//! streams that used them are done (`insert_events`, `process_events`,
//! `synchronize_and_free_events`). Blocks never change stream: a block is cached on the stream
//! that allocated it.

use super::backing::{Backing, StreamId};
use super::block::BlockId;
use super::model::{Allocator, UseError};
use super::rules::Rules;

impl<B: Backing> Allocator<B> {
    /// `recordStream`: the allocated block at `addr` is also used on `stream`.
    pub fn record_stream(&mut self, addr: u64, stream: StreamId) -> Result<(), UseError> {
        let id = match self.active.get(&addr) {
            Some(id) if self.blocks[*id].allocated => *id,
            _ => return Err(UseError::NotAllocated(addr)),
        };
        // CUDA ignores a use on the block's own stream; torch_npu dropped that check (2023), so
        // there such a use holds the block back until an event completes too.
        let own_counts = self.config.rules == Rules::Npu;
        let b = &mut self.blocks[id];
        if (b.stream != stream || own_counts) && !b.stream_uses.contains(&stream) {
            b.stream_uses.push(stream);
        }
        Ok(())
    }

    pub(crate) fn insert_events(&mut self, id: BlockId) {
        let streams = std::mem::take(&mut self.blocks[id].stream_uses);
        for s in streams {
            let ev = self.backing.record_event(s);
            self.blocks[id].event_count += 1;
            self.events.entry(s).or_default().push_back((ev, id));
        }
    }

    fn insert_deferred_events(&mut self) {
        for id in std::mem::take(&mut self.deferred_events) {
            if self.blocks.get(id).is_none() {
                continue;
            }
            self.insert_events(id);
            if self.blocks[id].event_count == 0 {
                self.free_block(id);
            }
        }
    }

    /// `process_events`: frees the blocks whose events have completed, per stream in order,
    /// stopping at each stream's first incomplete event.
    pub fn process_events(&mut self) {
        self.insert_deferred_events();
        let streams: Vec<StreamId> = self.events.keys().copied().collect();
        for s in streams {
            while let Some(&(ev, id)) = self.events.get(&s).and_then(|q| q.front()) {
                if !self.backing.event_done(ev) {
                    break;
                }
                if let Some(q) = self.events.get_mut(&s) {
                    q.pop_front();
                }
                self.event_completed(id);
            }
            if self.events.get(&s).is_some_and(|q| q.is_empty()) {
                self.events.remove(&s);
            }
        }
    }

    fn event_completed(&mut self, id: BlockId) {
        let b = &mut self.blocks[id];
        b.event_count = b.event_count.saturating_sub(1);
        if b.event_count == 0 {
            self.free_block(id);
        }
    }

    /// Waits for every outstanding event and frees the blocks they held (before empty_cache).
    pub(crate) fn synchronize_and_free_events(&mut self) {
        self.stats.num_sync_all_streams += 1;
        self.insert_deferred_events();
        let all = std::mem::take(&mut self.events);
        for (_, q) in all {
            for (ev, id) in q {
                self.backing.synchronize_event(ev);
                self.event_completed(id);
            }
        }
    }

    /// Completes every outstanding event of the pending-free block at `addr` now (replay uses it
    /// where the real run's trace shows the `free_completed`). Returns false if no block at
    /// `addr` is pending.
    pub fn complete_pending_free(&mut self, addr: u64) -> bool {
        let Some(&id) = self.active.get(&addr) else {
            return false;
        };
        if self.blocks[id].allocated || self.blocks[id].event_count == 0 {
            return false;
        }
        for q in self.events.values_mut() {
            q.retain(|(_, b)| *b != id);
        }
        self.events.retain(|_, q| !q.is_empty());
        self.blocks[id].event_count = 0;
        self.free_block(id);
        true
    }
}
