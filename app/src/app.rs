//! The page layout: the side bar (open, device, diagnostics) and the views.
//! Dropping a file anywhere opens it; `?url=` opens a URL at start (several: a job's ranks).

use leptos::prelude::*;

use crate::protocol::Response;
use crate::state::AppState;
use crate::views::analysis_state::Analysis;
use crate::views::{
    Anomalies, BeforeAfter, DevicePicker, Diagnostics, FlameGraph, FleetOverview, FleetTimelines,
    Insights, OomPanel, OpenPanel, PhaseBand, PoolDiagnostics, RankCompare, SegmentView,
    StackPanel, StateSlider, Timeline, ViewLink, WhatIf,
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
                    state.open_folder(files)
                } else {
                    state.open_files(files)
                }
            });
        }
    });

    if let Some(file) = crate::report::file() {
        // A report opens the snapshot it carries, as the example opens (the OOM if any).
        crate::dom::next_frame(move || state.open_file(file));
    } else {
        let mut urls = crate::views::address_urls();
        if urls.len() > 1 {
            // A job: one URL per rank.
            crate::dom::next_frame(move || state.open_urls(urls));
        } else if let Some(url) = urls.pop() {
            // After the first frame, when the timeline has measured its plot: the open then
            // asks for its first screen (the worker is still starting, so this delays nothing).
            crate::dom::next_frame(move || state.open_url(&url));
        }
    }

    view! {
        <div class="layout" class:dragging=move || dragging.get()>
            <header class="topbar">
                <span class="brand">"memsnap"</span>
                <span class="subtitle">"PyTorch CUDA memory snapshots"</span>
            </header>
            <aside class="sidebar">
                <OpenPanel/>
                <ViewLink/>
                {side_panels()}
            </aside>
            {views_and_details()}
            <div class="drop-hint">"Drop a snapshot, one per rank, or their folder to open them"</div>
        </div>
        <Rehearsal main=state/>
    }
}

/// Where the rehearsal's views are mounted while one is on (`rehearsal`): a second
/// `AppState` sharing the page's worker, `main` being the page's.
#[component]
fn Rehearsal(main: AppState) -> impl IntoView {
    let on = RwSignal::new(None::<AppState>);
    crate::rehearsal::install(crate::rehearsal::Stage {
        idle: Box::new(move || {
            main.file.with_untracked(Option::is_none)
                && main.opening.with_untracked(Option::is_none)
                && main.load_error.with_untracked(Option::is_none)
                && main.fleet.ranks.with_untracked(Vec::is_empty)
        }),
        start: Box::new(move |summary| {
            let state = AppState::rehearsing(&main);
            on.set(Some(state));
            state.finish_open(Response::Opened {
                summary,
                first_screen: None,
            });
        }),
        stop: Box::new(move || match on.get_untracked() {
            Some(state) => {
                state.abandon();
                on.set(None);
                true
            }
            None => false,
        }),
    });
    move || on.get().map(|state| view! { <RehearsalStage state/> })
}

#[component]
fn RehearsalStage(state: AppState) -> impl IntoView {
    provide_context(state);
    Analysis::provide(state);
    view! {
        <div class="layout rehearsal" aria-hidden="true" inert>
            <aside class="sidebar">{side_panels()}</aside>
            {views_and_details()}
        </div>
    }
}

/// The side bar's panels below the open panel: also what the rehearsal opens.
fn side_panels() -> impl IntoView {
    view! {
        <RankCompare/>
        <DevicePicker/>
        <Diagnostics/>
        <PoolDiagnostics/>
        <Insights/>
    }
}

/// The views and the details column.
fn views_and_details() -> impl IntoView {
    view! {
        <main class="views">
            <FleetOverview/>
            <FleetTimelines/>
            <OomPanel/>
            <PhaseBand/>
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
