//! Stacks for the stack panel, and the one-line label (innermost user frame) rows show.

use memsnap_core::analysis::frames::{self, format_stack};
use memsnap_core::snapshot::{Snapshot, StackId};

use crate::protocol::analysis::StackView;

/// Frames of a stack, innermost first, capture machinery left out; `None` for an unknown id.
pub fn stack_frames(snap: &Snapshot, stack: u32) -> Option<Vec<String>> {
    ((stack as usize) < snap.stacks.stack_count())
        .then(|| format_stack(&snap.stacks, StackId(stack), true))
}

pub fn stack_view(snap: &Snapshot, stack: u32) -> Result<StackView, String> {
    stack_frames(snap, stack)
        .map(|frames| StackView { stack, frames })
        .ok_or_else(|| format!("no stack {stack} in this file"))
}

/// `file:line:name` of the innermost user (or library) frame, or the best frame a stack without
/// one has (`frames::label`, which `memsnap diagnose` prints too).
pub fn label(snap: &Snapshot, stack: Option<StackId>) -> String {
    frames::label(&snap.stacks, stack)
}
