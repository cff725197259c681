//! Warming the worker's code before the first file arrives. V8 runs wasm first in its baseline
//! tier and compiles a function's optimised code only once it has run a while, so the first
//! parse in a fresh worker ran 2–4× slower than later ones (`scripts/bench/bench.sh`'s page step:
//! cs336-c-medium512-training at 42 MB/s first, 96 MB/s after). While the user picks a file,
//! the worker parses and indexes a CPython-made snapshot a few times and answers the first
//! paint's requests on it, one pass per task so a request that arrives meanwhile waits for one
//! pass at most (a few ms). The last pass's snapshot stays open, and its summary goes to the
//! page (`WarmedUp`), which opens it out of sight once (`rehearsal`), its views asking this
//! worker as for a real file.

use memsnap_core::snapshot;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::protocol::{FileSummary, Response};
use crate::viewmodel::{answer, file_summary, first_paint_requests, Analyses};

/// A gzipped CPython pickle of a `capture` run whose entries and blocks carry deep PyTorch-like
/// stacks (scripts/gen/make-warm-up.sh; 34 kB, 0.2 MB inflated). Real files are CPython pickles
/// whose parse is mostly frames: warming up on memsnap's own writer's opcodes, then on a capture
/// run with 4-frame stacks, left the first real file's parse at 2.5–3× its warm time
/// (scripts/profile/profile_page.py, cold against warm opens). 2,500 entries instead of 1,000 warmed no
/// better and left the worker 2.3 MB larger before any file.
const INPUT: &[u8] = include_bytes!("../../assets/warm-up.pickle.gz");
/// Passes over it (3–15 ms each under the profiler, the first about 45 ms; 20 passes gained
/// nothing over 6 on the first file, scripts/profile/profile_page.py).
const PASSES: u32 = 6;

thread_local! {
    /// Set by the first request: the passes left would only delay it (an `?url=` open comes
    /// as the worker starts).
    static STOPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Starts the passes; call once when the worker starts.
pub fn start() {
    schedule(PASSES);
}

/// Ends the warm-up: a request has come.
pub fn stop() {
    STOPPED.set(true);
}

fn schedule(left: u32) {
    if left == 0 || STOPPED.get() {
        return;
    }
    let next = Closure::once_into_js(move || {
        if STOPPED.get() {
            return;
        }
        let started = crate::perf::now();
        let last = pass(left == 1);
        crate::perf::measure_since(crate::perf::WORKER_WARM_UP, started);
        if let Some((snapshot, cache, summary)) = last {
            super::open_snapshot::install_warm_up(snapshot, cache);
            super::post::post(0, &Response::WarmedUp(Box::new(summary)));
        }
        schedule(left - 1);
    });
    if let Err(e) = super::post::scope()
        .set_timeout_with_callback_and_timeout_and_arguments_0(next.unchecked_ref(), 0)
    {
        web_sys::console::error_2(&"memsnap worker: no warm-up".into(), &e);
    }
}

/// One parse and index of the input and the first paint's two answers (segments and the
/// timeline); on the `last` pass, the snapshot, its index and its summary, to keep open.
fn pass(last: bool) -> Option<(snapshot::Snapshot, Analyses, FileSummary)> {
    match snapshot::read(INPUT) {
        Ok(mut snap) => {
            let mut cache = Analyses::for_open(&mut snap);
            let summary = file_summary(&snap, &mut cache, "warm-up.pickle.gz", 0, 0.0);
            let device = summary.opening_device().unwrap_or(0);
            for request in first_paint_requests(&snap, device) {
                std::hint::black_box(answer(&snap, &mut cache, &request));
            }
            last.then_some((snap, cache, summary))
        }
        Err(e) => {
            web_sys::console::error_1(&format!("memsnap worker: warm-up: {e}").into());
            None
        }
    }
}
