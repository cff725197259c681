//! Phases: the program's own START/END marks (`external_annotations`, written by
//! `torch.profiler.record_function`, the optimizer's hooks and dynamo's `dynamo_timed`) matched
//! to a device's trace entries by `time_us`, nested, with what memory did inside each.
//!
//! Matching: a device's marks are taken in time order (a mark earlier than the one before it
//! in the file is counted in `out_of_order`, then sorted into place). A START opens a phase
//! inside the innermost open one; an END closes the innermost open phase of its name (any
//! phases opened inside it and not yet ended stay open and end with it: PyTorch writes them
//! when an exception unwinds a `record_function`). An END with no open phase of its name is a
//! phase open from the trace's start (`start_us: None`), a START never ended one open to the
//! dump (`end_us: None`); both are counted, never dropped.
//!
//! A phase holds the trace entries whose `time_us` lies within `[start_us, end_us]`; entries
//! without a time take the place of the entry before them (times ascend as PyTorch records).

use std::collections::HashMap;

use super::frames::label;
use super::timeline::Timeline;
use crate::snapshot::{Snapshot, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Phase {
    pub name: String,
    /// `None`: an END whose START is not in the file (open from the trace's start).
    pub start_us: Option<i64>,
    /// `None`: a START that never ended (open to the dump).
    pub end_us: Option<i64>,
    /// Phases open around it when it started (0: outermost).
    pub depth: usize,
    /// The phase it started inside, an index into [`Phases::phases`].
    pub parent: Option<usize>,
    /// Its trace entries: `first..end`.
    pub first: usize,
    pub end: usize,
    /// A compiler's phase (dynamo, inductor, AOT autograd), folded away by default in views.
    pub compile: bool,
}

impl Phase {
    pub fn contains(&self, entry: usize) -> bool {
        self.first <= entry && entry < self.end
    }

    /// Microseconds from START to END, when both are in the file.
    pub fn duration_us(&self) -> Option<i64> {
        Some(self.end_us? - self.start_us?)
    }
}

/// A device's phases in order of their start (open-from-start ones first), and what the
/// matching had to repair.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Phases {
    pub device: usize,
    pub phases: Vec<Phase>,
    /// ENDs with no open phase of their name.
    pub unmatched_ends: usize,
    /// STARTs never ended.
    pub unclosed: usize,
    /// Marks written earlier in time than the mark before them.
    pub out_of_order: usize,
    /// Marks without a usable stage, name or time (not STARTs or ENDs of anything).
    pub unreadable: usize,
}

/// Why a device has no phases to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum NoPhases {
    /// The file has no `external_annotations` for this device.
    NoAnnotations,
    /// The trace's entries carry no `time_us`, so no mark can be placed.
    NoTimes,
}

impl std::fmt::Display for NoPhases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            NoPhases::NoAnnotations => "no phases: the file has no external_annotations for this device (record_function, optimizer hooks and torch.compile write them)",
            NoPhases::NoTimes => "no phases: the trace has no time_us, so the file's annotations cannot be placed on it",
        })
    }
}

impl Phases {
    /// Problems the matching repaired, for a one-line warning; empty when there were none.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        let mut say = |n: usize, what: &str| {
            if n > 0 {
                w.push(format!("{n} {what}"));
            }
        };
        say(
            self.unmatched_ends,
            "END mark(s) without a START (shown open from the trace's start)",
        );
        say(
            self.unclosed,
            "START mark(s) never ended (shown open to the dump)",
        );
        say(
            self.out_of_order,
            "mark(s) out of time order (sorted into place)",
        );
        say(
            self.unreadable,
            "mark(s) without a stage, name or time (skipped)",
        );
        w
    }

    /// The innermost phase holding `entry`.
    pub fn innermost_at(&self, entry: usize) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, p) in self.phases.iter().enumerate() {
            if p.contains(entry) && best.is_none_or(|b| p.depth >= self.phases[b].depth) {
                best = Some(i);
            }
        }
        best
    }

    /// `a > b > c`: the phase and those around it, outermost first.
    pub fn path(&self, index: usize) -> String {
        let mut names = vec![self.phases[index].name.as_str()];
        let mut at = self.phases[index].parent;
        while let Some(p) = at {
            names.push(&self.phases[p].name);
            at = self.phases[p].parent;
        }
        names.reverse();
        names.join(" > ")
    }
}

