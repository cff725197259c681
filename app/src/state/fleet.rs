//! A set of files open as one job's ranks: the ranks, their summaries and the set's progress
//! (the signals the fleet views read), and the overview's redraw schedule. What opens and
//! parses them is `state::ranks`.

use gloo_timers::callback::Timeout;
use leptos::prelude::*;
use memsnap_core::analysis::rank_summary::RankSummary;

use crate::protocol::{FileSummary, Progress};
use crate::rank_lru::RankLru;
use crate::worker_pool::WorkerPool;

/// One file of a set: a rank of a distributed job.
#[derive(Debug, Clone, PartialEq)]
pub struct Rank {
    pub rank: u32,
    pub name: String,
    pub size: u64,
    pub status: RankStatus,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RankStatus {
    /// Queued for, or being parsed by, the pool.
    Waiting,
    /// Summarised: its summary is in `FleetState::open`.
    Open,
    Failed(String),
}

/// The summaries of the ranks open so far, in the order they came (one slice, as
/// `analysis::fleet` takes them), and each one's index into `FleetState::ranks`. A summary's
/// reduced timelines (24 bytes a point, ~6 KB a rank: most of what a rank costs the page) are
/// kept only as the overlay draws them, `curves`, at 8 bytes a point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OpenRanks {
    pub index: Vec<usize>,
    pub summaries: Vec<RankSummary>,
    pub curves: Vec<Curve>,
}

/// Reserved bytes over the trace of a rank's peak device: each point's place in the trace
/// (0..1 of its entries) and its highest reserved bytes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Curve {
    pub points: Box<[(f32, f32)]>,
    /// The highest reserved bytes, exactly; `None` when the rank has no device.
    pub highest: Option<u64>,
}

impl Curve {
    fn of(summary: &RankSummary) -> Curve {
        let Some(d) = summary.peak_device() else {
            return Curve::default();
        };
        let span = d.timeline.last().map_or(1, |p| p.entry.max(1)) as f64;
        Curve {
            points: (d.timeline.iter())
                .map(|p| ((p.entry as f64 / span) as f32, p.reserved as f32))
                .collect(),
            highest: Some(d.timeline.iter().map(|p| p.reserved).max().unwrap_or(0)),
        }
    }
}

impl OpenRanks {
    /// Keeps a rank's summary, its timelines as a curve.
    pub fn push(&mut self, index: usize, mut summary: RankSummary) {
        self.curves.push(Curve::of(&summary));
        for d in &mut summary.devices {
            d.timeline = Vec::new();
        }
        self.index.push(index);
        self.summaries.push(summary);
    }

    /// The summary of rank `index` (into `FleetState::ranks`), if it is open.
    pub fn get(&self, index: usize) -> Option<&RankSummary> {
        let at = self.index.iter().position(|&i| i == index)?;
        self.summaries.get(at)
    }
}

/// The whole set's progress.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FleetProgress {
    pub total: usize,
    pub loaded: usize,
    pub failed: usize,
    pub bytes_total: u64,
    /// Bytes of the files finished (open or failed).
    pub bytes_finished: u64,
    /// Those plus what the workers have read of the files in flight.
    pub bytes_read: u64,
    /// The files the pool's workers are on now: (index, progress).
    pub in_flight: Vec<(usize, Progress)>,
    /// Workers in the pool.
    pub workers: usize,
    /// From the pick to the last summary (`perf::now()` milliseconds), once all are in.
    pub elapsed_ms: Option<f64>,
}

impl FleetProgress {
    pub fn finished(&self) -> usize {
        self.loaded + self.failed
    }
}

/// While summaries arrive, the overview (its bars and the overlaid timelines) is redrawn once the
/// ranks open have grown by half since it was last drawn (at least `REDRAW_STEP` ranks), no
/// sooner than `REDRAW_MS` after the summary that made it due, and otherwise every `STALL_MS`
/// while any came in. Each redraw makes every bar again, and the page's collector lets the dead
/// ones pile up: redrawn every 0.25 s + 0.5 ms per rank, a 4,096-rank set grew the renderer by
/// ~300 MB while it loaded and took twice as long as with no redraw (README, "A whole job").
/// Growing by half makes about 3 × N bars in all; a 10 s `STALL_MS` redrew thousands of bars
/// often enough to bring most of that back.
const REDRAW_MS: u32 = 250;
const REDRAW_STEP: usize = 16;
const STALL_MS: u32 = 30_000;

