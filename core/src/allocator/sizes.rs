//! The caching allocator's size constants (CUDACachingAllocator.cpp `kMinBlockSize`,
//! `kSmallSize`, `kSmallBuffer`, `kLargeBuffer`, `kMinLargeAlloc`, `kRoundLarge`): below the
//! settings and the rounding, which both use them.

/// All block sizes are multiples of this (`kMinBlockSize`).
pub const MIN_BLOCK_SIZE: u64 = 512;
/// Largest request served by the small pool (`kSmallSize`).
pub const SMALL_SIZE: u64 = 1 << 20;
/// Segment size of the small pool, and its expandable page size (`kSmallBuffer`).
pub const SMALL_BUFFER: u64 = 2 << 20;
/// Segment size for 1–10 MiB requests, and the large expandable page size (`kLargeBuffer`).
pub const LARGE_BUFFER: u64 = 20 << 20;
/// Requests from here on get a segment of their own size (`kMinLargeAlloc`).
pub const MIN_LARGE_ALLOC: u64 = 10 << 20;
/// Their segments round up to this (`kRoundLarge`).
pub const ROUND_LARGE: u64 = 2 << 20;
