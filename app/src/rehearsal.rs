//! The page opens the worker's warm-up snapshot once, out of sight, before the user's first
//! file: every panel renders it and asks the worker for its views as for a real file, and the
//! first screen is laid out and drawn. A fresh page's first open otherwise ran all of that code
//! for the first time: V8 compiles a wasm function when it is first called and optimises it only
//! once it has run a while, and Chromium builds its style and font caches on the first layout.
//! select-n-multidevice's first open spent about 37 ms between the worker's answer and the first
//! paint, a later open about 15 (scripts/profile_page.py). The first open's first paint in a
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

use std::cell::{Cell, RefCell};

use leptos::prelude::*;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::JsCast;

use crate::perf::{FirstScreen, View};
use crate::protocol::{FileSummary, Response};
use crate::state::AppState;
use crate::views::analysis_state::Analysis;

/// Its end at the latest, should its first paint never come.
const LONGEST_MS: i32 = 2_000;

thread_local! {
    /// The page's state and the rehearsal's while one is on (the `Rehearsal` component's).
    static STAGE: RefCell<Option<(AppState, RwSignal<Option<AppState>>)>> =
        const { RefCell::new(None) };
    /// A page rehearses once.
    static DONE: Cell<bool> = const { Cell::new(false) };
    /// The rehearsal's views that have drawn.
    static PAINTED: FirstScreen = const { FirstScreen::new() };
    /// When the rehearsal started (`perf::now`).
    static STARTED: Cell<f64> = const { Cell::new(0.0) };
}

/// Where the rehearsal's views are mounted while it is on; `main` is the page's state.
#[component]
pub fn Rehearsal(main: AppState) -> impl IntoView {
    let on = RwSignal::new(None::<AppState>);
    STAGE.with(|s| *s.borrow_mut() = Some((main, on)));
    move || on.get().map(|state| view! { <Stage state/> })
}

#[component]
fn Stage(state: AppState) -> impl IntoView {
    provide_context(state);
    Analysis::provide(state);
    view! {
        <div class="layout rehearsal" aria-hidden="true" inert>
            <aside class="sidebar">{crate::app::side_panels()}</aside>
            {crate::app::views_and_details()}
        </div>
    }
}

/// The worker's warm-up is done and `summary` is open in it: rehearses, if the page has
/// nothing open, opening or failed yet.
pub fn warmed_up(summary: FileSummary) {
    let Some((main, on)) = STAGE.with(|s| *s.borrow()) else {
        return;
    };
    let idle = main.file.with_untracked(Option::is_none)
        && main.opening.with_untracked(Option::is_none)
        && main.load_error.with_untracked(Option::is_none)
        && main.fleet.ranks.with_untracked(Vec::is_empty);
    if !idle || DONE.replace(true) {
        return;
    }
    let state = AppState::rehearsing(&main);
    PAINTED.with(FirstScreen::start);
    STARTED.set(crate::perf::now());
    on.set(Some(state));
    state.finish_open(Response::Opened {
        summary,
        first_screen: None,
    });
    after(LONGEST_MS, end);
}

/// A rehearsal view drew its data; the second ends the rehearsal after that frame.
pub fn painted(view: View) {
    if PAINTED.with(|p| p.drawn(view)) {
        crate::app::next_frame(end);
    }
}

/// Ends the rehearsal, if one is on: the page is opening a file, or it has done its work.
pub fn end() {
    let Some((_, on)) = STAGE.with(|s| *s.borrow()) else {
        return;
    };
    if let Some(state) = on.get_untracked() {
        state.abandon();
        on.set(None);
        crate::perf::measure_since(crate::perf::REHEARSAL, STARTED.get());
    }
}

fn after(ms: i32, f: fn()) {
    let f = Closure::once_into_js(f);
    if let Some(w) = web_sys::window() {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(f.unchecked_ref(), ms);
    }
}
