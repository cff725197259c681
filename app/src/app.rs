//! The page layout: the side bar (open, device, diagnostics) and the views.
//! Dropping a file anywhere opens it; `?url=` opens a URL at start.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::rehearsal::Rehearsal;
use crate::state::AppState;
use crate::views::analysis_state::Analysis;
use crate::views::{
    Anomalies, BeforeAfter, DevicePicker, Diagnostics, FlameGraph, FleetOverview, FleetTimelines,
    Insights, OomPanel, OpenPanel, PoolDiagnostics, RankCompare, SegmentView, StackPanel,
    StateSlider, Timeline, WhatIf,
};

#[component]
pub fn App() -> impl IntoView {
    let state = AppState::start();
    provide_context(state);
    Analysis::provide(state);

    let dragging = RwSignal::new(false);
    // Drag and drop anywhere: without preventDefault on dragover the browser would navigate
    // to the dropped file instead.
    let _ = window_event_listener(leptos::ev::dragover, move |e| {
        e.prevent_default();
        dragging.set(true);
    });
    let _ = window_event_listener(leptos::ev::dragleave, move |e| {
        // Leaving the window has no related target.
        if e.related_target().is_none() {
            dragging.set(false);
            crate::perf::file_chosen();
        }
    });
    let _ = window_event_listener(leptos::ev::drop, move |e| {
        e.prevent_default();
        dragging.set(false);
        crate::perf::file_chosen();
        // Several files, or a folder: one file per rank of a distributed job.
        if let Some(data) = e.data_transfer() {
            crate::dropped_files::dropped_files(&data, move |files, folder| {
                if folder {
                    open_folder(state, files)
                } else {
                    state.open_files(files)
                }
            });
        }
    });

    if let Some(url) = query_param("url") {
        // After the first frame, when the timeline has measured its plot: the open then asks
        // for its first screen (the worker is still starting, so this delays nothing).
        next_frame(move || state.open_url(&url));
    }

    view! {
        <div class="layout" class:dragging=move || dragging.get()>
            <header class="topbar">
                <span class="brand">"memsnap"</span>
                <span class="subtitle">"PyTorch CUDA memory snapshots"</span>
            </header>
            <aside class="sidebar">
                <OpenPanel/>
                {side_panels()}
            </aside>
            {views_and_details()}
            <div class="drop-hint">"Drop a snapshot, one per rank, or their folder to open them"</div>
        </div>
        <Rehearsal main=state/>
    }
}

/// The side bar's panels below the open panel: also what the rehearsal opens.
pub(crate) fn side_panels() -> impl IntoView {
    view! {
        <RankCompare/>
        <DevicePicker/>
        <Diagnostics/>
        <PoolDiagnostics/>
        <Insights/>
    }
}

/// The views and the details column.
pub(crate) fn views_and_details() -> impl IntoView {
    view! {
        <main class="views">
            <FleetOverview/>
            <FleetTimelines/>
            <OomPanel/>
            <Timeline/>
            <StateSlider/>
            <SegmentView/>
            <FlameGraph/>
            <Anomalies/>
            <WhatIf/>
            <BeforeAfter/>
        </main>
        <aside class="details">
            <StackPanel/>
        </aside>
    }
}

fn query_param(key: &str) -> Option<String> {
    let search = window().location().search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    params.get(key).filter(|v| !v.is_empty())
}

/// Runs `f` in the next animation frame: after this frame's DOM and canvas work.
pub(crate) fn next_frame(f: impl FnOnce() + 'static) {
    let f = wasm_bindgen::closure::Closure::once_into_js(f);
    let _ = window().request_animation_frame(f.unchecked_ref());
}

/// The `HtmlInputElement` behind an input event.
pub(crate) fn event_input(e: &leptos::ev::Event) -> Option<web_sys::HtmlInputElement> {
    e.target()?.dyn_into().ok()
}

/// The files of a picker or a drop, in order.
pub(crate) fn file_list(files: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    files
        .map(|f| (0..f.length()).filter_map(|i| f.get(i)).collect())
        .unwrap_or_default()
}

/// Opens the snapshots among a folder's files (`folder_files`): its logs and configs are not
/// ranks. An empty folder says so.
pub(crate) fn open_folder(state: AppState, files: Vec<web_sys::File>) {
    let names: Vec<String> = files.iter().map(|f| f.name()).collect();
    let keep = crate::folder_files::snapshot_files(&names);
    if keep.is_empty() {
        state
            .load_error
            .set(Some("no files to open: the folder is empty".into()));
        return;
    }
    state.open_files(keep.into_iter().map(|i| files[i].clone()).collect());
}
