//! `capture --cuda`: the allocator model driving a real GPU through the CUDA driver API.
//!
//! The driver library is loaded at run time (cudarc's dynamic loading), so the crate builds
//! and its tests run on machines without CUDA; [`driver::open`] reports a missing driver or
//! device as an error before any CUDA call is made.

pub mod backing;
pub mod driver;

pub use backing::CudaBacking;
pub use driver::{open, CudaError, Device};
