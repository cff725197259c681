//! Snapshot data model and its pickle form.

pub mod model;
pub mod read;
pub mod value;
pub mod write;

pub use model::*;
pub use read::{read, ReadError};
pub use value::Value;
pub use write::write;
