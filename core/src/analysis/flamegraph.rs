//! Flame graphs of memory by stack: live bytes at a point (default the peak), or bytes × entries
//! lived over the whole trace. Root, then outermost frame, ..., innermost frame.

use std::collections::HashMap;

use super::frames::{format, is_omitted_id};
use super::intervals::Allocation;
use super::pace::{self, Pace, CHUNK};
use super::timeline::Timeline;
use crate::snapshot::{FrameId, Snapshot};

/// A node of the tree, which is as deep as the deepest stack: a recursion in the program
/// recorded with its C++ frames runs to tens of thousands of frames. Building, walking and
/// dropping it here never recurse, as a wasm stack could not hold that (the derived traits
/// do, and serve small trees: tests, messages).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Node {
    pub name: String,
    pub value: u64,
    /// Largest first.
    pub children: Vec<Node>,
}

impl Drop for Node {
    fn drop(&mut self) {
        // Children moved out level by level, so each is dropped with none of its own.
        let mut pending = std::mem::take(&mut self.children);
        while let Some(mut n) = pending.pop() {
            pending.append(&mut n.children);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// Bytes live after the given entry (`None`: at the peak of allocated bytes).
    LiveAt(Option<usize>),
    /// Size × entries lived, over the whole trace.
    BytesTimesLifetime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub measure: Measure,
    /// Drop the frames MemoryViz.js omits (capture machinery, interpreter loop).
    pub filter: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            measure: Measure::LiveAt(None),
            filter: true,
        }
    }
}

const NO_STACK: &str = "<no stack>";
/// Where an allocation goes whose every frame the filter dropped: under the root, its bytes
/// would have no frame (and folded stacks, which have no line for the root, would lose them).
pub const ALL_HIDDEN: &str = "<hidden frames only>";

/// The tree as it is built: nodes name a text by id, so a frame is formatted once however many
/// allocations pass through it, and a child is found by `(parent, text id)`.
#[derive(Default)]
struct Builder {
    texts: Vec<String>,
    text_ids: HashMap<String, u32>,
    names: Vec<u32>,
    values: Vec<u64>,
    children: Vec<Vec<usize>>,
    index: HashMap<(usize, u32), usize>,
}

impl Builder {
    fn text(&mut self, text: String) -> u32 {
        if let Some(&id) = self.text_ids.get(&text) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.clone());
        self.text_ids.insert(text, id);
        id
    }

    fn node(&mut self, name: u32) -> usize {
        self.names.push(name);
        self.values.push(0);
        self.children.push(Vec::new());
        self.names.len() - 1
    }

    fn child(&mut self, parent: usize, name: u32) -> usize {
        if let Some(&c) = self.index.get(&(parent, name)) {
            return c;
        }
        let c = self.node(name);
        self.children[parent].push(c);
        self.index.insert((parent, name), c);
        c
    }

    /// The tree under `root`. A child is made after its parent, so going down the ids every
    /// node's children are done before it.
    /// The tree under `root`, giving way through `pace` (11 ms in one piece for the 1M-entry
    /// file's 100 MB of stacks, natively).
    async fn finish(&self, root: usize, pace: &mut Pace<'_>) -> Node {
        let mut done: Vec<Option<Node>> = Vec::new();
        done.resize_with(self.names.len(), || None);
        for n in (root..self.names.len()).rev() {
            if n % CHUNK == 0 {
                pace.check().await;
            }
            let mut children: Vec<Node> = self.children[n]
                .iter()
                .filter_map(|&c| done[c].take())
                .collect();
            children.sort_by(|a, b| b.value.cmp(&a.value).then(a.name.cmp(&b.name)));
            done[n] = Some(Node {
                name: self.texts[self.names[n] as usize].clone(),
                value: self.values[n],
                children,
            });
        }
        done[root].take().unwrap_or(Node {
            name: String::new(),
            value: 0,
            children: Vec::new(),
        })
    }
}

/// Per frame id, once: whether `keep` keeps it, and its text's id.
const UNSEEN: u32 = u32::MAX;
const DROPPED: u32 = u32::MAX - 1;

