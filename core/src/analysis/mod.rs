//! Analyses over a Snapshot (see DESIGN.md).

pub mod totals;
pub mod summary;
