//! The replay backing: cudaMalloc and cuMemMap succeed or fail as they did in the real run and
//! hand out the addresses it got. Each request's "window" holds the segment actions the real
//! allocator recorded for it; the model's calls are matched against them.

use std::collections::BTreeSet;

use crate::allocator::{Backing, EventId, StreamId};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegKind {
    Alloc,
    Free,
    Map,
    Unmap,
}

impl SegKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SegKind::Alloc => "segment_alloc",
            SegKind::Free => "segment_free",
            SegKind::Map => "segment_map",
            SegKind::Unmap => "segment_unmap",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegOp {
    pub kind: SegKind,
    pub addr: u64,
    pub size: u64,
    /// Trace index of the real entry (None for the model's own calls).
    pub entry: Option<usize>,
}

/// A closed window: real actions the model made too, real actions it did not make, and calls
/// of the model the run did not make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowScore {
    pub matched: usize,
    pub missed: usize,
    pub extra: usize,
    pub first_missed: Option<SegOp>,
    pub first_extra: Option<SegOp>,
}

/// Addresses handed out when the model makes a call the real run did not (never real ones).
const SYNTHETIC_BASE: u64 = 0xfff0_0000_0000;

#[derive(Debug, Clone)]
pub struct ReplayBacking {
    /// The real run's segment actions for the current request, and whether each was matched.
    window: Vec<(SegOp, bool)>,
    /// The model's calls in this window that matched nothing.
    pub(crate) unmatched: Vec<SegOp>,
    /// The real run failed this request (an `oom` entry follows).
    pub(crate) window_ooms: bool,
    next_synthetic: u64,
    next_event: u64,
    done_events: BTreeSet<EventId>,
    clock: i64,
    capacity: u64,
}

impl ReplayBacking {
    pub fn new(capacity: u64) -> ReplayBacking {
        ReplayBacking {
            window: Vec::new(),
            unmatched: Vec::new(),
            window_ooms: false,
            next_synthetic: SYNTHETIC_BASE,
            next_event: 0,
            done_events: BTreeSet::new(),
            clock: 0,
            capacity,
        }
    }

    pub fn open_window(&mut self, ops: Vec<SegOp>, ooms: bool) {
        // Reuses the window's buffer: a window opens for every request.
        self.window.clear();
        self.window.extend(ops.into_iter().map(|o| (o, false)));
        self.unmatched.clear();
        self.window_ooms = ooms;
    }

    /// How the window went; counts and first examples only, so that the per-request scoring
    /// allocates nothing.
    pub fn close_window(&mut self) -> WindowScore {
        let mut score = WindowScore {
            matched: 0,
            missed: 0,
            extra: self.unmatched.len(),
            first_missed: None,
            first_extra: self.unmatched.first().copied(),
        };
        for (o, m) in self.window.drain(..) {
            if m {
                score.matched += 1;
            } else {
                score.missed += 1;
                score.first_missed.get_or_insert(o);
            }
        }
        self.unmatched.clear();
        score
    }

    /// Matches the model's call with the run's next unmatched action of that kind and size;
    /// `None` while the run released memory before that action (its first attempt had
    /// failed, or an empty_cache came first: either way the model must release first).
    fn take(&mut self, kind: SegKind, addr: Option<u64>, size: u64) -> Option<u64> {
        let pos = self.window.iter().position(|(o, m)| {
            !*m && o.kind == kind && o.size == size && addr.is_none_or(|a| a == o.addr)
        })?;
        let grows = matches!(kind, SegKind::Alloc | SegKind::Map);
        if grows
            && self.window[..pos]
                .iter()
                .any(|(o, m)| !*m && matches!(o.kind, SegKind::Free | SegKind::Unmap))
        {
            return None;
        }
        self.window[pos].1 = true;
        Some(self.window[pos].0.addr)
    }

    /// Whether the run's next step here was to release memory or to fail (so the model's
    /// attempt to get new memory must fail too).
    fn real_failed_first(&self) -> bool {
        self.window
            .iter()
            .any(|(o, m)| !*m && matches!(o.kind, SegKind::Free | SegKind::Unmap))
            || (self.window_ooms
                && !self
                    .window
                    .iter()
                    .any(|(o, m)| !*m && matches!(o.kind, SegKind::Alloc | SegKind::Map)))
    }

    fn synthetic(&mut self, size: u64) -> u64 {
        let a = self.next_synthetic;
        self.next_synthetic += size.div_ceil(2 << 20) * (2 << 20) + (2 << 20);
        a
    }

    fn extra(&mut self, kind: SegKind, addr: u64, size: u64) {
        self.unmatched.push(SegOp {
            kind,
            addr,
            size,
            entry: None,
        });
    }
}

impl Backing for ReplayBacking {
    fn malloc(&mut self, size: u64, _stream: StreamId) -> Option<u64> {
        if let Some(a) = self.take(SegKind::Alloc, None, size) {
            return Some(a);
        }
        if self.real_failed_first() {
            return None;
        }
        let a = self.synthetic(size);
        self.extra(SegKind::Alloc, a, size);
        Some(a)
    }

    fn free(&mut self, addr: u64, size: u64) {
        if self.take(SegKind::Free, Some(addr), size).is_none() {
            self.extra(SegKind::Free, addr, size);
        }
    }

    fn reserve_virtual(&mut self, size: u64, _stream: StreamId) -> Option<u64> {
        // A new range's first mapping is at its start: take the address the run mapped.
        if let Some((o, _)) = self
            .window
            .iter()
            .find(|(o, m)| !*m && o.kind == SegKind::Map)
        {
            return Some(o.addr);
        }
        Some(self.synthetic(size))
    }

    fn map(&mut self, addr: u64, size: u64) -> bool {
        if self.take(SegKind::Map, Some(addr), size).is_some() {
            return true;
        }
        if self.real_failed_first() {
            return false;
        }
        self.extra(SegKind::Map, addr, size);
        true
    }

    fn unmap(&mut self, addr: u64, size: u64) {
        if self.take(SegKind::Unmap, Some(addr), size).is_none() {
            self.extra(SegKind::Unmap, addr, size);
        }
    }

    fn release_virtual(&mut self, _addr: u64, _size: u64) {}

    fn record_event(&mut self, _stream: StreamId) -> EventId {
        self.next_event += 1;
        EventId(self.next_event)
    }

    /// Pending frees complete where the trace shows their `free_completed`, not before.
    fn event_done(&mut self, event: EventId) -> bool {
        self.done_events.contains(&event)
    }

    fn synchronize_event(&mut self, event: EventId) {
        self.done_events.insert(event);
    }

    fn mem_info(&self) -> (u64, u64) {
        (self.capacity, self.capacity)
    }

    fn now_us(&mut self) -> i64 {
        self.clock += 1;
        self.clock
    }
}