pub fn flamegraph(snap: &Snapshot, tl: &Timeline, opts: Options) -> Node {
    let trace_len = tl.allocations.trace_len;
    let point = match opts.measure {
        Measure::LiveAt(Some(i)) => Some(i),
        Measure::LiveAt(None) => tl.peak_index(),
        Measure::BytesTimesLifetime => None,
    };
    let weight = |a: &Allocation| -> u64 {
        match opts.measure {
            Measure::BytesTimesLifetime => a.size.saturating_mul(a.lifetime()),
            // No trace (no point): what the dump holds.
            Measure::LiveAt(_) => live_weight(a, point, trace_len),
        }
    };
    let filter = opts.filter;
    flamegraph_by(snap, &tl.allocations.list, weight, |f| {
        !filter || !is_omitted_id(&snap.stacks, f)
    })
}

/// An allocation's live bytes after entry `point`, or at the dump when `point` is `None`
/// (`trace_len`: the timeline's trace length): the flame graph's weight at a point.
pub fn live_weight(a: &Allocation, point: Option<usize>, trace_len: usize) -> u64 {
    let live = match point {
        Some(i) => a.is_live_after(i),
        None => a.end == trace_len,
    };
    if live {
        a.size
    } else {
        0
    }
}

/// The tree over `allocations`, each weighing `weight` (0: left out), keeping only the frames
/// `keep` accepts (the viewer hides torch internals and the standard library this way, and
/// weighs by the part of a lifetime inside its time range). `keep` is asked once per frame,
/// by id, so that it can read the frame table's classes (`frames::is_hidden_id`) rather than
/// classify the frame's strings again.
pub fn flamegraph_by(
    snap: &Snapshot,
    allocations: &[Allocation],
    weight: impl Fn(&Allocation) -> u64,
    keep: impl Fn(FrameId) -> bool,
) -> Node {
    pace::finish(flamegraph_by_paced(
        snap,
        allocations,
        weight,
        keep,
        &mut Pace::never(),
    ))
}

/// [`flamegraph_by`], giving way through `pace` once per allocation.
pub async fn flamegraph_by_paced(
    snap: &Snapshot,
    allocations: &[Allocation],
    weight: impl Fn(&Allocation) -> u64,
    keep: impl Fn(FrameId) -> bool,
    pace: &mut Pace<'_>,
) -> Node {
    let mut b = Builder::default();
    let all = b.text("all".to_string());
    let no_stack = b.text(NO_STACK.to_string());
    let all_hidden = b.text(ALL_HIDDEN.to_string());
    let root = b.node(all);
    // Frame id -> text id, or DROPPED, filled as frames are first met.
    let mut frame_text = vec![UNSEEN; snap.stacks.frame_count()];
    // Smaller chunks than the other scans: an allocation here is a walk up its stack.
    for chunk in allocations.chunks(CHUNK / 8) {
        pace.check().await;
        for a in chunk {
            let w = weight(a);
            if w == 0 {
                continue;
            }
            b.values[root] += w;
            let mut at = root;
            match a.stack {
                None => {
                    at = b.child(at, no_stack);
                    b.values[at] += w;
                }
                Some(s) => {
                    for f in snap.stacks.stack(s).iter().rev() {
                        let slot = &mut frame_text[f.0 as usize];
                        if *slot == UNSEEN {
                            *slot = if keep(*f) {
                                b.text(format(snap.stacks.frame(*f)))
                            } else {
                                DROPPED
                            };
                        }
                        let text = *slot;
                        if text == DROPPED {
                            continue;
                        }
                        at = b.child(at, text);
                        b.values[at] += w;
                    }
                    if at == root {
                        at = b.child(at, all_hidden);
                        b.values[at] += w;
                    }
                }
            }
        }
    }
    pace.check().await;
    b.finish(root, pace).await
}