/// Compiler phases by name: dynamo's timers and what they wrap.
fn is_compile(name: &str) -> bool {
    name.contains("(dynamo_timed)")
        || [
            "inductor",
            "dynamo",
            "aot_autograd",
            "compile_fx",
            "GraphLowering",
            "Scheduler.",
        ]
        .iter()
        .any(|k| name.contains(k))
}

/// One mark as PyTorch writes it into `external_annotations` (`stage` is "START" or "END"):
/// what `capture`'s `phase` steps write, and what [`phases`] reads back.
pub fn mark_value(stage: &str, name: &str, device: i64, time_us: i64) -> Value {
    let s = |x: &str| Value::Str(std::sync::Arc::from(x));
    Value::Dict(std::sync::Arc::new(vec![
        (s("stage"), s(stage)),
        (s("name"), s(name)),
        (s("device"), Value::Int(device)),
        (s("time_us"), Value::Int(time_us)),
    ]))
}

struct Mark {
    start: bool,
    name: String,
    time_us: i64,
}

/// The device's marks in the file's order; `unreadable` counts the rest.
fn marks(annotations: &Value, device: usize, unreadable: &mut usize) -> Vec<Mark> {
    let Some(list) = annotations.as_seq() else {
        *unreadable += 1;
        return Vec::new();
    };
    let mut out = Vec::new();
    for a in list {
        // A mark without a device is the process's; PyTorch writes one per device.
        if let Some(d) = a.get("device").and_then(Value::as_i64) {
            if usize::try_from(d).ok() != Some(device) {
                continue;
            }
        }
        let stage = a.get("stage").and_then(Value::as_str);
        let name = a.get("name").and_then(Value::as_str);
        let time = a.get("time_us").and_then(Value::as_i64);
        match (stage, name, time) {
            (Some(s @ ("START" | "END")), Some(n), Some(t)) => out.push(Mark {
                start: s == "START",
                name: n.to_string(),
                time_us: t,
            }),
            _ => *unreadable += 1,
        }
    }
    out
}

/// Each entry's time, an entry without one taking the time of the entry before it.
fn entry_times(snap: &Snapshot, device: usize) -> Vec<i64> {
    let mut last = i64::MIN;
    snap.trace(device)
        .iter()
        .map(|e| {
            if let Some(t) = e.time_us() {
                last = t;
            }
            last
        })
        .collect()
}

/// The first entry at or after `time_us`.
fn first_at(times: &[i64], time_us: i64) -> usize {
    times.partition_point(|&t| t < time_us)
}

/// One past the last entry at or before `time_us`.
fn end_at(times: &[i64], time_us: i64) -> usize {
    times.partition_point(|&t| t <= time_us)
}

/// The phases of `device`, matched to its trace (see the module note).
pub fn phases(snap: &Snapshot, device: usize) -> Result<Phases, NoPhases> {
    let mut result = Phases {
        device,
        ..Phases::default()
    };
    let Some(annotations) = &snap.external_annotations else {
        return Err(NoPhases::NoAnnotations);
    };
    let mut marks = marks(annotations, device, &mut result.unreadable);
    if marks.is_empty() {
        return Err(NoPhases::NoAnnotations);
    }
    if !snap.trace(device).iter().any(|e| e.time_us().is_some()) {
        return Err(NoPhases::NoTimes);
    }
    let times = entry_times(snap, device);
    result.out_of_order = marks
        .windows(2)
        .filter(|w| w[1].time_us < w[0].time_us)
        .count();
    // Stable: marks of one instant keep the file's order (an END then a START stays so).
    marks.sort_by_key(|m| m.time_us);

    let n = times.len();
    // Open phases, innermost last.
    let mut open: Vec<usize> = Vec::new();
    let mut list: Vec<Phase> = Vec::new();
    let mut from_start: Vec<Phase> = Vec::new();
    for m in marks {
        if m.start {
            list.push(Phase {
                compile: is_compile(&m.name),
                name: m.name,
                start_us: Some(m.time_us),
                end_us: None,
                depth: open.len(),
                parent: open.last().copied(),
                first: first_at(&times, m.time_us),
                end: n,
            });
            open.push(list.len() - 1);
            continue;
        }
        let end = end_at(&times, m.time_us);
        match open.iter().rposition(|&i| list[i].name == m.name) {
            Some(at) => {
                // It and everything opened inside it end here.
                for i in open.drain(at..) {
                    list[i].end_us = Some(m.time_us);
                    list[i].end = end.max(list[i].first);
                }
            }
            None => {
                result.unmatched_ends += 1;
                from_start.push(Phase {
                    compile: is_compile(&m.name),
                    name: m.name,
                    start_us: None,
                    end_us: Some(m.time_us),
                    depth: 0,
                    parent: None,
                    first: 0,
                    end,
                });
            }
        }
    }
    result.unclosed = open.len();
    // Open-from-start phases come first; shift the parents of the rest past them.
    let shift = from_start.len();
    for p in &mut list {
        p.parent = p.parent.map(|i| i + shift);
    }
    from_start.extend(list);
    result.phases = from_start;
    Ok(result)
}

