//! The peak of allocated memory and what it is made of: live allocations at the peak grouped
//! by their top user frame and by full stack.

use std::collections::HashMap;

use super::frames::{format, top_user_frame};
use super::pace::{self, Pace, CHUNK};
use super::timeline::Timeline;
use crate::snapshot::{FrameId, Snapshot, StackId};

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PeakGroup {
    /// `file:line:name` of the top user frame, or `<no user frame>` / `<no stack>`.
    pub label: String,
    pub frame: Option<FrameId>,
    /// For by-stack groups: the stack.
    pub stack: Option<StackId>,
    pub bytes: u64,
    pub count: usize,
}

#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Peak {
    /// Entry after which allocated is highest; `None` without a trace (then the dump's
    /// live blocks are the "peak").
    pub index: Option<usize>,
    pub allocated: u64,
    pub reserved: u64,
    pub live_allocations: usize,
    /// Most bytes first.
    pub by_top_frame: Vec<PeakGroup>,
    pub by_stack: Vec<PeakGroup>,
}

const NO_STACK: &str = "<no stack>";
const NO_USER: &str = "<no user frame>";

/// Live allocations after entry `index` (or at the dump when `None`), grouped. An index past
/// the trace's end means the dump.
pub fn composition(snap: &Snapshot, tl: &Timeline, index: Option<usize>) -> Peak {
    pace::finish(composition_paced(snap, tl, index, &mut Pace::never()))
}

/// [`composition`], giving way through `pace` once per allocation.
pub async fn composition_paced(
    snap: &Snapshot,
    tl: &Timeline,
    index: Option<usize>,
    pace: &mut Pace<'_>,
) -> Peak {
    let index = index.filter(|&i| i < tl.len());
    let mut top: HashMap<Option<FrameId>, (String, u64, usize)> = HashMap::new();
    let mut full: HashMap<Option<StackId>, (u64, usize)> = HashMap::new();
    // Top frames keyed by text too: equal frames may have distinct ids.
    let mut label_ids: HashMap<String, Option<FrameId>> = HashMap::new();
    let mut top_of: HashMap<StackId, Option<usize>> = HashMap::new();
    let mut top_frame = |s: StackId| {
        *top_of
            .entry(s)
            .or_insert_with(|| top_user_frame(&snap.stacks, s))
    };
    // Each stack's group, labelled once per stack rather than once per allocation.
    let mut key_of: foldhash::HashMap<Option<StackId>, Option<FrameId>> = Default::default();
    let mut live_allocations = 0;
    for chunk in tl.allocations.list.chunks(CHUNK) {
        pace.check().await;
        for a in chunk {
            let live = match index {
                Some(i) => a.is_live_after(i),
                None => a.end == tl.allocations.trace_len,
            };
            if !live {
                continue;
            }
            live_allocations += 1;
            let key = match key_of.get(&a.stack) {
                Some(k) => *k,
                None => {
                    let (label, fid) = match a.stack {
                        None => (NO_STACK.to_string(), None),
                        Some(s) => match top_frame(s) {
                            None => (NO_USER.to_string(), None),
                            Some(k) => {
                                let f = snap.stacks.stack(s)[k];
                                (format(snap.stacks.frame(f)), Some(f))
                            }
                        },
                    };
                    let key = *label_ids.entry(label.clone()).or_insert(fid);
                    top.entry(key).or_insert((label, 0, 0));
                    key_of.insert(a.stack, key);
                    key
                }
            };
            if let Some(e) = top.get_mut(&key) {
                e.1 += a.size;
                e.2 += 1;
            }
            let e = full.entry(a.stack).or_insert((0, 0));
            e.0 += a.size;
            e.1 += 1;
        }
    }
    let mut by_top_frame: Vec<PeakGroup> = top
        .into_iter()
        .map(|(frame, (label, bytes, count))| PeakGroup {
            label,
            frame,
            stack: None,
            bytes,
            count,
        })
        .collect();
    by_top_frame.sort_by(|x, y| y.bytes.cmp(&x.bytes).then(x.label.cmp(&y.label)));
    let mut by_stack: Vec<PeakGroup> = full
        .into_iter()
        .map(|(stack, (bytes, count))| {
            let (label, frame) = match stack {
                None => (NO_STACK.to_string(), None),
                Some(s) => match top_frame(s) {
                    Some(k) => {
                        let f = snap.stacks.stack(s)[k];
                        (format(snap.stacks.frame(f)), Some(f))
                    }
                    None => (NO_USER.to_string(), None),
                },
            };
            PeakGroup {
                label,
                frame,
                stack,
                bytes,
                count,
            }
        })
        .collect();
    by_stack.sort_by(|x, y| {
        y.bytes
            .cmp(&x.bytes)
            .then(x.label.cmp(&y.label))
            .then(x.stack.cmp(&y.stack))
    });
    let (allocated, reserved) = match index {
        Some(i) => (tl.allocated.values()[i], tl.reserved.values()[i]),
        None => (tl.dump_allocated, tl.dump_reserved),
    };
    Peak {
        index,
        allocated,
        reserved,
        live_allocations,
        by_top_frame,
        by_stack,
    }
}

