//! The stacks a segments view's blocks reference, packed: every frame's text in one string and
//! every stack's frames in one list, with where each ends. A real training step's segment view
//! references thousands of frames (cs336-a-2.7b-forward: 5,340 frames in 1,152 stacks, 535 kB);
//! sent as a struct per frame and a list per stack, the page decoded two strings per frame and
//! a list per stack before its first paint. Packed, the decode is four buffers, and the page
//! only cuts out the frames of the block the pointer is on.

use serde::{Deserialize, Serialize};

/// Frames as the page shows them (`file:line:name`), and stacks as lists of them, innermost
/// frame first. Ids are dense, in the order pushed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackTable {
    text: String,
    /// Where each frame's text ends in `text`.
    frame_ends: Vec<u32>,
    /// Each stack's frame ids, one stack after another.
    frames: Vec<u32>,
    /// Where each stack ends in `frames`.
    stack_ends: Vec<u32>,
}

impl StackTable {
    pub fn new() -> StackTable {
        StackTable::default()
    }

    /// Adds a frame; returns its id.
    pub fn push_frame(&mut self, filename: &str, line: i64, name: &str) -> u32 {
        use std::fmt::Write;
        // Writing to a String cannot fail.
        let _ = write!(self.text, "{filename}:{line}:{name}");
        self.frame_ends.push(offset(self.text.len()));
        offset(self.frame_ends.len() - 1)
    }

    /// Adds a stack of frame ids, innermost first; returns its id.
    pub fn push_stack(&mut self, frames: impl IntoIterator<Item = u32>) -> u32 {
        self.frames.extend(frames);
        self.stack_ends.push(offset(self.frames.len()));
        offset(self.stack_ends.len() - 1)
    }

    pub fn frame_count(&self) -> usize {
        self.frame_ends.len()
    }

    pub fn stack_count(&self) -> usize {
        self.stack_ends.len()
    }

    /// A frame's text; `None` for an unknown id (or a table that does not hold together, as a
    /// malformed message could bring).
    pub fn frame(&self, id: u32) -> Option<&str> {
        self.text.get(span(&self.frame_ends, id)?)
    }

    /// The frames of a stack, innermost first: empty for an unknown id, without the ids it
    /// holds that name no frame.
    pub fn frames_of(&self, stack: u32) -> impl Iterator<Item = &str> + '_ {
        span(&self.stack_ends, stack)
            .and_then(|r| self.frames.get(r))
            .unwrap_or_default()
            .iter()
            .filter_map(|&f| self.frame(f))
    }
}

/// Item `id`'s range when `ends` holds where each item ends (the first starts at 0); `None` for
/// an unknown id. The range may be backwards or out of bounds in a malformed table: the
/// caller's `get` refuses it.
fn span(ends: &[u32], id: u32) -> Option<std::ops::Range<usize>> {
    let i = id as usize;
    let end = *ends.get(i)? as usize;
    let start = match i {
        0 => 0,
        _ => ends[i - 1] as usize,
    };
    Some(start..end)
}

/// A length as a u32 offset: a page's view never holds 4 GiB of frame text (its wasm memory
/// cannot), so this only saturates on a table no worker builds.
fn offset(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> StackTable {
        let mut t = StackTable::new();
        let f = t.push_frame("train.py", 7, "forward");
        let g = t.push_frame("läuft.py", 12, "main");
        assert_eq!((f, g), (0, 1));
        assert_eq!(t.push_stack([f, g]), 0);
        assert_eq!(t.push_stack([]), 1);
        assert_eq!(t.push_stack([g]), 2);
        t
    }

    #[test]
    fn gives_back_each_stack_s_frames() {
        let t = table();
        assert_eq!((t.frame_count(), t.stack_count()), (2, 3));
        let of = |s| t.frames_of(s).collect::<Vec<_>>();
        assert_eq!(of(0), ["train.py:7:forward", "läuft.py:12:main"]);
        assert!(of(1).is_empty());
        assert_eq!(of(2), ["läuft.py:12:main"]);
        assert!(of(3).is_empty(), "an unknown stack has no frames");
        assert_eq!(t.frame(2), None);
    }

    #[test]
    fn survives_the_wire() {
        let t = table();
        let bytes = postcard::to_allocvec(&t).unwrap();
        let back: StackTable = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.frames_of(0).count(), 2);
    }

    #[test]
    fn a_table_that_does_not_hold_together_gives_no_frames_rather_than_a_panic() {
        // Ends past the text, decreasing, or inside a character; stacks past the list, frame
        // ids past the frames.
        let broken = StackTable {
            text: "ä:1:f".into(),
            frame_ends: vec![1, 99, 0, 6],
            frames: vec![0, 1, 2, 3, 7],
            stack_ends: vec![5, 2, 50],
        };
        assert_eq!(broken.frame(0), None, "inside 'ä'");
        assert_eq!(broken.frame(1), None, "past the text");
        assert_eq!(broken.frame(2), None, "ends before it starts");
        assert_eq!(broken.frame(3), Some("ä:1:f"));
        assert_eq!(broken.frames_of(0).collect::<Vec<_>>(), ["ä:1:f"]);
        assert_eq!(
            broken.frames_of(1).count(),
            0,
            "a stack that ends before it starts"
        );
        assert_eq!(broken.frames_of(2).count(), 0, "a stack past the list");
    }
}
