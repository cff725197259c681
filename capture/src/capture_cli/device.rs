//! What the capture run needs from a device beyond the allocator's [`Backing`]: new streams,
//! waiting for all work, and errors the Backing calls cannot return.

use memsnap_core::allocator::{Backing, SimBacking, StreamId};

use crate::cuda::CudaBacking;

pub trait Device: Backing {
    /// A new stream (the scenario names streams; each gets one on first use).
    fn new_stream(&mut self) -> Result<StreamId, String>;
    /// A stream for a replayed trace's stream `original` (the simulation keeps the id).
    fn adopt_stream(&mut self, original: StreamId) -> Result<StreamId, String> {
        let _ = original;
        self.new_stream()
    }
    /// torch.cuda.synchronize(): all work done, so every recorded event completes.
    fn synchronize(&mut self) -> Result<(), String>;
    /// Called after the allocator has processed the completed events.
    fn after_synchronize(&mut self) {}
    /// A driver failure since the last check.
    fn check(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// First simulated stream id: looks like the pointer a real `cudaStream_t` is.
const SIM_STREAM_BASE: i64 = 0x55d0_4a00_0000;

/// Streams of the simulated device; work on them (and on the default stream) is "in flight"
/// until a sync, so blocks freed after `record_stream` stay pending as they would on a GPU.
pub struct Sim {
    pub backing: SimBacking,
    streams: Vec<StreamId>,
}

impl Sim {
    pub fn new(capacity: u64) -> Sim {
        let mut backing = SimBacking::new(capacity);
        backing.hold_stream(0);
        Sim {
            backing,
            streams: vec![0],
        }
    }
}

impl Backing for Sim {
    fn malloc(&mut self, size: u64, stream: StreamId) -> Option<u64> {
        self.backing.malloc(size, stream)
    }
    fn free(&mut self, addr: u64, size: u64) {
        self.backing.free(addr, size)
    }
    fn reserve_virtual(&mut self, size: u64, stream: StreamId) -> Option<u64> {
        self.backing.reserve_virtual(size, stream)
    }
    fn map(&mut self, addr: u64, size: u64) -> bool {
        self.backing.map(addr, size)
    }
    fn unmap(&mut self, addr: u64, size: u64) {
        self.backing.unmap(addr, size)
    }
    fn release_virtual(&mut self, addr: u64, size: u64) {
        self.backing.release_virtual(addr, size)
    }
    fn record_event(&mut self, stream: StreamId) -> memsnap_core::allocator::EventId {
        self.backing.record_event(stream)
    }
    fn event_done(&mut self, event: memsnap_core::allocator::EventId) -> bool {
        self.backing.event_done(event)
    }
    fn synchronize_event(&mut self, event: memsnap_core::allocator::EventId) {
        self.backing.synchronize_event(event)
    }
    fn mem_info(&self) -> (u64, u64) {
        self.backing.mem_info()
    }
    fn now_us(&mut self) -> i64 {
        self.backing.now_us()
    }
}

impl Device for Sim {
    fn new_stream(&mut self) -> Result<StreamId, String> {
        let id = SIM_STREAM_BASE + 0x1000 * self.streams.len() as i64;
        self.streams.push(id);
        self.backing.hold_stream(id);
        Ok(id)
    }

    fn adopt_stream(&mut self, original: StreamId) -> Result<StreamId, String> {
        if !self.streams.contains(&original) {
            self.streams.push(original);
            self.backing.hold_stream(original);
        }
        Ok(original)
    }

    fn synchronize(&mut self) -> Result<(), String> {
        for s in &self.streams {
            self.backing.complete_stream(*s);
        }
        Ok(())
    }

    fn after_synchronize(&mut self) {
        for s in &self.streams {
            self.backing.hold_stream(*s);
        }
    }
}

impl Device for CudaBacking {
    fn new_stream(&mut self) -> Result<StreamId, String> {
        self.create_stream().map_err(|e| e.to_string())
    }

    fn synchronize(&mut self) -> Result<(), String> {
        CudaBacking::synchronize(self).map_err(|e| e.to_string())
    }

    fn check(&mut self) -> Result<(), String> {
        match self.take_error() {
            Some(e) => Err(e.to_string()),
            None => Ok(()),
        }
    }
}
