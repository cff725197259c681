//! Several files open as one job's ranks (hundreds to thousands). A bounded pool of workers
//! (`worker_pool`) turns each file into a `RankSummary` for the fleet overview and drops its
//! snapshot; only the ranks the user looks at are parsed again, from their `File`, into one of a
//! few detail workers (`rank_lru`), and the views talk to the one shown.

use leptos::prelude::*;
use memsnap_core::analysis::rank_summary::RankSummary;

use super::fleet::{FleetProgress, Inner, OpenRanks, Rank, RankStatus};
use super::AppState;
use crate::protocol::{FileSummary, Request, Response, Stage};
use crate::rank_lru::{RankLru, DETAIL_SLOTS};
use crate::worker_pool::{pool_size, Job, WorkerPool};

impl AppState {
    /// Opens several files as ranks: summaries from the pool, the first rank to open shown.
    pub(super) fn open_ranks(&self, files: Vec<web_sys::File>) {
        let names: Vec<String> = files.iter().map(|f| f.name()).collect();
        let numbers = crate::rank_names::rank_numbers(&names);
        let mut files: Vec<(u32, web_sys::File)> = numbers.into_iter().zip(files).collect();
        files.sort_by_key(|(rank, _)| *rank);

        crate::rehearsal::end();
        self.stop_ranks();
        self.generation.update_value(|g| *g += 1);
        self.opening.set(None);
        self.load_error.set(None);
        self.forget_kept_error();
        self.file.set(None);
        self.select_device(None);

        let fleet = self.fleet;
        let ranks: Vec<Rank> = files
            .iter()
            .map(|(rank, f)| Rank {
                rank: *rank,
                name: f.name(),
                size: f.size() as u64,
                status: RankStatus::Waiting,
            })
            .collect();
        let cores = web_sys::window().map_or(1.0, |w| w.navigator().hardware_concurrency());
        let workers = pool_size(cores, files.len());
        fleet.reset_progress(FleetProgress {
            total: ranks.len(),
            bytes_total: ranks.iter().map(|r| r.size).sum(),
            workers,
            ..FleetProgress::default()
        });
        let jobs = files
            .iter()
            .zip(&ranks)
            .enumerate()
            .map(|(index, ((rank, file), r))| Job {
                index,
                rank: *rank,
                file: file.clone(),
                size: r.size,
            })
            .collect();
        fleet.ranks.set(ranks);
        fleet.open.set(OpenRanks::default());
        fleet.shown.set(None);

        let me = *self;
        let pool = WorkerPool::start(
            workers,
            jobs,
            move |index, p| {
                fleet.update_progress(|f| {
                    match f.in_flight.iter_mut().find(|(i, _)| *i == index) {
                        Some((_, q)) => *q = p,
                        None => f.in_flight.push((index, p)),
                    }
                    f.bytes_read = bytes_read(f);
                });
            },
            move |index, result| me.rank_summarised(index, result),
        );
        fleet.inner.update_value(|i| {
            i.files = files.into_iter().map(|(_, f)| f).collect();
            i.pool = Some(pool);
            i.lru = Some(RankLru::new(DETAIL_SLOTS));
            i.held = vec![None; DETAIL_SLOTS];
            i.started_ms = crate::perf::now();
        });
    }

    fn rank_summarised(&self, index: usize, result: Result<RankSummary, String>) {
        let fleet = self.fleet;
        let opened = result.is_ok();
        let size = fleet
            .ranks
            .with_untracked(|r| r.get(index).map_or(0, |r| r.size));
        let status = match result {
            Ok(summary) => {
                fleet.open.update_untracked(|o| o.push(index, summary));
                RankStatus::Open
            }
            Err(message) => RankStatus::Failed(message),
        };
        fleet.ranks.update_untracked(|r| {
            if let Some(rank) = r.get_mut(index) {
                rank.status = status
            }
        });
        let started = fleet.inner.with_value(|i| i.started_ms);
        let all_in = fleet.update_progress(|f| {
            f.in_flight.retain(|(i, _)| *i != index);
            if opened {
                f.loaded += 1
            } else {
                f.failed += 1
            }
            f.bytes_finished += size;
            f.bytes_read = bytes_read(f);
            if f.finished() == f.total {
                f.elapsed_ms = Some(crate::perf::now() - started);
            }
        });
        if all_in {
            fleet.ranks.notify();
            fleet.open.notify();
            // The last redraw is this one: a pending one would only redraw the same again.
            fleet.inner.update_value(|i| {
                i.pool = None;
                i.redraw = None;
            });
        } else {
            fleet.schedule_redraw();
        }
        // The first rank to open is shown until the user picks another.
        if opened && fleet.shown.get_untracked().is_none() {
            self.show_rank(index);
        }
    }

