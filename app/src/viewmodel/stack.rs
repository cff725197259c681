//! Stacks for the stack panel, and the one-line label (innermost user frame) rows show.

use memsnap_core::analysis::frames::{
    format, format_stack, is_omitted, kind, top_user_frame, FrameKind,
};
use memsnap_core::snapshot::{Snapshot, StackId};

use crate::analysis_protocol::StackView;

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

/// Native frames of the allocation path itself, the same in every stack: a label skips them to
/// name the operator that allocated.
const ALLOCATION_PATH: &[&str] = &["c10::", "at::detail::", "empty", "Allocator", "TensorBase"];

/// `file:line:name` of the innermost user (or library) frame; without one, the innermost
/// Python frame (torch's), then the innermost native frame past the allocation path, then the
/// innermost frame the capture machinery did not add.
pub fn label(snap: &Snapshot, stack: Option<StackId>) -> String {
    let Some(s) = stack.filter(|s| (s.0 as usize) < snap.stacks.stack_count()) else {
        return "<no stack>".into();
    };
    if let Some(k) = top_user_frame(&snap.stacks, s) {
        return format(snap.stacks.frame(snap.stacks.stack(s)[k]));
    }
    let visible = || snap.stacks.frames_of(s).filter(|f| !is_omitted(f));
    visible()
        .find(|f| kind(f) != FrameKind::Native)
        .or_else(|| visible().find(|f| !ALLOCATION_PATH.iter().any(|p| f.name.contains(p))))
        .or_else(|| visible().next())
        .map(|f| format!("{} (no user frame)", format(f)))
        .unwrap_or_else(|| "<empty stack>".into())
}
