//! Analyses over a Snapshot (see DESIGN.md).
