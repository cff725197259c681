//! The page's state: signals the views read, and the actions that ask the worker for data.
//! A view reads `AppState` from context; a new view adds a signal here and a request kind in
//! `protocol`, and fetches in `refresh_device` (or on demand) like the segment view does.

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsValue;

use crate::client::WorkerClient;
use crate::protocol::{DiagnosticsView, FileSummary, Progress, Request, Response, SegmentsView};

/// A file being opened: shown with a progress bar until the worker answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Opening {
    pub name: String,
    pub size: Option<u64>,
    pub progress: Option<Progress>,
}

/// What the pointer is over in the segment view (indices into `SegmentsView::segments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hover {
    Block { segment: usize, block: usize },
    Segment { segment: usize },
}

/// One file of a multi-file open (a rank of a distributed job), parsed in its own worker.
#[derive(Debug, Clone, PartialEq)]
pub struct Rank {
    pub rank: u32,
    pub name: String,
    pub status: RankStatus,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RankStatus {
    Opening(Opening),
    Open(FileSummary),
    Failed(String),
}

#[derive(Clone, Copy)]
pub struct AppState {
    /// One worker per rank; the first is also the one-file page's worker.
    clients: StoredValue<Vec<Option<WorkerClient>>, LocalStorage>,
    /// Bumped when the shown rank or the set of workers changes: replies asked for before are
    /// dropped (they describe another rank).
    generation: StoredValue<u64>,
    /// Bumped by each multi-file open: a rank's open reply from an earlier one is dropped.
    batch: StoredValue<u64>,
    /// Index into `clients` (and `ranks`) of the rank the views show.
    pub active: RwSignal<usize>,
    /// The files of a multi-file open; empty when one file (or none) is open.
    pub ranks: RwSignal<Vec<Rank>>,
    pub opening: RwSignal<Option<Opening>>,
    /// The last open's failure; cleared by the next successful open.
    pub load_error: RwSignal<Option<String>>,
    pub file: RwSignal<Option<FileSummary>>,
    pub device: RwSignal<Option<i64>>,
    pub segments: RwSignal<Option<Arc<SegmentsView>>>,
    pub diagnostics: RwSignal<Option<DiagnosticsView>>,
    pub hover: RwSignal<Option<Hover>>,
}

impl AppState {
    /// Spawns the worker and wires progress and failures into the signals.
    pub fn start() -> AppState {
        let state = AppState {
            clients: StoredValue::new_local(Vec::new()),
            generation: StoredValue::new(0),
            batch: StoredValue::new(0),
            active: RwSignal::new(0),
            ranks: RwSignal::new(Vec::new()),
            opening: RwSignal::new(None),
            load_error: RwSignal::new(None),
            file: RwSignal::new(None),
            device: RwSignal::new(None),
            segments: RwSignal::new(None),
            diagnostics: RwSignal::new(None),
            hover: RwSignal::new(None),
        };
        let client = state.spawn_worker(0);
        state.clients.set_value(vec![client]);
        state
    }

    /// Worker `index`'s progress and failures go to its rank when several files are open,
    /// else to the page's progress bar and error.
    fn spawn_worker(&self, index: usize) -> Option<WorkerClient> {
        let (ranks, opening, load_error) = (self.ranks, self.opening, self.load_error);
        let client = WorkerClient::spawn(
            move |p| {
                if ranks.with_untracked(|r| r.is_empty()) {
                    opening.update(|o| {
                        if let Some(o) = o {
                            o.progress = Some(p)
                        }
                    })
                } else {
                    ranks.update(|r| {
                        if let Some(Rank {
                            status: RankStatus::Opening(o),
                            ..
                        }) = r.get_mut(index)
                        {
                            o.progress = Some(p)
                        }
                    })
                }
            },
            move |message| {
                if ranks.with_untracked(|r| r.is_empty()) {
                    opening.set(None);
                    load_error.set(Some(message));
                } else {
                    ranks.update(|r| {
                        if let Some(rank) = r.get_mut(index) {
                            rank.status = RankStatus::Failed(message)
                        }
                    })
                }
            },
        );
        match client {
            Ok(c) => Some(c),
            Err(message) => {
                load_error.set(Some(message));
                None
            }
        }
    }

