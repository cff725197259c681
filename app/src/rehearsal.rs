//! The page opens the worker's warm-up snapshot once, out of sight, before the user's first
//! file: every panel renders it and asks the worker for its views as for a real file, and the
//! first screen is laid out and drawn. A fresh page's first open otherwise ran all of that code
//! for the first time: V8 compiles a wasm function when it is first called and optimises it only
//! once it has run a while, and Chromium builds its style and font caches on the first layout.
//! select-n-multidevice's first open spent about 37 ms between the worker's answer and the first
//! paint, a later open about 15 (scripts/profile/profile_page.py). The first open's first paint in a
//! fresh browser, before → after (page bench, `BENCH_PAGE_ONLY`, medians of 5 interleaved runs):
//! cs336-a-2.7b-forward 98.0 → 87.0 ms, select-n-multidevice 58.8 → 49.2 ms. It replaces a
//! narrower warm-up that only decoded the worker's warm-up answers and drew them on a detached
//! canvas.
//!
//! It starts when the worker says its warm-up is done (`Response::WarmedUp`, which leaves the
//! warm-up snapshot open in the worker), if the page has not opened anything yet. It ends at
//! its own first paint, when the user opens anything, or after `LONGEST_MS`, whichever comes
//! first: its views are unmounted, the replies still due to them dropped and its background
//! analyses never asked for (`AppState::abandon`). It is a second `AppState` sharing the page's
//! worker, inside an inert, invisible, fixed layer, so nothing it draws is seen, clicked or read
//! aloud.
//!
//! This file keeps the rehearsal's once-only rule, its clock and its end; what it mounts is the
//! page's (`app.rs` installs [`Stage`] hooks), so that the page's layers may call it without a
//! loop back up to the layout.

use std::cell::{Cell, RefCell};

use wasm_bindgen::prelude::Closure;
use wasm_bindgen::JsCast;

use crate::perf::{FirstScreen, View};
use crate::protocol::FileSummary;

/// Its end at the latest, should its first paint never come.
const LONGEST_MS: i32 = 2_000;

/// What the page does for a rehearsal (installed once by the layout).
pub struct Stage {
    /// The page has nothing open, opening or failed yet.
    pub idle: Box<dyn Fn() -> bool>,
    /// Mounts the rehearsal's views on `summary`, open in the worker.
    pub start: Box<dyn Fn(FileSummary)>,
    /// Unmounts them if they are mounted; whether they were.
    pub stop: Box<dyn Fn() -> bool>,
}

thread_local! {
    static STAGE: RefCell<Option<Stage>> = const { RefCell::new(None) };
    /// A page rehearses once.
    static DONE: Cell<bool> = const { Cell::new(false) };
    /// The rehearsal's views that have drawn.
    static PAINTED: FirstScreen = const { FirstScreen::new() };
    /// When the rehearsal started (`perf::now`).
    static STARTED: Cell<f64> = const { Cell::new(0.0) };
}

/// Where rehearsals happen: called by the layout when it mounts.
pub fn install(stage: Stage) {
    STAGE.with(|s| *s.borrow_mut() = Some(stage));
}

/// The worker's warm-up is done and `summary` is open in it: rehearses, if the page has
/// nothing open, opening or failed yet.
pub fn warmed_up(summary: FileSummary) {
    let idle = STAGE.with(|s| s.borrow().as_ref().map(|st| (st.idle)()));
    if idle != Some(true) || DONE.replace(true) {
        return;
    }
    PAINTED.with(FirstScreen::start);
    STARTED.set(crate::perf::now());
    STAGE.with(|s| {
        if let Some(st) = s.borrow().as_ref() {
            (st.start)(summary)
        }
    });
    after(LONGEST_MS, end);
}

/// A rehearsal view drew its data; the second ends the rehearsal after that frame.
pub fn painted(view: View) {
    if PAINTED.with(|p| p.drawn(view)) {
        crate::dom::next_frame(end);
    }
}

/// Ends the rehearsal, if one is on: the page is opening a file, or it has done its work.
pub fn end() {
    let stopped = STAGE.with(|s| s.borrow().as_ref().is_some_and(|st| (st.stop)()));
    if stopped {
        crate::perf::measure_since(crate::perf::REHEARSAL, STARTED.get());
    }
}

fn after(ms: i32, f: fn()) {
    let f = Closure::once_into_js(f);
    if let Some(w) = web_sys::window() {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), ms);
    }
}
