//! What one `capture` run made, whether from a scenario or a replayed trace.

use memsnap_core::snapshot::Snapshot;

use super::summary::Summary;

/// What a run made: the snapshot and its summary; `ooms` lists each failed allocation.
pub struct Outcome {
    pub snapshot: Snapshot,
    pub summary: Summary,
    pub ooms: Vec<String>,
}
