//! A simulated device: a capacity, deterministic addresses (first fit over freed ranges from a
//! 2 MiB-aligned base), virtual ranges for expandable segments in a separate region, events
//! that complete when told (or at once), and a clock that advances by one µs per call.

use std::collections::{BTreeMap, BTreeSet};

use super::backing::{Backing, EventId, StreamId};

/// Base of simulated cudaMalloc addresses (like a CUDA process's 0x7f... range).
pub const SIM_BASE: u64 = 0x7f00_0000_0000;
/// Base of simulated virtual reservations (expandable segments).
pub const SIM_VA_BASE: u64 = 0x7e00_0000_0000;
const ALIGN: u64 = 2 << 20;

#[derive(Debug, Clone)]
pub struct SimBacking {
    capacity: u64,
    /// Physical bytes in use (cudaMalloc'd plus mapped).
    used: u64,
    /// Address ranges handed out by `malloc`: start -> size.
    segments: BTreeMap<u64, u64>,
    next_va: u64,
    next_event: u64,
    /// Streams whose events complete only when `complete_stream` is called.
    held_streams: BTreeSet<StreamId>,
    pending: BTreeMap<EventId, StreamId>,
    clock_us: i64,
    usage: Usage,
    /// Start of each live cudaMalloc'd segment or virtual range -> (size, creation ordinal).
    ranges: BTreeMap<u64, (u64, u32)>,
    made: u32,
}

/// What the simulated device was asked for over a run: the costs a setting changes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Usage {
    /// cudaMalloc calls and their bytes.
    pub mallocs: u64,
    pub malloc_bytes: u64,
    /// cudaFree calls and their bytes.
    pub frees: u64,
    pub free_bytes: u64,
    /// cuMemMap / cuMemUnmap calls and their bytes (expandable segments).
    pub maps: u64,
    pub mapped_bytes: u64,
    pub unmaps: u64,
    pub unmapped_bytes: u64,
}

impl SimBacking {
    pub fn new(capacity: u64) -> SimBacking {
        SimBacking {
            capacity,
            used: 0,
            segments: BTreeMap::new(),
            next_va: SIM_VA_BASE,
            next_event: 0,
            held_streams: BTreeSet::new(),
            pending: BTreeMap::new(),
            clock_us: 1_700_000_000_000_000,
            usage: Usage::default(),
            ranges: BTreeMap::new(),
            made: 0,
        }
    }

    /// The device calls made so far.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The creation ordinal of the segment (cudaMalloc'd range or expandable virtual range)
    /// holding `addr`: the n-th made in this run. Seeded (claimed) memory has none.
    pub fn segment_of(&self, addr: u64) -> Option<u32> {
        let (&start, &(len, ordinal)) = self.ranges.range(..=addr).next_back()?;
        (addr < start + len).then_some(ordinal)
    }

    fn add_range(&mut self, addr: u64, size: u64) {
        self.ranges.insert(addr, (size, self.made));
        self.made += 1;
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    pub fn used(&self) -> u64 {
        self.used
    }

    /// Events recorded on `stream` stay incomplete until `complete_stream(stream)`.
    pub fn hold_stream(&mut self, stream: StreamId) {
        self.held_streams.insert(stream);
    }

    /// The work on `stream` so far is done: its events complete (and new ones complete at once).
    pub fn complete_stream(&mut self, stream: StreamId) {
        self.held_streams.remove(&stream);
        self.pending.retain(|_, s| *s != stream);
    }

    /// Marks `[addr, addr+size)` as in use (memory the model was seeded with).
    pub fn claim(&mut self, addr: u64, size: u64) {
        self.segments.insert(addr, size);
        self.used += size;
    }

    fn first_fit(&self, size: u64) -> u64 {
        let mut at = SIM_BASE;
        for (&start, &len) in &self.segments {
            if start >= at + size {
                break;
            }
            at = at.max((start + len).div_ceil(ALIGN) * ALIGN);
        }
        at
    }
}

impl Backing for SimBacking {
    fn malloc(&mut self, size: u64, _stream: StreamId) -> Option<u64> {
        if self.used + size > self.capacity {
            return None;
        }
        let addr = self.first_fit(size);
        self.segments.insert(addr, size);
        self.used += size;
        self.usage.mallocs += 1;
        self.usage.malloc_bytes += size;
        self.add_range(addr, size);
        Some(addr)
    }

    fn free(&mut self, addr: u64, size: u64) {
        if self.segments.remove(&addr).is_some() {
            self.used = self.used.saturating_sub(size);
            self.usage.frees += 1;
            self.usage.free_bytes += size;
            self.ranges.remove(&addr);
        }
    }

    fn reserve_virtual(&mut self, size: u64, _stream: StreamId) -> Option<u64> {
        let addr = self.next_va;
        self.next_va = (addr + size).div_ceil(ALIGN) * ALIGN + ALIGN;
        self.add_range(addr, size);
        Some(addr)
    }

    fn map(&mut self, _addr: u64, size: u64) -> bool {
        if self.used + size > self.capacity {
            return false;
        }
        self.used += size;
        self.usage.maps += 1;
        self.usage.mapped_bytes += size;
        true
    }

    fn unmap(&mut self, _addr: u64, size: u64) {
        self.used = self.used.saturating_sub(size);
        self.usage.unmaps += 1;
        self.usage.unmapped_bytes += size;
    }

    fn release_virtual(&mut self, addr: u64, _size: u64) {
        self.ranges.remove(&addr);
    }

    fn record_event(&mut self, stream: StreamId) -> EventId {
        let id = EventId(self.next_event);
        self.next_event += 1;
        if self.held_streams.contains(&stream) {
            self.pending.insert(id, stream);
        }
        id
    }

    fn event_done(&mut self, event: EventId) -> bool {
        !self.pending.contains_key(&event)
    }

    fn synchronize_event(&mut self, event: EventId) {
        self.pending.remove(&event);
    }

    fn mem_info(&self) -> (u64, u64) {
        (self.capacity.saturating_sub(self.used), self.capacity)
    }

    fn now_us(&mut self) -> i64 {
        self.clock_us += 1;
        self.clock_us
    }
}