    /// Sends a request to the worker; `on_reply` runs with its answer.
    pub fn request(
        &self,
        request: Request,
        attachment: Option<JsValue>,
        on_reply: impl FnOnce(Response) + 'static,
    ) {
        let index = self.active.get_untracked();
        let generation = self.generation.get_value();
        let me = *self;
        self.request_to(index, request, attachment, move |r| {
            if me.generation.get_value() == generation {
                on_reply(r)
            }
        });
    }

    /// As `request`, for a slow analysis the first paint and the timeline must not wait for:
    /// sent when the worker is otherwise idle, a newer one of its kind replacing a held one
    /// (`WorkerClient::request_background`).
    pub fn request_background(&self, request: Request, on_reply: impl FnOnce(Response) + 'static) {
        let index = self.active.get_untracked();
        let generation = self.generation.get_value();
        let me = *self;
        self.clients
            .with_value(|c| match c.get(index).and_then(|c| c.as_ref()) {
                Some(c) => c.request_background(request, move |r| {
                    if me.generation.get_value() == generation {
                        on_reply(r)
                    }
                }),
                None => self
                    .load_error
                    .set(Some("the worker is not running".into())),
            });
    }

    /// Asks rank `index`'s worker (not necessarily the shown rank's), e.g. to compare ranks.
    pub fn request_rank(
        &self,
        index: usize,
        request: Request,
        on_reply: impl FnOnce(Response) + 'static,
    ) {
        let batch = self.batch.get_value();
        let me = *self;
        self.request_to(index, request, None, move |r| {
            if me.batch.get_value() == batch {
                on_reply(r)
            }
        });
    }

    /// Sends a request to worker `index`, whichever rank is shown.
    fn request_to(
        &self,
        index: usize,
        request: Request,
        attachment: Option<JsValue>,
        on_reply: impl FnOnce(Response) + 'static,
    ) {
        self.clients
            .with_value(|c| match c.get(index).and_then(|c| c.as_ref()) {
                Some(c) => c.request(&request, attachment.as_ref(), on_reply),
                None => self
                    .load_error
                    .set(Some("the worker is not running".into())),
            });
    }

    /// Back to one file after several: the first worker stays, the others stop.
    fn leave_ranks(&self) {
        if self.ranks.with_untracked(|r| r.is_empty()) {
            return;
        }
        self.ranks.set(Vec::new());
        self.clients.update_value(|c| {
            for w in c.drain(1..).flatten() {
                w.terminate();
            }
        });
        self.active.set(0);
        self.generation.update_value(|g| *g += 1);
        self.batch.update_value(|b| *b += 1);
    }

    /// Opens several files at once, one per rank, each parsed in its own worker; the first
    /// to open is shown. One file opens as before.
    pub fn open_files(&self, files: Vec<web_sys::File>) {
        if files.len() <= 1 {
            if let Some(file) = files.into_iter().next() {
                self.open_file(file);
            }
            return;
        }
        let names: Vec<String> = files.iter().map(|f| f.name()).collect();
        let numbers = crate::rank_names::rank_numbers(&names);
        let mut files: Vec<(u32, web_sys::File)> = numbers.into_iter().zip(files).collect();
        files.sort_by_key(|(rank, _)| *rank);

        self.clients.update_value(|c| {
            for w in c.drain(..).flatten() {
                w.terminate();
            }
        });
        self.generation.update_value(|g| *g += 1);
        self.batch.update_value(|b| *b += 1);
        self.active.set(0);
        self.opening.set(None);
        self.load_error.set(None);
        self.file.set(None);
        self.select_device(None);
        self.ranks.set(
            files
                .iter()
                .map(|(rank, f)| Rank {
                    rank: *rank,
                    name: f.name(),
                    status: RankStatus::Opening(Opening {
                        name: f.name(),
                        size: Some(f.size() as u64),
                        progress: None,
                    }),
                })
                .collect(),
        );
        let clients = (0..files.len()).map(|i| self.spawn_worker(i)).collect();
        self.clients.set_value(clients);
        let batch = self.batch.get_value();
        for (index, (_, file)) in files.into_iter().enumerate() {
            let (name, size) = (file.name(), file.size() as u64);
            let me = *self;
            self.request_to(
                index,
                Request::OpenFile { name, size },
                Some(file.into()),
                move |r| me.finish_rank(index, batch, r),
            );
        }
    }