/// Folded-stack lines (`frame;frame;... value`) for flamegraph.pl and speedscope.
pub fn folded(node: &Node) -> Vec<String> {
    let mut out = Vec::new();
    // Depth first, children in order: each node with its depth (the root's is 0, and its name
    // is no frame), `path` holding the frames above it.
    let mut path: Vec<&str> = Vec::new();
    let mut pending: Vec<(&Node, usize)> = vec![(node, 0)];
    while let Some((n, depth)) = pending.pop() {
        path.truncate(depth.saturating_sub(1));
        if depth > 0 {
            path.push(&n.name);
        }
        let below: u64 = n.children.iter().map(|c| c.value).sum();
        let own = n.value.saturating_sub(below);
        if own > 0 && !path.is_empty() {
            out.push(format!("{} {}", path.join(";"), own));
        }
        pending.extend(n.children.iter().rev().map(|c| (c, depth + 1)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::Action;

    #[test]
    fn tree_at_peak_and_lifetime() {
        let mut snap = snapshot(vec![], vec![]);
        let s1 = stack(
            &mut snap,
            &[
                ("??", 0, "torch::unwind::unwind()"),
                ("/p/m.py", 5, "f"),
                ("/p/t.py", 1, "main"),
            ],
        );
        let s2 = stack(&mut snap, &[("/p/m.py", 9, "g"), ("/p/t.py", 1, "main")]);
        let t = vec![
            with_stack(entry(Action::Alloc, 0x1000, 4096), s1),
            with_stack(entry(Action::Alloc, 0x2000, 1024), s2),
            entry(Action::Alloc, 0x3000, 512),
            entry(Action::FreeRequested, 0x1000, 4096),
        ];
        snap.device_traces = Some(vec![t]);
        let tl = Timeline::build(&snap, 0);
        let g = flamegraph(&snap, &tl, Options::default());
        assert_eq!(g.value, 4096 + 1024 + 512);
        assert_eq!(g.children[0].name, "/p/t.py:1:main");
        assert_eq!(g.children[0].value, 5120);
        let main = &g.children[0];
        assert_eq!(main.children[0].name, "/p/m.py:5:f");
        // The unwind frame is filtered out.
        assert!(main.children[0].children.is_empty());
        // Folded stacks account for every byte.
        let sum: u64 = folded(&g)
            .iter()
            .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, g.value);
        assert_eq!(g.children[1].name, "<no stack>");
        let unfiltered = flamegraph(
            &snap,
            &tl,
            Options {
                measure: Measure::LiveAt(Some(3)),
                filter: false,
            },
        );
        assert_eq!(unfiltered.value, 1024 + 512);
        let life = flamegraph(
            &snap,
            &tl,
            Options {
                measure: Measure::BytesTimesLifetime,
                filter: true,
            },
        );
        // 4096 x 3 entries, 1024 x 3 (to the end), 512 x 2.
        assert_eq!(life.value, 4096 * 3 + 1024 * 3 + 512 * 2);
        let lines = folded(&g);
        assert!(lines.contains(&"/p/t.py:1:main;/p/m.py:5:f 4096".to_string()));
        assert!(lines.contains(&"<no stack> 512".to_string()));
    }

    /// A stack deeper than a thread's stack could hold one call per frame (a test thread has
    /// 2 MiB): the tree is built, folded and dropped without recursing.
    #[test]
    fn a_stack_of_200k_frames() {
        const DEPTH: usize = 200_000;
        let mut snap = snapshot(vec![], vec![]);
        let names: Vec<String> = (0..DEPTH).map(|i| format!("f{i}")).collect();
        let frames: Vec<(&str, i64, &str)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| ("/p/r.py", i as i64, n.as_str()))
            .collect();
        let s = stack(&mut snap, &frames);
        snap.device_traces = Some(vec![vec![
            with_stack(entry(Action::Alloc, 0x1000, 4096), s),
            with_stack(entry(Action::Alloc, 0x2000, 1024), s),
        ]]);
        let tl = Timeline::build(&snap, 0);
        let g = flamegraph(&snap, &tl, Options::default());
        let (mut depth, mut at) = (0, &g);
        while let Some(c) = at.children.first() {
            assert_eq!(c.value, 5120);
            depth += 1;
            at = c;
        }
        assert_eq!(depth, DEPTH);
        // Innermost first in the file, so the deepest node is frame 0.
        assert_eq!(at.name, "/p/r.py:0:f0");
        let lines = folded(&g);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("/p/r.py:199999:f199999;")
                && lines[0].ends_with(";/p/r.py:0:f0 5120")
        );
        drop(g);
    }

    #[test]
    fn stacks_of_hidden_frames_only_keep_their_bytes() {
        let mut snap = snapshot(vec![], vec![]);
        let hidden = stack(&mut snap, &[("??", 0, "torch::unwind::unwind()")]);
        let user = stack(&mut snap, &[("/p/m.py", 5, "f")]);
        let t = vec![
            with_stack(entry(Action::Alloc, 0x1000, 4096), hidden),
            with_stack(entry(Action::Alloc, 0x2000, 1024), user),
        ];
        snap.device_traces = Some(vec![t]);
        let tl = Timeline::build(&snap, 0);
        let g = flamegraph(&snap, &tl, Options::default());
        assert_eq!(
            folded(&g),
            vec![format!("{ALL_HIDDEN} 4096"), "/p/m.py:5:f 1024".to_string()]
        );
    }
}
