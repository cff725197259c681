//! Snapshot data model and its pickle form.

pub mod model;
mod opcodes;
pub mod read;
pub mod validate;
pub mod value;
pub mod write;

pub use model::*;
pub use read::{
    read, read_with, read_with_progress, starts_like_a_snapshot, Frames, ReadError, Streaming,
};
pub use validate::{validate, Warning, WarningKind};
pub use value::Value;
pub use write::write;

#[cfg(test)]
mod host_tests;
