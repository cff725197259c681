//! The worker side: receives requests, keeps the open snapshot, posts responses.
//! Everything here runs in a `DedicatedWorkerGlobalScope`, so parsing never blocks the page.

mod fetch;
mod file;
mod open_snapshot;
mod out_of_memory;
mod paced;
mod post;
mod prefault;
mod serial;
mod streaming;
mod warm_up;

use js_sys::{Array, Uint8Array};
use memsnap_core::analysis::rank_summary::RankSummary;
use memsnap_core::snapshot::Snapshot;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::MessageEvent;

use crate::perf;
use open_snapshot::{drop_warm_up, install, CACHE, OPEN, WARM_UP_OPEN};
use post::{post, progress, scope};

use crate::protocol::{decode, Envelope, PlotSize, Request, RequestId, Response, Stage};
use crate::viewmodel::{
    answer, compare_view, file_summary, first_paint_requests, first_screen, Analyses, PacedAnswer,
};

pub fn start() {
    out_of_memory::install();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(on_message);
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    post(0, &Response::Ready);
    warm_up::start();
}

fn on_message(event: MessageEvent) {
    warm_up::stop();
    serial::push(event.data(), handle);
}

/// The file a request brought as its message's second element.
fn attached_file(data: &JsValue) -> Option<web_sys::File> {
    Array::from(data).get(1).dyn_into::<web_sys::File>().ok()
}

/// Answers one request; those that read a file or fetch return the rest of their work (the
/// next request waits for it, `serial`).
fn handle(data: JsValue) -> serial::Pending {
    let bytes = Array::from(&data).get(0);
    let Some(bytes) = bytes.dyn_ref::<Uint8Array>() else {
        post(
            0,
            &Response::Failed {
                message: "malformed worker message: no bytes".into(),
            },
        );
        return None;
    };
    let Envelope { id, body } = match decode::<Request>(&bytes.to_vec()) {
        Ok(envelope) => envelope,
        Err(e) => {
            post(
                0,
                &Response::Failed {
                    message: e.to_string(),
                },
            );
            return None;
        }
    };
    match body {
        Request::OpenFile {
            name, first_screen, ..
        } => {
            // What is under way is about the file this one replaces.
            paced::cancel_all();
            drop_warm_up();
            let file = attached_file(&data);
            Some(Box::pin(async move {
                let Some(file) = file else {
                    let message = "no file came with the open request".to_string();
                    return post(id, &Response::Failed { message });
                };
                match streaming::read(id, &file).await {
                    Ok(streaming::Read::Parsed {
                        parsed,
                        size,
                        read_ms,
                        parse_ms,
                    }) => {
                        let parsed = parsed
                            .map(|s| (s, parse_ms))
                            .map_err(|e| unreadable(&name, e));
                        opened(id, &name, size, parsed, read_ms, first_screen)
                    }
                    Ok(streaming::Read::Bytes { bytes, read_ms }) => {
                        open(id, &name, bytes, read_ms, first_screen)
                    }
                    Err(message) => post(id, &Response::Failed { message }),
                }
            }))
        }
        Request::Summarize { name, rank, .. } => {
            drop_warm_up();
            let file = attached_file(&data);
            Some(Box::pin(async move {
                let result = match file {
                    Some(f) => file::read_all(id, &f, file::Buffer::Keep).await,
                    None => Err(format!("{name}: no file came with the summary request")),
                }
                .and_then(|bytes| summarize(id, &name, rank, bytes));
                match result {
                    Ok(summary) => post(id, &Response::Summarized(Box::new(summary))),
                    Err(message) => post(id, &Response::Failed { message }),
                }
            }))
        }
        Request::OpenUrl { url, first_screen } => {
            paced::cancel_all();
            drop_warm_up();
            Some(Box::pin(async move {
                let started = perf::now();
                match fetch::read_all(id, &url).await {
                    Ok(bytes) => open(
                        id,
                        &crate::url_name::file_name(&url),
                        bytes,
                        perf::now() - started,
                        first_screen,
                    ),
                    Err(message) => post(id, &Response::Failed { message }),
                }
            }))
        }
        Request::CompareWith { name, device, .. } => {
            let file = attached_file(&data);
            Some(Box::pin(async move {
                let before = match file {
                    Some(f) => file::read_all(id, &f, file::Buffer::Release).await,
                    None => Err("no file came with the compare request".to_string()),
                }
                .and_then(|bytes| {
                    memsnap_core::snapshot::read(&bytes)
                        .map_err(|e| format!("{name}: not a snapshot memsnap can read: {e}"))
                });
                let response = match before {
                    Ok(before) => OPEN.with(|open| match &*open.borrow() {
                        Some(after) if !WARM_UP_OPEN.get() => {
                            Response::Compare(compare_view(&before, after, &name, device))
                        }
                        // Nothing, or the warm-up's snapshot, is open.
                        _ => Response::Failed {
                            message: "open the AFTER file first".into(),
                        },
                    }),
                    Err(message) => Response::Failed { message },
                };
                post(id, &response);
            }))
        }
        other => {
            let slow = OPEN.with(|open| {
                let open = open.borrow();
                let snapshot = open.as_ref()?;
                CACHE.with(|c| PacedAnswer::of(snapshot, &mut c.borrow_mut(), &other))
            });
            if let Some(slow) = slow {
                paced::start(id, other.kind(), slow);
                return None;
            }
            let started = perf::now();
            let response = OPEN.with(|open| match &*open.borrow() {
                Some(snapshot) => CACHE.with(|c| answer(snapshot, &mut c.borrow_mut(), &other)),
                None => Response::Failed {
                    message: "no snapshot is open".into(),
                },
            });
            let answered = perf::now();
            post(id, &response);
            perf::measure_since(&format!("{}{}", perf::WORKER_ANSWER, other.kind()), started);
            perf::measure_since(perf::WORKER_POST, answered);
            None
        }
    }
}

