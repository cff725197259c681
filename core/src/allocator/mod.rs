//! The caching-allocator model (see DESIGN.md).

pub mod backing;

pub use backing::{Backing, EventId, StreamId};
