//! The caching-allocator model (see DESIGN.md): the policy of PyTorch's
//! c10/cuda/CUDACachingAllocator.cpp, one rule per file, over a [`Backing`] device.
//!
//! - config.rs: `PYTORCH_CUDA_ALLOC_CONF` / `allocator_settings` / `--set` overrides
//! - rounding.rs: request and segment sizes; pool.rs: pools, private pools
//! - free_blocks.rs: a pool's free blocks, bucketed by size class
//! - best_fit.rs: best fit + oversize rule; split.rs: the split rule; merge.rs: free + merge
//! - expandable.rs: expandable segments; events.rs: record_stream and events
//! - gc.rs: garbage_collection_threshold; release.rs: releasing segments, empty_cache; oom.rs
//! - trace.rs: trace entries; emit.rs: the state as a Snapshot; seed.rs: starting from a state
//! - check.rs: structural invariants; sim_backing.rs: a simulated device

pub mod align;
pub mod backing;
pub mod best_fit;
pub mod block;
pub mod block_pool;
pub mod check;
pub mod config;
pub mod emit;
pub mod events;
pub mod expandable;
pub mod expandable_segment;
pub mod free_blocks;
pub mod gc;
pub mod merge;
pub mod model;
pub mod oom;
pub mod oom_error;
pub mod pool;
pub mod release;
pub mod rounding;
pub mod rules;
pub mod seed;
pub mod sim_backing;
pub mod sizes;
pub mod split;
pub mod trace;

pub use backing::{Backing, EventId, StreamId};
pub use config::{Config, ConfigError};
pub use model::{Allocator, Stats, UseError};
pub use oom::Oom;
pub use pool::MempoolId;
pub use rules::Rules;
pub use sim_backing::SimBacking;