/// The set's progress reaches the page at most this often while it loads, and at once when the
/// last file is in. It changes with every message from the pool's workers (several per file),
/// and each change cost the page a frame: 376 frames of 7 ms style, layout and paint on the main
/// thread while 1,024 ranks loaded in 7.5 s (a DevTools trace), on the cores the workers parse on.
const PROGRESS_MS: u32 = 200;

#[derive(Clone, Copy)]
pub struct FleetState {
    /// The set's ranks in rank order; empty when one file (or none) is open. Updated without
    /// notifying per summary, then notified now and then (see `schedule_redraw`).
    pub ranks: RwSignal<Vec<Rank>>,
    /// Notified with `ranks`.
    pub open: RwSignal<OpenRanks>,
    /// What the page shows of the set's progress: `Inner::progress`, published now and then
    /// (see `PROGRESS_MS`).
    pub progress: RwSignal<FleetProgress>,
    /// The rank (index into `ranks`) the detail views show or are opening.
    pub shown: RwSignal<Option<usize>>,
    pub(super) inner: StoredValue<Inner, LocalStorage>,
}

#[derive(Default)]
pub(super) struct Inner {
    pub(super) files: Vec<web_sys::File>,
    pub(super) pool: Option<WorkerPool>,
    pub(super) lru: Option<RankLru>,
    /// Each detail slot's open file, once it answered.
    pub(super) held: Vec<Option<FileSummary>>,
    pub(super) started_ms: f64,
    /// The redraw pending, and how long it was set to wait.
    pub(super) redraw: Option<(Timeout, u32)>,
    /// Ranks open at the last redraw.
    pub(super) drawn: usize,
    /// The set's progress as of the last message; `progress` is its last published copy.
    pub(super) progress: FleetProgress,
    /// The publication of `progress` pending.
    pub(super) progress_due: Option<Timeout>,
}

impl FleetState {
    pub fn new() -> FleetState {
        FleetState {
            ranks: RwSignal::new(Vec::new()),
            open: RwSignal::new(OpenRanks::default()),
            progress: RwSignal::new(FleetProgress::default()),
            shown: RwSignal::new(None),
            inner: StoredValue::new_local(Inner::default()),
        }
    }

    /// Starts over with `progress`, shown at once.
    pub(super) fn reset_progress(&self, progress: FleetProgress) {
        self.inner.update_value(|i| {
            i.progress = progress.clone();
            i.progress_due = None;
        });
        self.progress.set(progress);
    }

    /// Changes the set's progress; the page sees it within `PROGRESS_MS`, or at once once every
    /// file is in (`elapsed_ms` set). Returns whether every file is in.
    pub(super) fn update_progress(&self, change: impl FnOnce(&mut FleetProgress)) -> bool {
        let me = *self;
        let all_in = self.inner.try_update_value(|i| {
            change(&mut i.progress);
            let all_in = i.progress.elapsed_ms.is_some();
            if all_in {
                i.progress_due = None;
            } else if i.progress_due.is_none() {
                i.progress_due = Some(Timeout::new(PROGRESS_MS, move || me.publish_progress()));
            }
            all_in
        }) == Some(true);
        if all_in {
            self.publish_progress();
        }
        all_in
    }

    fn publish_progress(&self) {
        let Some(progress) = self.inner.try_update_value(|i| {
            i.progress_due = None;
            i.progress.clone()
        }) else {
            return;
        };
        self.progress.set(progress);
    }

    pub(super) fn schedule_redraw(&self) {
        let me = *self;
        let open = self.open.with_untracked(|o| o.index.len());
        self.inner.update_value(|i| {
            let due = open >= i.drawn + (i.drawn / 2).max(REDRAW_STEP);
            let wait = if due { REDRAW_MS } else { STALL_MS };
            // A sooner one pending stays; a later one is replaced (dropping a Timeout cancels it).
            if i.redraw.as_ref().is_some_and(|(_, w)| *w <= wait) {
                return;
            }
            let timeout = Timeout::new(wait, move || {
                let open = me.open.with_untracked(|o| o.index.len());
                me.inner.update_value(|i| {
                    i.redraw = None;
                    i.drawn = open;
                });
                me.ranks.notify();
                me.open.notify();
            });
            i.redraw = Some((timeout, wait));
        });
    }
}

impl Default for FleetState {
    fn default() -> Self {
        FleetState::new()
    }
}
