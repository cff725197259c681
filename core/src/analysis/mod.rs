//! Analyses over a Snapshot (see DESIGN.md).

mod addr_map;
pub mod anomalies;
pub mod bands;
pub mod churn;
pub mod compare;
pub mod diagnosis;
pub mod flamegraph;
pub mod fleet;
pub mod fragmentation;
pub mod frames;
pub mod intervals;
pub mod lod;
pub mod oom;
pub mod overlap;
pub mod pace;
pub mod peak;
pub mod phases;
pub mod pinning;
pub mod plan;
pub mod policy;
pub mod pools;
pub mod range;
pub mod rank_summary;
pub mod replay;
pub mod sizes;
pub mod state_at;
pub mod summary;
#[cfg(test)]
pub(crate) mod testutil;
pub mod timeline;
pub mod totals;
pub mod trim;
pub mod units;
pub mod verdicts;
