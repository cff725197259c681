//! The page's state: signals the views read, and the actions that ask the worker for data.
//! A view reads `AppState` from context; a new view adds a signal here and a request kind in
//! `protocol`, and fetches in `refresh_device` (or on demand) like the segment view does.

use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::JsValue;

mod fleet;
mod ranks;
mod urls;

pub use fleet::{Curve, FleetProgress, FleetState, OpenRanks, Rank, RankStatus};

use crate::client::WorkerClient;
use crate::protocol::analysis::{TimelineRequest, TimelineView};
use crate::protocol::{
    DiagnosticsView, FileSummary, FirstScreen, PlotSize, Progress, Request, Response, SegmentsView,
};

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

#[derive(Clone, Copy)]
pub struct AppState {
    /// The workers holding a full snapshot: the one-file page's, or with several files the
    /// detail workers of the ranks looked at last (`state::ranks`).
    clients: StoredValue<Vec<Option<WorkerClient>>, LocalStorage>,
    /// Bumped when the shown rank or the set of workers changes: replies asked for before are
    /// dropped (they describe another rank).
    generation: StoredValue<u64>,
    /// Index into `clients` of the worker whose file the views show.
    pub active: RwSignal<usize>,
    /// Several files open as ranks: their summaries, progress and the rank shown.
    pub fleet: FleetState,
    pub opening: RwSignal<Option<Opening>>,
    /// The last open's failure; cleared by the next successful open.
    pub load_error: RwSignal<Option<String>>,
    /// A failure about the files being opened that their success must not clear: the URLs of
    /// a job that could not be fetched (`urls`). Shown again when the file or a rank opens;
    /// forgotten when another open starts.
    kept_error: StoredValue<Option<String>>,
    pub file: RwSignal<Option<FileSummary>>,
    pub device: RwSignal<Option<i64>>,
    pub segments: RwSignal<Option<Arc<SegmentsView>>>,
    pub diagnostics: RwSignal<Option<DiagnosticsView>>,
    pub hover: RwSignal<Option<Hover>>,
    /// The address of the block clicked in the segment view: the details show it until it is
    /// clicked again, whatever the pointer is over; the address keeps it.
    pub pinned: RwSignal<Option<u64>>,
    /// The timeline's plot size, set by the timeline view: an open asks for its first screen
    /// at this size.
    pub timeline_plot: StoredValue<Option<PlotSize>>,
    /// The first screen's timeline, until the timeline view asks for it (`take_timeline`).
    first_timeline: StoredValue<Option<(TimelineRequest, TimelineView)>>,
    /// The page's rehearsal of its warm-up snapshot (`rehearsal`), not the page itself.
    rehearsal: bool,
}

impl AppState {
    /// Spawns the worker and wires progress and failures into the signals.
    pub fn start() -> AppState {
        let state = AppState::with(StoredValue::new_local(Vec::new()), RwSignal::new(0), false);
        let client = state.spawn_worker();
        state.clients.set_value(vec![client]);
        state
    }

    /// The state of a rehearsal (`rehearsal`): its own signals, `main`'s worker.
    pub fn rehearsing(main: &AppState) -> AppState {
        AppState::with(main.clients, main.active, true)
    }

    /// Nothing open, on these workers.
    fn with(
        clients: StoredValue<Vec<Option<WorkerClient>>, LocalStorage>,
        active: RwSignal<usize>,
        rehearsal: bool,
    ) -> AppState {
        AppState {
            clients,
            generation: StoredValue::new(0),
            active,
            fleet: FleetState::new(),
            opening: RwSignal::new(None),
            load_error: RwSignal::new(None),
            kept_error: StoredValue::new(None),
            file: RwSignal::new(None),
            device: RwSignal::new(None),
            segments: RwSignal::new(None),
            diagnostics: RwSignal::new(None),
            hover: RwSignal::new(None),
            pinned: RwSignal::new(None),
            timeline_plot: StoredValue::new(None),
            first_timeline: StoredValue::new(None),
            rehearsal,
        }
    }

    /// For views that are gone (a rehearsal's): the replies still due to them are dropped, and
    /// their background requests not sent.
    pub fn abandon(&self) {
        self.generation.update_value(|g| *g += 1);
        self.clients
            .with_value(|c| c.iter().flatten().for_each(WorkerClient::drop_background));
    }

    /// Called by a view once it has drawn data of the open file: ends the page's load-to-first-
    /// paint measure (`perf`), or the rehearsal.
    pub fn painted(&self, view: crate::perf::View) {
        if self.rehearsal {
            crate::rehearsal::painted(view)
        } else {
            crate::perf::painted(view)
        }
    }