/// What one allocation site left live at a phase's end.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LeftLive {
    pub frame: String,
    pub bytes: u64,
    pub count: usize,
}

/// What memory did inside one phase, from the device's timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PhaseStats {
    /// Most bytes allocated after any of its entries (before it, when it holds none).
    pub peak_allocated: u64,
    /// The entry of that peak; `None` when it holds no entry.
    pub peak_index: Option<usize>,
    pub peak_reserved: u64,
    /// Allocations made in it: count, block bytes, and bytes the program asked for.
    pub allocs: usize,
    pub allocated_bytes: u64,
    pub requested_bytes: u64,
    /// Allocations freed in it (the program's free), and their block bytes.
    pub frees: usize,
    pub freed_bytes: u64,
    /// Allocated after its last entry minus allocated before its first.
    pub net_bytes: i64,
    /// What was allocated in it and is still live after it, by top user frame, largest first.
    pub left_live: Vec<LeftLive>,
}

/// Groups of `left_live` kept.
pub const LEFT_LIVE_GROUPS: usize = 5;

/// The figures of `phase` on `tl`, the timeline of the phases' device. For many phases of one
/// device use [`PhaseFigures`], which indexes the timeline once.
pub fn phase_stats(snap: &Snapshot, tl: &Timeline, phase: &Phase) -> PhaseStats {
    PhaseFigures::new(snap, tl).of(phase)
}

/// A device's timeline indexed for the figures of any number of its phases: running totals of
/// the allocations made and freed up to each entry, so a phase costs the allocations it made
/// (for `left_live`), not a walk of the whole list (901 phases of a million-entry trace would
/// otherwise be 10^9 steps).
pub struct PhaseFigures<'a> {
    snap: &'a Snapshot,
    tl: &'a Timeline,
    /// Before entry i (i in 0..=n): allocations made, their block and requested bytes.
    made: Vec<(usize, u64, u64)>,
    /// Before entry i: allocations freed and their block bytes.
    freed: Vec<(usize, u64)>,
}

