//! Tiny self-measurement for the page benchmark (tests/tests/page_bench.rs): `performance`
//! marks and measures the page and the worker make around their own work, and the size of a
//! wasm instance's memory. Works in the page and in the worker (both have `performance`).

use std::cell::Cell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Performance;

/// Marked when the file input's change fires (or files are dropped).
pub const FILE_CHOSEN: &str = "memsnap:file-chosen";
/// Marked in the animation frame after the segment view and the timeline have both rendered
/// data of the file chosen last.
pub const FIRST_PAINT: &str = "memsnap:first-paint";
/// The measure between the two.
pub const LOAD_TO_FIRST_PAINT: &str = "memsnap:load-to-first-paint";
/// Marked in the page when its worker says it is ready (the benchmark's fresh pages wait on it).
pub const WORKER_READY: &str = "memsnap:worker-ready";
/// One measure per timeline redraw (the canvas work only).
pub const TIMELINE_DRAW: &str = "memsnap:timeline-draw";
/// Prefix of the measures of worker requests, sent to answered (`memsnap:request:Timeline`):
/// the worker's work, its queue and the transport.
pub const REQUEST: &str = "memsnap:request:";

/// The worker's own measures, in the worker's timeline: reading the file, parsing, indexing,
/// answering a request (prefix + kind: the view model's work) and posting the answer
/// (encoding it and `postMessage`). `scripts/profile/profile_page.py` prints them.
pub const WORKER_READ: &str = "memsnap:worker:read";
pub const WORKER_PARSE: &str = "memsnap:worker:parse";
pub const WORKER_INDEX: &str = "memsnap:worker:index";
pub const WORKER_ANSWER: &str = "memsnap:worker:answer:";
pub const WORKER_POST: &str = "memsnap:worker:post";
/// Freeing the file an open replaced, after its answer is posted.
pub const WORKER_DROP_REPLACED: &str = "memsnap:worker:drop-replaced";
/// The page's rehearsal of the worker's warm-up snapshot, from its start to its end
/// (`rehearsal`).
pub const REHEARSAL: &str = "memsnap:rehearsal";
/// One pass of the worker's warm-up (`worker::warm_up`).
pub const WORKER_WARM_UP: &str = "memsnap:worker:warm-up";

fn performance() -> Option<Performance> {
    js_sys::Reflect::get(&js_sys::global(), &"performance".into())
        .ok()?
        .dyn_into()
        .ok()
}

/// Milliseconds since the page (or worker) started; 0 where there is no clock.
pub fn now() -> f64 {
    performance().map_or(0.0, |p| p.now())
}

pub fn mark(name: &str) {
    if let Some(p) = performance() {
        let _ = p.mark(name);
    }
}

/// A measure named `name` from `start` (a `now()` value) to now.
pub fn measure_since(name: &str, start: f64) {
    let Some(p) = performance() else { return };
    let opts = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&opts, &"start".into(), &start.into());
    let _ = js_sys::Reflect::set(&opts, &"end".into(), &p.now().into());
    // `measure(name, {start, end})` (User Timing 3); web-sys only binds it behind unstable APIs.
    let measure = js_sys::Reflect::get(&p, &"measure".into())
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    if let Some(f) = measure {
        let _ = f.call2(&p, &name.into(), &opts);
    }
}

/// Bytes of this wasm instance's linear memory. It never shrinks, so this is its peak so far.
pub fn wasm_memory_bytes() -> u64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .ok()
        .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
        .map_or(0, |b| b.byte_length() as u64)
}

/// The page's own wasm memory, for the benchmark harness (`window.wasmBindings`, set by
/// Trunk's loader).
#[wasm_bindgen]
pub fn memsnap_wasm_memory_bytes() -> f64 {
    wasm_memory_bytes() as f64
}

/// Which views have painted data of the file chosen last.
#[derive(Clone, Copy)]
pub enum View {
    Segments = 1,
    Timeline = 2,
}

/// Which views of the first screen (`View`) have drawn data since `start`.
#[derive(Default)]
pub struct FirstScreen(Cell<Option<u8>>);

impl FirstScreen {
    pub const fn new() -> FirstScreen {
        FirstScreen(Cell::new(None))
    }

    /// Counts from nothing drawn.
    pub fn start(&self) {
        self.0.set(Some(0));
    }

    /// Records that `view` drew: true for the call that completes the screen, after which
    /// nothing counts until the next `start`.
    pub fn drawn(&self, view: View) -> bool {
        let Some(bits) = self.0.get() else {
            return false;
        };
        let bits = bits | view as u8;
        let all = View::Segments as u8 | View::Timeline as u8;
        self.0.set((bits != all).then_some(bits));
        bits == all
    }
}

thread_local! {
    /// The views drawn since the last `file_chosen`.
    static PENDING: FirstScreen = const { FirstScreen::new() };
}

/// Starts a load-to-first-paint measurement.
pub fn file_chosen() {
    // Marked first: the measure counts all the page does for the file, these clears included.
    mark(FILE_CHOSEN);
    let _ = performance().map(|p| {
        p.clear_marks_with_mark_name(FIRST_PAINT);
        p.clear_measures_with_measure_name(LOAD_TO_FIRST_PAINT);
    });
    PENDING.with(FirstScreen::start);
}

/// Called by a view after it rendered data; the second view to do so ends the measurement in
/// the next animation frame (so the mark falls after the DOM and canvas work).
pub fn painted(view: View) {
    if !PENDING.with(|p| p.drawn(view)) {
        return;
    }
    crate::dom::next_frame(|| {
        mark(FIRST_PAINT);
        if let Some(p) = performance() {
            let _ = p.measure_with_start_mark_and_end_mark(
                LOAD_TO_FIRST_PAINT,
                FILE_CHOSEN,
                FIRST_PAINT,
            );
        }
    });
}