    /// A worker whose open progress and failures go to the page's progress bar and error.
    fn spawn_worker(&self) -> Option<WorkerClient> {
        let (opening, load_error) = (self.opening, self.load_error);
        let client = WorkerClient::spawn(
            move |p| {
                opening.update(|o| {
                    if let Some(o) = o {
                        o.progress = Some(p)
                    }
                })
            },
            move |message| {
                opening.set(None);
                load_error.set(Some(message));
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

    /// Opens the snapshots among a folder's files (`folder_files`): its logs and configs are
    /// not ranks. An empty folder says so.
    pub fn open_folder(&self, files: Vec<web_sys::File>) {
        let names: Vec<String> = files.iter().map(|f| f.name()).collect();
        let keep = crate::folder_files::snapshot_files(&names);
        if keep.is_empty() {
            self.load_error
                .set(Some("no files to open: the folder is empty".into()));
            return;
        }
        self.open_files(keep.into_iter().map(|i| files[i].clone()).collect());
    }

    /// Opens several files at once, one per rank (`state::ranks`); one file opens as before.
    pub fn open_files(&self, files: Vec<web_sys::File>) {
        if files.len() <= 1 {
            if let Some(file) = files.into_iter().next() {
                self.open_file(file);
            }
            return;
        }
        self.open_ranks(files);
    }

    pub fn open_file(&self, file: web_sys::File) {
        let (name, size) = (file.name(), file.size() as u64);
        self.begin_open(name.clone(), Some(size));
        let me = *self;
        let first_screen = self.timeline_plot.get_value();
        self.request(
            Request::OpenFile {
                name,
                size,
                first_screen,
            },
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
        self.begin_open(url.to_string(), None);
        let me = *self;
        let request = Request::OpenUrl {
            url: absolute,
            first_screen: self.timeline_plot.get_value(),
        };
        self.request(request, None, move |r| me.finish_open(r));
    }

    /// A new open of the user's (a file, an address, a job's addresses): any job open is
    /// left, and the kept error, about other files, forgotten.
    pub(super) fn begin_open(&self, name: String, size: Option<u64>) {
        self.leave_ranks();
        self.forget_kept_error();
        self.start_open(name, size);
    }

    fn start_open(&self, name: String, size: Option<u64>) {
        crate::rehearsal::end();
        self.first_timeline.set_value(None);
        self.opening.set(Some(Opening {
            name,
            size,
            progress: None,
        }));
    }

    /// Keeps `message` in the page's error while the files now opening are shown.
    pub(super) fn keep_error(&self, message: String) {
        self.kept_error.set_value(Some(message.clone()));
        self.load_error.set(Some(message));
    }

    /// Another open starts (not a rank of the same job being shown): its files are not those
    /// the kept error is about.
    pub(super) fn forget_kept_error(&self) {
        self.kept_error.set_value(None);
    }

    pub(crate) fn finish_open(&self, response: Response) {
        self.opening.set(None);
        match response {
            Response::Opened {
                summary,
                first_screen,
            } => {
                self.load_error.set(self.kept_error.get_value());
                let device = summary.opening_device();
                self.file.set(Some(summary));
                self.show_device(device, first_screen.map(|s| *s));
            }
            Response::Failed { message } => self.open_failed(message),
            other => self.open_failed(format!("unexpected answer to an open: {other:?}")),
        }
    }

    /// The open's failure, and the kept error after it.
    fn open_failed(&self, message: String) {
        self.load_error.set(Some(match self.kept_error.get_value() {
            Some(kept) => format!("{message}; {kept}"),
            None => message,
        }));
    }

    /// Shows `device` (None: nothing) and fetches its views.
    pub fn select_device(&self, device: Option<i64>) {
        self.show_device(device, None)
    }

    /// The first screen's timeline if `request` is what it answers (taken: it is used once).
    pub fn take_timeline(&self, request: &TimelineRequest) -> Option<TimelineView> {
        self.first_timeline
            .try_update_value(|t| {
                if t.as_ref().is_some_and(|(r, _)| r == request) {
                    t.take()
                } else {
                    None
                }
            })
            .flatten()
            .map(|(_, view)| view)
    }

    /// As `select_device`, with the views `first` already holds for it (an open's answer).
    fn show_device(&self, device: Option<i64>, first: Option<FirstScreen>) {
        let first = first.filter(|f| Some(f.segments.device) == device);
        let (segments, timeline) = first.map_or((None, None), |f| (Some(f.segments), f.timeline));
        self.first_timeline.set_value(timeline);
        self.device.set(device);
        self.hover.set(None);
        self.pinned.set(None);
        let Some(device) = device else {
            self.segments.set(None);
            self.diagnostics.set(None);
            return;
        };
        // The first paint needs only the segments and the timeline (its own request, sent by
        // its view): the side bar's totals wait until the worker is idle, so they never queue
        // ahead of the timeline. Cleared meanwhile: a panel never shows another device's numbers.
        self.diagnostics.set(None);
        let me = *self;
        if let Some(v) = segments {
            self.segments.set(Some(Arc::new(v)));
        } else {
            self.request(Request::Segments { device }, None, move |r| match r {
                Response::Segments(v) if me.device.get_untracked() == Some(v.device) => {
                    me.segments.set(Some(Arc::new(v)))
                }
                Response::Failed { message } => me.load_error.set(Some(message)),
                _ => {}
            });
        }
        self.request_background(Request::Diagnostics { device }, move |r| match r {
            Response::Diagnostics(v) if me.device.get_untracked() == Some(v.device) => {
                me.diagnostics.set(Some(v))
            }
            Response::Failed { message } => me.load_error.set(Some(message)),
            _ => {}
        });
    }
}
