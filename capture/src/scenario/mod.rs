//! Scenarios: sequences of tensor allocations and frees, written as TOML files (see [`mod@file`]),
//! run against the allocator model to make snapshots.

pub mod builtin;
pub mod error;
pub mod expr;
pub mod file;
pub mod program;
pub mod rng;
pub mod run;
pub mod size;
pub mod template;

pub use error::ScenarioError;
pub use program::{Scenario, Step, StepKind};
pub use run::{run, Counter, Target};
