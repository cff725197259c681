//! Consistency checks on a [`Snapshot`] that read fine: the file is well-formed but its numbers
//! disagree (blocks outside or overlapping their segment, sizes that do not add up, counters that
//! disagree with the blocks, a trace that frees what it never allocated, ...).
//!
//! Nothing here rejects a file: PyTorch's own viewer shows such files, and so do we, with the
//! warnings beside them. Each kind of warning is listed at most [`MAX_PER_KIND`] times, then
//! summarised, so a hostile file cannot make the list as long as its trace.
//!
//! Traces are ring buffers that often start after the program did (recording enabled late), so a
//! free of an address the trace never allocated is normal when the address lies in a segment the
//! snapshot knows of (from `segments` or from a segment_* trace entry); only frees and allocs in
//! no known segment, double allocs and double frees are flagged.

use std::collections::HashMap;

use super::model::{Action, BlockState, Snapshot, TraceEntry};

/// Warnings of one kind listed in full; the rest are counted in one summary line.
pub const MAX_PER_KIND: usize = 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum WarningKind {
    BlockOutsideSegment,
    BlocksOverlap,
    BlockSizesDisagree,
    SegmentCounterDisagrees,
    SegmentsOverlap,
    FreeOfUnallocated,
    AllocOfLive,
    AllocOutsideSegments,
}

impl WarningKind {
    fn noun(self) -> &'static str {
        match self {
            WarningKind::BlockOutsideSegment => "blocks outside their segment",
            WarningKind::BlocksOverlap => "overlapping blocks",
            WarningKind::BlockSizesDisagree => {
                "segments whose block sizes do not sum to total_size"
            }
            WarningKind::SegmentCounterDisagrees => {
                "segment counters that disagree with the blocks"
            }
            WarningKind::SegmentsOverlap => "overlapping segments",
            WarningKind::FreeOfUnallocated => "frees of never-allocated addresses",
            WarningKind::AllocOfLive => "allocs of addresses already allocated",
            WarningKind::AllocOutsideSegments => "allocs outside every known segment",
        }
    }
}

/// One inconsistency; the web worker sends these to the page (hence serde).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Warning {
    pub kind: WarningKind,
    /// Where and what, e.g. `segments[3].blocks[2] (0x7f.., 512 B) lies outside ...`.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Collects warnings, listing each kind at most [`MAX_PER_KIND`] times.
#[derive(Default)]
struct Sink {
    out: Vec<Warning>,
    counts: HashMap<WarningKind, usize>,
}

impl Sink {
    fn push(&mut self, kind: WarningKind, message: impl FnOnce() -> String) {
        let n = self.counts.entry(kind).or_insert(0);
        *n += 1;
        if *n <= MAX_PER_KIND {
            self.out.push(Warning {
                kind,
                message: message(),
            });
        }
    }

    fn finish(mut self) -> Vec<Warning> {
        let mut over: Vec<(WarningKind, usize)> = self
            .counts
            .iter()
            .filter(|(_, &n)| n > MAX_PER_KIND)
            .map(|(&k, &n)| (k, n))
            .collect();
        over.sort_by_key(|(k, _)| *k as u8);
        for (kind, n) in over {
            self.out.push(Warning {
                kind,
                message: format!(
                    "... and {} more {} ({n} in all)",
                    n - MAX_PER_KIND,
                    kind.noun()
                ),
            });
        }
        self.out
    }
}

/// Checks a snapshot's segments and trace for numbers that disagree. Empty when consistent.
pub fn validate(snap: &Snapshot) -> Vec<Warning> {
    let mut sink = Sink::default();
    segments(snap, &mut sink);
    traces(snap, &mut sink);
    sink.finish()
}

fn hex(a: u64) -> String {
    format!("0x{a:x}")
}

fn segments(snap: &Snapshot, sink: &mut Sink) {
    // (device, start, end, index) of every segment, to find overlapping segments.
    let mut ranges: Vec<(i64, u64, u64, usize)> = Vec::with_capacity(snap.segments.len());
    for (si, seg) in snap.segments.iter().enumerate() {
        let start = seg.address;
        let end = start.saturating_add(seg.total_size);
        ranges.push((seg.device.unwrap_or(0), start, end, si));
        let mut blocks: Vec<(u64, u64, usize)> = Vec::with_capacity(seg.blocks.len());
        let mut next = start;
        let mut sum: u64 = 0;
        let (mut allocated, mut active, mut requested) = (0u64, 0u64, 0u64);
        for (bi, b) in seg.blocks.iter().enumerate() {
            // Older files give no block address: blocks follow each other from the segment start.
            let addr = b.address.unwrap_or(next);
            let b_end = addr.saturating_add(b.size);
            next = b_end;
            sum = sum.saturating_add(b.size);
            if b.state == BlockState::ActiveAllocated {
                allocated = allocated.saturating_add(b.size);
            }
            if b.state.is_active() {
                active = active.saturating_add(b.size);
                requested = requested.saturating_add(b.requested_size.unwrap_or(0));
            }
            if addr < start || b_end > end {
                sink.push(WarningKind::BlockOutsideSegment, || {
                    format!(
                        "segments[{si}].blocks[{bi}] ({}..{}, {} B) lies outside its segment ({}..{})",
                        hex(addr),
                        hex(b_end),
                        b.size,
                        hex(start),
                        hex(end)
                    )
                });
            }
            blocks.push((addr, b_end, bi));
        }
        blocks.sort_unstable();
        for w in blocks.windows(2) {
            let ((a0, e0, i0), (a1, _, i1)) = (w[0], w[1]);
            if a1 < e0 {
                sink.push(WarningKind::BlocksOverlap, || {
                    format!(
                        "segments[{si}]: blocks[{i0}] ({}..{}) and blocks[{i1}] (from {}) overlap",
                        hex(a0),
                        hex(e0),
                        hex(a1)
                    )
                });
            }
        }
        if !seg.blocks.is_empty() && sum != seg.total_size {
            sink.push(WarningKind::BlockSizesDisagree, || {
                format!(
                    "segments[{si}] ({}): its {} block sizes sum to {sum} B but total_size is {} B",
                    hex(start),
                    seg.blocks.len(),
                    seg.total_size
                )
            });
        }
        let counters = [
            (
                "allocated_size",
                seg.allocated_size,
                allocated,
                "active_allocated block sizes",
            ),
            ("active_size", seg.active_size, active, "active block sizes"),
            (
                "requested_size",
                seg.requested_size,
                requested,
                "active blocks' requested sizes",
            ),
        ];
        for (name, stated, computed, what) in counters {
            // requested_size sums what blocks state; without any, there is nothing to compare.
            let comparable =
                name != "requested_size" || seg.blocks.iter().any(|b| b.requested_size.is_some());
            if let Some(stated) = stated {
                if comparable && stated != computed {
                    sink.push(WarningKind::SegmentCounterDisagrees, || {
                        format!(
                            "segments[{si}] ({}): {name} is {stated} B but the {what} sum to {computed} B",
                            hex(start)
                        )
                    });
                }
            }
        }
    }
    ranges.sort_unstable();
    for w in ranges.windows(2) {
        let ((d0, a0, e0, i0), (d1, a1, _, i1)) = (w[0], w[1]);
        if d0 == d1 && a1 < e0 {
            sink.push(WarningKind::SegmentsOverlap, || {
                format!(
                    "segments[{i0}] ({}..{}) and segments[{i1}] (from {}) overlap on device {d0}",
                    hex(a0),
                    hex(e0),
                    hex(a1)
                )
            });
        }
    }
}

