//! The caching-allocator model (see DESIGN.md).
