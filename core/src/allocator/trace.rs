//! Trace recording (`record_trace` into the `TraceEntryRingBuffer`): the same actions and
//! fields PyTorch writes, optionally keeping only the newest `max_entries`.

use std::collections::VecDeque;

use crate::snapshot::{Action, StackId, TraceEntry};

use super::backing::StreamId;

#[derive(Debug, Clone)]
pub struct TraceRecorder {
    entries: VecDeque<TraceEntry>,
    max_entries: Option<usize>,
    enabled: bool,
    /// Entries pushed out of the ring buffer.
    dropped: u64,
}

impl Default for TraceRecorder {
    fn default() -> Self {
        TraceRecorder::new()
    }
}

impl TraceRecorder {
    /// Recording on, unbounded (`_record_memory_history(max_entries=sys.maxsize)`).
    pub fn new() -> TraceRecorder {
        TraceRecorder {
            entries: VecDeque::new(),
            max_entries: None,
            enabled: true,
            dropped: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn set_enabled(&mut self, on: bool) {
        self.enabled = on;
    }

    /// Keep only the newest `n` entries (at least 1), as PyTorch's ring buffer does.
    pub fn set_max_entries(&mut self, n: Option<usize>) {
        self.max_entries = n.map(|n| n.max(1));
        self.trim();
    }

    fn trim(&mut self) {
        if let Some(max) = self.max_entries {
            while self.entries.len() > max {
                self.entries.pop_front();
                self.dropped += 1;
            }
        }
    }

    pub fn push(
        &mut self,
        action: Action,
        addr: u64,
        size: u64,
        stream: StreamId,
        time_us: i64,
        frames: Option<StackId>,
    ) {
        let mut e = TraceEntry::new(action, addr, size);
        e.set_stream(Some(stream));
        e.set_time_us(Some(time_us));
        e.set_frames(frames);
        self.push_entry(e);
    }

    pub fn push_entry(&mut self, e: TraceEntry) {
        self.entries.push_back(e);
        self.trim();
    }

    /// The newest entry (to add fields such as `pool_id`).
    pub fn last_mut(&mut self) -> Option<&mut TraceEntry> {
        self.entries.back_mut()
    }

    /// Oldest first.
    pub fn entries(&self) -> impl Iterator<Item = &TraceEntry> {
        self.entries.iter()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    pub fn to_vec(&self) -> Vec<TraceEntry> {
        self.entries.iter().cloned().collect()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