    /// Shows rank `index` in every view: at once when a detail worker still holds it, else after
    /// parsing its file again in the least recently used one (never the one on screen, whose
    /// views may still be asking it).
    pub fn show_rank(&self, index: usize) {
        let fleet = self.fleet;
        let Some(file) = fleet.inner.with_value(|i| i.files.get(index).cloned()) else {
            return;
        };
        fleet.shown.set(Some(index));
        let active = self.active.get_untracked();
        let on_screen = self.file.with_untracked(|f| f.is_some()).then_some(active);
        let Some(place) = fleet
            .inner
            .try_update_value(|i| i.lru.as_mut().map(|l| l.place(index, on_screen)))
            .flatten()
        else {
            return;
        };
        if place.held {
            // Open already, or its open still running (its answer will show it).
            if let Some(summary) = fleet.inner.with_value(|i| i.held[place.slot].clone()) {
                self.opening.set(None);
                self.activate(place.slot, summary);
            }
            return;
        }
        let slot = place.slot;
        fleet.inner.update_value(|i| i.held[slot] = None);
        self.clients.update_value(|c| {
            while c.len() <= slot {
                c.push(None);
            }
        });
        if self.clients.with_value(|c| c[slot].is_none()) {
            let client = self.spawn_worker();
            self.clients.update_value(|c| c[slot] = client);
        }
        let (name, size) = (file.name(), file.size() as u64);
        self.start_open(name.clone(), Some(size));
        let me = *self;
        self.request_to(
            slot,
            // A rank's detail worker may open it before it is shown: no first screen.
            Request::OpenFile {
                name,
                size,
                first_screen: None,
            },
            Some(file.into()),
            move |r| me.rank_opened(slot, index, r),
        );
    }

    fn rank_opened(&self, slot: usize, index: usize, response: Response) {
        let fleet = self.fleet;
        let still_held = fleet
            .inner
            .with_value(|i| i.lru.as_ref().and_then(|l| l.rank_in(slot)) == Some(index));
        if !still_held {
            return;
        }
        let wanted = fleet.shown.get_untracked() == Some(index);
        match response {
            Response::Opened { summary, .. } => {
                fleet
                    .inner
                    .update_value(|i| i.held[slot] = Some(summary.clone()));
                if wanted {
                    self.opening.set(None);
                    self.activate(slot, summary);
                }
            }
            other => {
                fleet.inner.update_value(|i| {
                    if let Some(l) = i.lru.as_mut() {
                        l.clear(slot)
                    }
                });
                if wanted {
                    self.opening.set(None);
                    self.open_failed(match other {
                        Response::Failed { message } => message,
                        other => format!("unexpected answer to an open: {other:?}"),
                    });
                }
            }
        }
    }

    /// The views show detail slot `slot`'s file: on its out-of-memory device when it has one
    /// (as a single file opens), else on the device shown before when the file has it.
    fn activate(&self, slot: usize, summary: FileSummary) {
        self.generation.update_value(|g| *g += 1);
        self.active.set(slot);
        self.load_error.set(self.kept_error.get_value());
        let current = self.device.get_untracked();
        let oom = summary.devices.iter().find(|d| d.first_oom.is_some());
        let device = oom
            .map(|d| d.device)
            .or_else(|| current.filter(|d| summary.devices.iter().any(|s| s.device == *d)))
            .or_else(|| summary.opening_device());
        self.file.set(Some(summary));
        self.select_device(device);
    }

    /// Stops the pool and every detail worker but the first (the one-file page's worker).
    fn stop_ranks(&self) {
        let fleet = self.fleet;
        fleet.inner.update_value(|i| {
            if let Some(pool) = i.pool.take() {
                pool.stop();
            }
            *i = Inner::default();
        });
        self.clients.update_value(|c| {
            for w in c.drain(1..).flatten() {
                w.terminate();
            }
        });
        self.active.set(0);
    }

    /// Back to one file after several.
    pub(super) fn leave_ranks(&self) {
        if self.fleet.ranks.with_untracked(|r| r.is_empty()) {
            return;
        }
        self.stop_ranks();
        self.fleet.ranks.set(Vec::new());
        self.fleet.open.set(OpenRanks::default());
        self.fleet.reset_progress(FleetProgress::default());
        self.fleet.shown.set(None);
        self.generation.update_value(|g| *g += 1);
        if self
            .clients
            .with_value(|c| c.first().is_none_or(|w| w.is_none()))
        {
            let client = self.spawn_worker();
            self.clients.set_value(vec![client]);
        }
    }
}

/// Bytes read so far: all of each finished file, and what the workers have read of theirs.
fn bytes_read(f: &FleetProgress) -> u64 {
    let in_flight: u64 = f
        .in_flight
        .iter()
        .map(|(_, p)| match p.stage {
            Stage::Reading => p.done,
            Stage::Parsing => p.total.unwrap_or(p.done),
        })
        .sum();
    f.bytes_finished + in_flight
}