    fn finish_rank(&self, index: usize, batch: u64, response: Response) {
        if self.batch.get_value() != batch {
            return;
        }
        let status = match response {
            Response::Opened(summary) => RankStatus::Open(summary),
            Response::Failed { message } => RankStatus::Failed(message),
            other => RankStatus::Failed(format!("unexpected answer to an open: {other:?}")),
        };
        let opened = matches!(status, RankStatus::Open(_));
        self.ranks.update(|r| {
            if let Some(rank) = r.get_mut(index) {
                rank.status = status
            }
        });
        // The first rank to open is shown until the user picks another.
        if opened && self.file.get_untracked().is_none() {
            self.show_rank(index);
        }
    }

    /// Shows rank `index` (already parsed in its worker) in every view; keeps the device when
    /// the rank has it.
    pub fn show_rank(&self, index: usize) {
        let summary = self.ranks.with_untracked(|r| match r.get(index) {
            Some(Rank {
                status: RankStatus::Open(s),
                ..
            }) => Some(s.clone()),
            _ => None,
        });
        let Some(summary) = summary else { return };
        self.generation.update_value(|g| *g += 1);
        self.active.set(index);
        let current = self.device.get_untracked();
        let device = current
            .filter(|d| summary.devices.iter().any(|s| s.device == *d))
            .or_else(|| summary.devices.first().map(|d| d.device));
        self.file.set(Some(summary));
        self.select_device(device);
    }

    pub fn open_file(&self, file: web_sys::File) {
        self.leave_ranks();
        let (name, size) = (file.name(), file.size() as u64);
        self.start_open(name.clone(), Some(size));
        let me = *self;
        self.request(
            Request::OpenFile { name, size },
            Some(file.into()),
            move |r| me.finish_open(r),
        );
    }

    /// Opens `url` resolved against the page's address (so `?url=x.pickle` is relative to it).
    pub fn open_url(&self, url: &str) {
        let absolute = document()
            .base_uri()
            .ok()
            .flatten()
            .and_then(|base| web_sys::Url::new_with_base(url, &base).ok())
            .map(|u| u.href())
            .unwrap_or_else(|| url.to_string());
        self.leave_ranks();
        self.start_open(url.to_string(), None);
        let me = *self;
        self.request(Request::OpenUrl { url: absolute }, None, move |r| {
            me.finish_open(r)
        });
    }

    fn start_open(&self, name: String, size: Option<u64>) {
        self.opening.set(Some(Opening {
            name,
            size,
            progress: None,
        }));
    }

    fn finish_open(&self, response: Response) {
        self.opening.set(None);
        match response {
            Response::Opened(summary) => {
                self.load_error.set(None);
                let device = summary.opening_device();
                self.file.set(Some(summary));
                self.select_device(device);
            }
            Response::Failed { message } => self.load_error.set(Some(message)),
            other => self
                .load_error
                .set(Some(format!("unexpected answer to an open: {other:?}"))),
        }
    }

    /// Shows `device` (None: nothing) and fetches its views.
    pub fn select_device(&self, device: Option<i64>) {
        self.device.set(device);
        self.hover.set(None);
        let Some(device) = device else {
            self.segments.set(None);
            self.diagnostics.set(None);
            return;
        };
        let me = *self;
        self.request(Request::Segments { device }, None, move |r| match r {
            Response::Segments(v) if me.device.get_untracked() == Some(v.device) => {
                me.segments.set(Some(Arc::new(v)))
            }
            Response::Failed { message } => me.load_error.set(Some(message)),
            _ => {}
        });
        self.request(Request::Diagnostics { device }, None, move |r| match r {
            Response::Diagnostics(v) if me.device.get_untracked() == Some(v.device) => {
                me.diagnostics.set(Some(v))
            }
            Response::Failed { message } => me.load_error.set(Some(message)),
            _ => {}
        });
    }
}
