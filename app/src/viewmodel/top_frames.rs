//! The top user frame of every stack, found once per file, and what the live allocations after
//! an entry are made of, grouped by it: the timeline's peak panel, asked again whenever a zoom
//! or pan moves the peak.
//!
//! Core's `peak::composition` gives the same groups but classifies every frame of every live
//! allocation's stack and formats a label per allocation on each call; at a million entries
//! that was ~100 ms of each zoom step's ~115 ms in the worker (page benchmark, issue 6). Here
//! frames are classified once, each stack's top frame is kept, and labels are formatted once
//! per distinct frame (the classes are the frame table's own, `frames::kind_of`).

use std::collections::HashMap;

use memsnap_core::analysis::frames::{format, kind_of, FrameKind};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::{FrameId, Snapshot, StackId};

const NO_STACK: &str = "<no stack>";
const NO_USER: &str = "<no user frame>";

/// Each stack's top frame (`None`: no user or library frame), as `frames::top_user_frame`.
pub struct TopFrames {
    of_stack: Vec<Option<FrameId>>,
}

impl TopFrames {
    pub fn new(snap: &Snapshot) -> TopFrames {
        let stacks = &snap.stacks;
        let of_stack = (0..stacks.stack_count())
            .map(|s| {
                let frames = stacks.stack(StackId(s as u32));
                let first =
                    |want: FrameKind| frames.iter().copied().find(|&f| kind_of(stacks, f) == want);
                first(FrameKind::User).or_else(|| first(FrameKind::Library))
            })
            .collect();
        TopFrames { of_stack }
    }

    fn of(&self, stack: StackId) -> Option<FrameId> {
        self.of_stack.get(stack.0 as usize).copied().flatten()
    }
}

/// A group of live allocations sharing a top frame's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub label: String,
    pub bytes: u64,
    pub count: usize,
}

/// The allocations live after entry `index`: how many, and their groups by top frame, most
/// bytes first (ties by label), as `peak::composition`'s `by_top_frame`.
pub fn live_groups(
    snap: &Snapshot,
    tl: &Timeline,
    top: &TopFrames,
    index: usize,
) -> (usize, Vec<Group>) {
    #[derive(PartialEq, Eq, Hash)]
    enum Key {
        NoStack,
        NoUser,
        Frame(FrameId),
    }
    let mut by_key: HashMap<Key, (u64, usize)> = HashMap::new();
    let mut live = 0;
    // Live after `index` is live somewhere in `index..index + 1`: the overlap index skips the
    // chunks that end before it. Each zoom step asks this at its range's peak; a scan of all
    // 500k allocations of a 1M-entry trace was most of a step's answer.
    let list = &tl.allocations.list;
    tl.overlap
        .for_each(list, index, index.saturating_add(1), |_, a| {
            live += 1;
            let key = match a.stack {
                None => Key::NoStack,
                Some(s) => top.of(s).map_or(Key::NoUser, Key::Frame),
            };
            let e = by_key.entry(key).or_insert((0, 0));
            e.0 += a.size;
            e.1 += 1;
        });
    // Equal frames may have distinct ids: groups are by text.
    let mut by_label: HashMap<String, (u64, usize)> = HashMap::new();
    for (key, (bytes, count)) in by_key {
        let label = match key {
            Key::NoStack => NO_STACK.to_string(),
            Key::NoUser => NO_USER.to_string(),
            Key::Frame(f) => format(snap.stacks.frame(f)),
        };
        let e = by_label.entry(label).or_insert((0, 0));
        e.0 += bytes;
        e.1 += count;
    }
    let mut groups: Vec<Group> = by_label
        .into_iter()
        .map(|(label, (bytes, count))| Group {
            label,
            bytes,
            count,
        })
        .collect();
    groups.sort_by(|x, y| y.bytes.cmp(&x.bytes).then(x.label.cmp(&y.label)));
    (live, groups)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsnap_core::analysis::peak::composition;
    use std::path::PathBuf;

    /// Folds `<no user frame>` into `<no stack>` and re-sorts: core's composition keys both by
    /// `None` and so merges them (under whichever label came first), where these are kept apart.
    fn as_core_merges(groups: Vec<Group>) -> Vec<(u64, usize)> {
        let mut none = (0, 0);
        let mut out: Vec<(u64, usize)> = Vec::new();
        for g in groups {
            if g.label == NO_STACK || g.label == NO_USER {
                none = (none.0 + g.bytes, none.1 + g.count);
            } else {
                out.push((g.bytes, g.count));
            }
        }
        if none.1 > 0 {
            out.push(none);
        }
        out.sort_unstable();
        out
    }

    /// Same groups as core's composition on real files, at the peak and at other entries.
    #[test]
    fn equals_core_composition_on_real_files() {
        let dir = std::env::var_os("MEMSNAP_REAL_FIXTURES")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real")
            });
        let Ok(entries) = std::fs::read_dir(&dir) else {
            eprintln!(
                "WARNING: real fixtures not found at {}, skipping",
                dir.display()
            );
            return;
        };
        let mut checked = 0;
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("pickle" | "pkl")
            ) {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let snap = memsnap_core::snapshot::read(&bytes).unwrap();
            let top = TopFrames::new(&snap);
            for device in 0..snap.device_traces.as_ref().map_or(0, Vec::len) {
                let tl = Timeline::build(&snap, device);
                let n = tl.len();
                for index in [0, n / 3, n / 2, n.saturating_sub(1)] {
                    if index >= n {
                        continue;
                    }
                    let want = composition(&snap, &tl, Some(index));
                    let (live, groups) = live_groups(&snap, &tl, &top, index);
                    assert_eq!(live, want.live_allocations, "{}", path.display());
                    let want: Vec<Group> = want
                        .by_top_frame
                        .into_iter()
                        .map(|g| Group {
                            label: g.label,
                            bytes: g.bytes,
                            count: g.count,
                        })
                        .collect();
                    // Labels and order agree wherever core does not merge the two groups.
                    let named = |g: &Vec<Group>| -> Vec<Group> {
                        g.iter()
                            .filter(|g| g.label != NO_STACK && g.label != NO_USER)
                            .cloned()
                            .collect()
                    };
                    assert_eq!(
                        named(&groups),
                        named(&want),
                        "{} entry {index}",
                        path.display()
                    );
                    assert_eq!(
                        as_core_merges(groups),
                        as_core_merges(want),
                        "{} entry {index}",
                        path.display()
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 0, "no traces in {}", dir.display());
    }
}