/// The fewest bytes parsed between two progress reports.
const PROGRESS_STEP: u64 = 256 << 10;

/// Parses `bytes`, reporting progress; the snapshot and the milliseconds it took.
fn parse(id: RequestId, name: &str, bytes: &[u8]) -> Result<(Snapshot, f64), String> {
    let size = bytes.len() as u64;
    progress(id, Stage::Parsing, 0, Some(size));
    let started = perf::now();
    // About a hundred reports per file, enough for a smooth bar, but none smaller than
    // PROGRESS_STEP: each is a message to the page, and a 10 kB file sent a hundred of them.
    let step = (size / 100).max(PROGRESS_STEP);
    let mut reported = 0;
    let parsed = memsnap_core::snapshot::read_with_progress(bytes, &mut |done| {
        if done >= reported + step {
            reported = done;
            progress(id, Stage::Parsing, done, Some(size));
        }
    });
    perf::measure_since(perf::WORKER_PARSE, started);
    parsed
        .map(|snapshot| (snapshot, perf::now() - started))
        .map_err(|e| unreadable(name, e))
}

fn unreadable(name: &str, e: memsnap_core::snapshot::ReadError) -> String {
    format!("{name}: not a snapshot memsnap can read: {e}")
}

/// Parses `bytes` (read in `read_ms`); on success the result replaces the open snapshot.
fn open(id: RequestId, name: &str, bytes: Vec<u8>, read_ms: f64, plot: Option<PlotSize>) {
    let size = bytes.len() as u64;
    let parsed = parse(id, name, &bytes);
    drop(bytes);
    opened(id, name, size, parsed, read_ms, plot)
}

/// Indexes a parsed file (`size` bytes, read in `read_ms`), which then replaces the open one;
/// with `plot`, the answer carries the first screen at that size.
fn opened(
    id: RequestId,
    name: &str,
    size: u64,
    parsed: Result<(Snapshot, f64), String>,
    read_ms: f64,
    plot: Option<PlotSize>,
) {
    match parsed {
        Ok((mut snapshot, parse_ms)) => {
            let indexing = perf::now();
            let mut cache = Analyses::for_open(&mut snapshot);
            let mut summary = file_summary(&snapshot, &mut cache, name, size, parse_ms);
            summary.read_ms = read_ms;
            summary.index_ms = perf::now() - indexing;
            perf::measure_since(perf::WORKER_INDEX, indexing);
            let first_screen = plot.and_then(|plot| {
                let started = perf::now();
                let screen = first_screen(&snapshot, &mut cache, &summary, plot);
                perf::measure_since(&format!("{}FirstScreen", perf::WORKER_ANSWER), started);
                screen.map(Box::new)
            });
            summary.worker_memory = perf::wasm_memory_bytes();
            let replaced = install(snapshot, cache);
            WARM_UP_OPEN.set(false);
            post(
                id,
                &Response::Opened {
                    summary,
                    first_screen,
                },
            );
            // Freed once the answer is on its way: dropping the file this one replaces (its
            // frames, its index) took 0.3–2 ms on later opens of the real fixtures, which the
            // first paint waited for.
            let dropping = perf::now();
            drop(replaced);
            perf::measure_since(perf::WORKER_DROP_REPLACED, dropping);
        }
        Err(message) => post(id, &Response::Failed { message }),
    }
}

/// One rank of a set: its summary, the same `RankSummary::of` that `memsnap fleet` runs.
/// The bytes and the snapshot are dropped here, before the answer is posted.
fn summarize(id: RequestId, name: &str, rank: u32, bytes: Vec<u8>) -> Result<RankSummary, String> {
    let size = bytes.len() as u64;
    let parsed = parse(id, name, &bytes);
    drop(bytes);
    let (snapshot, _) = parsed?;
    Ok(RankSummary::of(&snapshot, name, rank, size))
}

/// The open's pipeline on `bytes` in this worker, for the page benchmark: milliseconds to
/// parse, to index (`file_summary`), and to answer the first paint's Segments and Timeline
/// requests. Run N times it shows how the worker's speed settles as V8 tiers its code up,
/// against the same calls natively.
#[wasm_bindgen]
pub fn memsnap_pipeline_ms(bytes: &[u8]) -> Vec<f64> {
    let t0 = perf::now();
    let Ok(mut snapshot) = memsnap_core::snapshot::read(bytes) else {
        return Vec::new();
    };
    let t1 = perf::now();
    let mut cache = Analyses::for_open(&mut snapshot);
    let summary = file_summary(&snapshot, &mut cache, "bench", bytes.len() as u64, 0.0);
    let t2 = perf::now();
    let [segments, timeline] =
        first_paint_requests(&snapshot, summary.opening_device().unwrap_or(0));
    std::hint::black_box(answer(&snapshot, &mut cache, &segments));
    let t3 = perf::now();
    std::hint::black_box(answer(&snapshot, &mut cache, &timeline));
    let t4 = perf::now();
    vec![t1 - t0, t2 - t1, t3 - t2, t4 - t3]
}