impl<'a> PhaseFigures<'a> {
    pub fn new(snap: &'a Snapshot, tl: &'a Timeline) -> PhaseFigures<'a> {
        let n = tl.allocations.trace_len;
        let mut made_at = vec![(0usize, 0u64, 0u64); n];
        let mut freed_at = vec![(0usize, 0u64); n];
        for al in &tl.allocations.list {
            if let Some(i) = al.alloc_index.filter(|&i| i < n) {
                let m = &mut made_at[i];
                *m = (m.0 + 1, m.1 + al.size, m.2 + al.requested);
            }
            if al.end < n {
                let f = &mut freed_at[al.end];
                *f = (f.0 + 1, f.1 + al.size);
            }
        }
        let mut made = Vec::with_capacity(n + 1);
        let mut run = (0, 0, 0);
        made.push(run);
        for m in made_at {
            run = (run.0 + m.0, run.1 + m.1, run.2 + m.2);
            made.push(run);
        }
        let mut freed = Vec::with_capacity(n + 1);
        let mut run = (0, 0);
        freed.push(run);
        for f in freed_at {
            run = (run.0 + f.0, run.1 + f.1);
            freed.push(run);
        }
        PhaseFigures {
            snap,
            tl,
            made,
            freed,
        }
    }

    pub fn of(&self, phase: &Phase) -> PhaseStats {
        let tl = self.tl;
        let allocated = tl.allocated.values();
        let reserved = tl.reserved.values();
        let n = tl.allocations.trace_len.min(tl.len());
        let (a, b) = (phase.first.min(n), phase.end.min(n).max(phase.first.min(n)));
        let before = |series: &[u64], start: u64| {
            a.checked_sub(1)
                .and_then(|i| series.get(i).copied())
                .unwrap_or(start)
        };
        let allocated_before = before(allocated, tl.start_allocated);
        let (peak_allocated, peak_index) = if a < b {
            let i = tl.allocated.first_max(a, b).unwrap_or(a);
            (allocated[i], Some(i))
        } else {
            (allocated_before, None)
        };
        let peak_reserved = if a < b {
            tl.reserved.min_max(a, b).map_or(0, |(_, hi)| hi)
        } else {
            before(reserved, tl.start_reserved)
        };
        let allocated_after = if a < b {
            allocated[b - 1]
        } else {
            allocated_before
        };
        let (m0, m1) = (self.made[a], self.made[b]);
        let (f0, f1) = (self.freed[a], self.freed[b]);
        PhaseStats {
            peak_allocated,
            peak_index,
            peak_reserved,
            allocs: m1.0 - m0.0,
            allocated_bytes: m1.1 - m0.1,
            requested_bytes: m1.2 - m0.2,
            frees: f1.0 - f0.0,
            freed_bytes: f1.1 - f0.1,
            net_bytes: allocated_after as i64 - allocated_before as i64,
            left_live: self.left_live(a, b),
        }
    }

    /// What was allocated in entries `a..b` and is still live after them, by frame label.
    fn left_live(&self, a: usize, b: usize) -> Vec<LeftLive> {
        // The list is ordered by `start`, which is the alloc entry of every traced allocation.
        let list = &self.tl.allocations.list;
        let lo = list.partition_point(|al| al.start < a);
        let hi = list.partition_point(|al| al.start < b);
        let mut live: HashMap<String, (u64, usize)> = HashMap::new();
        for al in &list[lo..hi] {
            if al.alloc_index.is_some() && al.end >= b {
                let g = live.entry(label(&self.snap.stacks, al.stack)).or_default();
                g.0 += al.size;
                g.1 += 1;
            }
        }
        let mut groups: Vec<LeftLive> = live
            .into_iter()
            .map(|(frame, (bytes, count))| LeftLive {
                frame,
                bytes,
                count,
            })
            .collect();
        groups.sort_by(|x, y| y.bytes.cmp(&x.bytes).then_with(|| x.frame.cmp(&y.frame)));
        groups.truncate(LEFT_LIVE_GROUPS);
        groups
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::analysis::testutil::{entry, snapshot};
    use crate::snapshot::Action;

    fn mark(stage: &str, name: &str, t: i64) -> Value {
        let s = |x: &str| Value::Str(Arc::from(x));
        Value::Dict(Arc::new(vec![
            (s("stage"), s(stage)),
            (s("name"), s(name)),
            (s("device"), Value::Int(0)),
            (s("time_us"), Value::Int(t)),
        ]))
    }

    /// Ten alternating 1 MiB allocs and frees at t = 0, 10, ..., 90 on addresses of their own.
    fn file(marks: Vec<Value>) -> Snapshot {
        let trace = (0..10)
            .map(|i| {
                let action = if i % 2 == 0 {
                    Action::Alloc
                } else {
                    Action::FreeRequested
                };
                let mut e = entry(action, 0x1000_0000 + (i / 2) as u64 * (1 << 20), 1 << 20);
                e.set_time_us(Some(i * 10));
                e
            })
            .collect();
        let mut snap = snapshot(Vec::new(), trace);
        snap.external_annotations = Some(Value::List(Arc::new(marks)));
        snap
    }

    #[test]
    fn nested_phases_hold_the_entries_of_their_time() {
        let snap = file(vec![
            mark("START", "step", 15),
            mark("START", "forward", 20),
            mark("END", "forward", 40),
            mark("END", "step", 80),
        ]);
        let p = phases(&snap, 0).unwrap();
        assert_eq!(p.phases.len(), 2);
        let (step, fwd) = (&p.phases[0], &p.phases[1]);
        assert_eq!((step.first, step.end, step.depth), (2, 9, 0));
        assert_eq!(
            (fwd.first, fwd.end, fwd.depth, fwd.parent),
            (2, 5, 1, Some(0))
        );
        assert_eq!(p.innermost_at(3), Some(1));
        assert_eq!(p.innermost_at(6), Some(0));
        assert_eq!(p.innermost_at(9), None);
        assert_eq!(p.path(1), "step > forward");
        assert!(p.warnings().is_empty());
        let tl = Timeline::build(&snap, 0);
        let s = phase_stats(&snap, &tl, fwd);
        // Entries 2..5: alloc, free, alloc. Allocated after entry 1 is 0.
        assert_eq!((s.allocs, s.frees), (2, 1));
        assert_eq!(s.peak_allocated, 1 << 20);
        assert_eq!(s.net_bytes, 1 << 20);
        assert_eq!(s.left_live.len(), 1);
        assert_eq!(s.left_live[0].bytes, 1 << 20);
    }

    #[test]
    fn unmatched_marks_are_kept_open_ended_and_counted() {
        let snap = file(vec![
            mark("END", "warmup", 25),
            mark("START", "step", 50),
            mark("START", "inner", 30),
        ]);
        let p = phases(&snap, 0).unwrap();
        assert_eq!((p.unmatched_ends, p.unclosed, p.out_of_order), (1, 2, 1));
        assert_eq!(p.phases[0].name, "warmup");
        assert_eq!(
            (p.phases[0].start_us, p.phases[0].first, p.phases[0].end),
            (None, 0, 3)
        );
        // Sorted into place: inner (t=30) opens before step (t=50), which nests in it.
        assert_eq!(p.phases[1].name, "inner");
        assert_eq!(p.phases[2].parent, Some(1));
        assert_eq!(p.phases[2].end, 10);
        assert_eq!(p.warnings().len(), 3);
    }

    #[test]
    fn an_end_closes_what_was_opened_inside_it() {
        let snap = file(vec![
            mark("START", "outer", 0),
            mark("START", "raised", 20),
            mark("END", "outer", 60),
        ]);
        let p = phases(&snap, 0).unwrap();
        assert_eq!(p.unclosed, 0);
        assert!(p
            .phases
            .iter()
            .all(|ph| ph.end_us == Some(60) && ph.end == 7));
    }

    #[test]
    fn files_without_marks_or_times_say_which() {
        let mut snap = file(Vec::new());
        snap.external_annotations = None;
        assert_eq!(phases(&snap, 0), Err(NoPhases::NoAnnotations));
        let mut snap = file(vec![mark("START", "a", 0)]);
        for e in snap.device_traces.as_mut().unwrap()[0].iter_mut() {
            e.set_time_us(None);
        }
        assert_eq!(phases(&snap, 0), Err(NoPhases::NoTimes));
        // Marks of another device are not this one's.
        let snap = file(vec![mark("START", "a", 0)]);
        assert_eq!(phases(&snap, 1), Err(NoPhases::NoAnnotations));
    }

    /// `PhaseFigures::left_live` finds a phase's allocations by binary search on `start`.
    #[test]
    fn traced_allocations_are_ordered_by_their_alloc_entry() {
        let mut trace = Vec::new();
        // Freed before anything is allocated: allocated before the trace began.
        trace.push(entry(Action::FreeRequested, 0x9000_0000, 1 << 20));
        for i in 0..6u64 {
            trace.push(entry(Action::Alloc, 0x1000_0000 + i * (1 << 20), 1 << 20));
            if i % 2 == 1 {
                trace.push(entry(
                    Action::FreeRequested,
                    0x1000_0000 + (i - 1) * (1 << 20),
                    1 << 20,
                ));
            }
        }
        let snap = snapshot(Vec::new(), trace);
        let tl = Timeline::build(&snap, 0);
        let list = &tl.allocations.list;
        assert!(list.windows(2).all(|w| w[0].start <= w[1].start));
        assert!(list
            .iter()
            .all(|a| a.alloc_index.is_none_or(|i| i == a.start)));
        assert!(list.iter().any(|a| a.alloc_index.is_none()));
        // Every phase's figures equal a walk of the whole list.
        let figures = PhaseFigures::new(&snap, &tl);
        for first in 0..tl.len() {
            for end in first..=tl.len() {
                let p = Phase {
                    name: "p".into(),
                    start_us: None,
                    end_us: None,
                    depth: 0,
                    parent: None,
                    first,
                    end,
                    compile: false,
                };
                let s = figures.of(&p);
                let made: Vec<_> = list
                    .iter()
                    .filter(|a| a.alloc_index.is_some_and(|i| first <= i && i < end))
                    .collect();
                assert_eq!(s.allocs, made.len());
                assert_eq!(s.allocated_bytes, made.iter().map(|a| a.size).sum::<u64>());
                let left: usize = made.iter().filter(|a| a.end >= end).count();
                assert_eq!(s.left_live.iter().map(|g| g.count).sum::<usize>(), left);
                let freed = list
                    .iter()
                    .filter(|a| a.end < tl.len() && first <= a.end && a.end < end);
                assert_eq!(s.frees, freed.count());
            }
        }
    }

    #[test]
    fn compiler_phases_are_recognised() {
        assert!(is_compile("_compile.compile_inner (dynamo_timed)"));
        assert!(is_compile("GraphLowering.run (dynamo_timed)"));
        assert!(!is_compile("Optimizer.step#AdamW.step"));
    }
}