/// The composition at the peak of allocated bytes.
pub fn peak(snap: &Snapshot, tl: &Timeline) -> Peak {
    composition(snap, tl, tl.peak_index())
}

/// [`peak`], giving way through `pace`.
pub async fn peak_paced(snap: &Snapshot, tl: &Timeline, pace: &mut Pace<'_>) -> Peak {
    composition_paced(snap, tl, tl.peak_index(), pace).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::Action;

    #[test]
    fn groups_at_peak() {
        let mut snap = snapshot(vec![], vec![]);
        let torch = ("/e/site-packages/torch/nn/functional.py", 10, "linear");
        let s1 = stack(
            &mut snap,
            &[
                torch,
                ("/p/model.py", 5, "forward"),
                ("/p/train.py", 1, "main"),
            ],
        );
        let s2 = stack(
            &mut snap,
            &[
                torch,
                ("/p/model.py", 5, "forward"),
                ("/p/train.py", 2, "main"),
            ],
        );
        let s3 = stack(&mut snap, &[("/p/loss.py", 7, "loss")]);
        let t = vec![
            with_stack(entry(Action::Alloc, 0x1000_0000, 4 * MB), s1),
            with_stack(entry(Action::Alloc, 0x2000_0000, 2 * MB), s2),
            with_stack(entry(Action::Alloc, 0x3000_0000, 3 * MB), s3),
            entry(Action::Alloc, 0x4000_0000, 2 * MB),
            entry(Action::FreeRequested, 0x3000_0000, 3 * MB),
            entry(Action::FreeRequested, 0x1000_0000, 4 * MB),
        ];
        snap.device_traces = Some(vec![t]);
        let tl = Timeline::build(&snap, 0);
        let p = peak(&snap, &tl);
        assert_eq!(p.index, Some(3));
        assert_eq!(p.allocated, 11 * MB);
        assert_eq!(p.live_allocations, 4);
        let top: Vec<(&str, u64, usize)> = p
            .by_top_frame
            .iter()
            .map(|g| (g.label.as_str(), g.bytes, g.count))
            .collect();
        assert_eq!(
            top,
            vec![
                ("/p/model.py:5:forward", 6 * MB, 2),
                ("/p/loss.py:7:loss", 3 * MB, 1),
                ("<no stack>", 2 * MB, 1)
            ]
        );
        let stacks: Vec<(Option<StackId>, u64)> =
            p.by_stack.iter().map(|g| (g.stack, g.bytes)).collect();
        assert_eq!(
            stacks,
            vec![
                (Some(s1), 4 * MB),
                (Some(s3), 3 * MB),
                (Some(s2), 2 * MB),
                (None, 2 * MB)
            ]
        );
        let end = composition(&snap, &tl, None);
        assert_eq!(end.live_allocations, 2);
        assert_eq!(composition(&snap, &tl, Some(99)), end);
    }
}
