//! End-to-end tests live in tests/tests/; this crate holds their shared helpers.

pub mod built;
pub mod fixtures;
pub mod memsnap_bin;
pub mod module_graph;
pub mod python;
pub mod rank_files;
pub mod web;
