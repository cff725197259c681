//! What the allocator model asks of the device: the calls the real caching allocator makes
//! to the CUDA runtime and driver. The model is pure policy; a `Backing` supplies addresses.
//!
//! - `SimBacking` (this crate): simulated device memory of a given capacity.
//! - Replay backing (analysis::replay): hands out the addresses the real run got.
//! - CUDA backing (capture crate, `--cuda`): cuMemAlloc, cuMemAddressReserve/cuMemCreate/cuMemMap,
//!   real streams and events.

/// Stream identity as it appears in snapshots: the raw `cudaStream_t` as int64 (0 = default).
pub type StreamId = i64;

/// An event recorded on a stream (for blocks used on other streams via `record_stream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId(pub u64);

pub trait Backing {
    /// cudaMalloc(size): a new segment's base address, or `None` when the device has no room.
    fn malloc(&mut self, size: u64, stream: StreamId) -> Option<u64>;

    /// cudaFree of a segment returned by `malloc`.
    fn free(&mut self, addr: u64, size: u64);

    /// cuMemAddressReserve: a virtual range for an expandable segment (no physical memory yet).
    fn reserve_virtual(&mut self, size: u64, stream: StreamId) -> Option<u64>;

    /// cuMemCreate + cuMemMap + cuMemSetAccess of `[addr, addr+size)` inside a reserved range;
    /// `false` when physical memory runs out.
    fn map(&mut self, addr: u64, size: u64) -> bool;

    /// cuMemUnmap + cuMemRelease of `[addr, addr+size)`.
    fn unmap(&mut self, addr: u64, size: u64);

    /// cuMemAddressFree of a whole reserved range.
    fn release_virtual(&mut self, addr: u64, size: u64);

    /// cudaEventRecord on `stream`.
    fn record_event(&mut self, stream: StreamId) -> EventId;

    /// cudaEventQuery: has the stream reached the event?
    fn event_done(&mut self, event: EventId) -> bool;

    /// cudaEventSynchronize (used by empty_cache before releasing).
    fn synchronize_event(&mut self, event: EventId);

    /// cudaMemGetInfo: (free, total) bytes, for `oom` entries and the OOM message.
    fn mem_info(&self) -> (u64, u64);

    /// Microseconds since the epoch, for `time_us`.
    fn now_us(&mut self) -> i64;

    /// Called once a block is handed to the user; the CUDA backing writes to it on `stream`
    /// so the device really uses it. Simulations do nothing.
    fn touch(&mut self, _addr: u64, _size: u64, _stream: StreamId) {}
}
