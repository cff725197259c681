//! memsnap-core: PyTorch CUDA memory snapshots as data.
//!
//! - [`snapshot`]: the typed model, and reading/writing the pickle files PyTorch writes.
//! - [`allocator`]: a model of PyTorch's CUDA caching allocator that emits the same traces.
//! - [`analysis`]: fragmentation, churn, pinning, peak attribution, timelines, replay.
//! - [`rank_name`]: which rank of a distributed job a snapshot file's name stands for.
//!
//! No I/O beyond bytes, no web or CUDA dependency: the app and the CLIs are thin over this.

pub mod allocator;
pub mod analysis;
pub mod rank_name;
pub mod snapshot;
