//! Vector lengths at the pickle machine's last progress checkpoint (see `capacity`).

/// Lengths at the last checkpoint.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Checkpoint {
    pub(super) pos: usize,
    pub(super) nodes: usize,
    pub(super) at: usize,
    pub(super) items: usize,
    pub(super) memo: usize,
    /// The sink entries were going to, and its length.
    pub(super) sink: usize,
    pub(super) entries: usize,
}
