//! Whether a read builds the stacks ([`Frames`]): a leaf, so that the reader's parts can
//! name it without importing the module that runs them.

/// Whether a read keeps the stacks of trace entries, segments and blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frames {
    /// Every `frames` list interned into [`Stacks`](crate::snapshot::Stacks).
    Keep,
    /// Every `frames` checked but left `None`: for a command that shows no stack (`memsnap
    /// stats`). Most of a large snapshot is its frame lists, and building their stacks is most
    /// of reading them. A file this read cannot take is read in full instead, so the result,
    /// error included, is then [`Frames::Keep`]'s (with its stacks).
    Skip,
}
