//! Flame graph of an entry range (`analysis::flamegraph`): live bytes after a point (default the
//! range's peak) or bytes × entries lived inside the range, by stack; torch internals, the
//! standard library and native frames hidden unless all frames are asked for.

use memsnap_core::analysis::flamegraph::{flamegraph_by_paced, live_weight, Node};
use memsnap_core::analysis::frames::is_hidden_id;
use memsnap_core::analysis::intervals::Allocation;
use memsnap_core::analysis::pace::{self, Pace};
use memsnap_core::analysis::range::{clamp, lifetime_in, peak_index_in};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::{FrameId, Snapshot};

use super::cache::Analyses;
use super::timeline::to_usize;
use crate::protocol::analysis::{FlameMeasure, FlameNodeVm, FlameRequest, FlameView};

/// Nodes narrower than total / this are left out (they would be under a pixel wide).
pub const MIN_FLAME_FRACTION: u64 = 1500;
/// At most this many nodes are sent.
const MAX_NODES: usize = 20_000;

pub fn flame_view(snap: &Snapshot, cache: &mut Analyses, req: &FlameRequest) -> FlameView {
    let tl = cache.timeline(snap, req.device);
    pace::finish(flame_view_paced(snap, tl, req, &mut Pace::never()))
}

/// [`flame_view`] on the device's timeline `tl`, giving way through `pace`.
pub async fn flame_view_paced(
    snap: &Snapshot,
    tl: &Timeline,
    req: &FlameRequest,
    pace: &mut Pace<'_>,
) -> FlameView {
    let (a, b) = clamp(tl, to_usize(req.range.start), to_usize(req.range.end));
    let all = req.all_frames;
    let keep = |f: FrameId| all || !is_hidden_id(&snap.stacks, f);
    let trace_len = tl.allocations.trace_len;
    let (root, point) = match req.measure {
        FlameMeasure::LiveAt(at) => {
            let point = match at {
                Some(i) if a < b => Some(to_usize(i).clamp(a, b - 1)),
                _ => peak_index_in(tl, a, b),
            };
            // Without a trace: what the dump holds.
            let weight = |al: &Allocation| live_weight(al, point, trace_len);
            (
                flamegraph_by_paced(snap, &tl.allocations.list, weight, keep, pace).await,
                point,
            )
        }
        FlameMeasure::BytesTimesLifetime => {
            let weight = |al: &Allocation| al.size.saturating_mul(lifetime_in(al, a, b));
            (
                flamegraph_by_paced(snap, &tl.allocations.list, weight, keep, pace).await,
                None,
            )
        }
    };
    pace.check().await;
    let mut nodes = Vec::new();
    let mut hidden = 0;
    flatten(&root, 0, 0, root.value, &mut nodes, &mut hidden);
    FlameView {
        device: req.device,
        measure: req.measure,
        point: point.map(|p| p as u64),
        total: root.value,
        nodes,
        hidden,
    }
}

/// Pre-order, children left to right from `offset`, pruning the narrow ones. Without
/// recursion: the tree is as deep as the deepest stack (see `flamegraph::Node`).
fn flatten(
    root: &Node,
    depth: u32,
    offset: u64,
    total: u64,
    out: &mut Vec<FlameNodeVm>,
    hidden: &mut u64,
) {
    let mut pending = vec![(root, depth, offset)];
    while let Some((n, depth, offset)) = pending.pop() {
        if out.len() >= MAX_NODES
            || (depth > 0 && (n.value as u128) * (MIN_FLAME_FRACTION as u128) < total as u128)
        {
            *hidden += 1;
            continue;
        }
        out.push(FlameNodeVm {
            name: n.name.clone(),
            depth,
            offset,
            value: n.value,
        });
        // Pushed last to first, so that the first child comes off next.
        let at = pending.len();
        let mut x = offset;
        for c in &n.children {
            pending.push((c, depth + 1, x));
            x += c.value;
        }
        pending[at..].reverse();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, value: u64, children: Vec<Node>) -> Node {
        Node {
            name: name.into(),
            value,
            children,
        }
    }

    #[test]
    fn flattens_in_preorder_and_prunes_slivers() {
        let root = node(
            "all",
            10_000,
            vec![
                node("a", 6_000, vec![node("a1", 6_000, vec![])]),
                node("b", 3_995, vec![]),
                node("tiny", 5, vec![]),
            ],
        );
        let (mut out, mut hidden) = (Vec::new(), 0);
        flatten(&root, 0, 0, root.value, &mut out, &mut hidden);
        let got: Vec<(&str, u32, u64)> = out
            .iter()
            .map(|n| (n.name.as_str(), n.depth, n.offset))
            .collect();
        assert_eq!(
            got,
            vec![("all", 0, 0), ("a", 1, 0), ("a1", 2, 0), ("b", 1, 6_000)]
        );
        assert_eq!(hidden, 1);
    }
}