/// Sorted, merged address ranges: "is this address in some known segment?".
struct Ranges(Vec<(u64, u64)>);

impl Ranges {
    fn new(mut r: Vec<(u64, u64)>) -> Ranges {
        r.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(r.len());
        for (s, e) in r {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        Ranges(merged)
    }

    fn contains(&self, a: u64) -> bool {
        let i = self.0.partition_point(|&(s, _)| s <= a);
        i > 0 && a < self.0[i - 1].1
    }
}

fn is_segment_action(a: &Action) -> bool {
    matches!(
        a,
        Action::SegmentAlloc | Action::SegmentFree | Action::SegmentMap | Action::SegmentUnmap
    )
}

fn traces(snap: &Snapshot, sink: &mut Sink) {
    let Some(traces) = &snap.device_traces else {
        return;
    };
    for (device, trace) in traces.iter().enumerate() {
        let known = known_segments(snap, device as i64, trace);
        trace_of_device(device, trace, &known, sink);
    }
}

/// Every range the snapshot says was device memory on `device` at some time: dump-time
/// segments and the ranges of segment_* trace entries.
fn known_segments(snap: &Snapshot, device: i64, trace: &[TraceEntry]) -> Ranges {
    let mut r: Vec<(u64, u64)> = snap
        .segments
        .iter()
        .filter(|s| s.device.unwrap_or(0) == device)
        .map(|s| (s.address, s.address.saturating_add(s.total_size)))
        .collect();
    for e in trace.iter().filter(|e| is_segment_action(&e.action())) {
        if let (Some(a), Some(n)) = (e.addr(), e.size()) {
            r.push((a, a.saturating_add(n)));
        }
    }
    Ranges::new(r)
}

/// What the trace last did to an address.
#[derive(Clone, Copy, PartialEq)]
enum Last {
    Alloc,
    FreeRequested,
    FreeCompleted,
}

fn trace_of_device(device: usize, trace: &[TraceEntry], known: &Ranges, sink: &mut Sink) {
    // foldhash, not SipHash: one lookup per trace entry.
    let mut last: foldhash::HashMap<u64, Last> = foldhash::HashMap::default();
    for (i, e) in trace.iter().enumerate() {
        let Some(addr) = e.addr() else { continue };
        let at = || {
            format!(
                "device_traces[{device}][{i}] ({} {})",
                e.action().as_str(),
                hex(addr)
            )
        };
        match e.action() {
            Action::Alloc => {
                if last.get(&addr) == Some(&Last::Alloc) {
                    sink.push(WarningKind::AllocOfLive, || {
                        format!("{}: allocates an address that is already allocated", at())
                    });
                } else if !known.contains(addr) {
                    sink.push(WarningKind::AllocOutsideSegments, || {
                        format!("{}: lies in no segment the snapshot knows of", at())
                    });
                }
                last.insert(addr, Last::Alloc);
            }
            Action::FreeRequested | Action::FreeCompleted => {
                let now = if e.is(&Action::FreeRequested) {
                    Last::FreeRequested
                } else {
                    Last::FreeCompleted
                };
                let bad = match last.get(&addr) {
                    // Before the trace began (recording enabled late, or the ring wrapped).
                    None => !known.contains(addr),
                    Some(Last::Alloc) => false,
                    // free_requested then free_completed is one free in two steps.
                    Some(Last::FreeRequested) => now == Last::FreeRequested,
                    Some(Last::FreeCompleted) => true,
                };
                if bad {
                    sink.push(WarningKind::FreeOfUnallocated, || {
                        let why = match last.get(&addr) {
                            None => "never allocated in the trace and in no known segment",
                            _ => "already freed and not allocated again",
                        };
                        format!("{}: frees an address {why}", at())
                    });
                }
                last.insert(addr, now);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
