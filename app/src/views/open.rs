//! Opening files: picker, bundled example, progress bar, and the last error.

use leptos::prelude::*;

use super::load_warnings::LoadWarnings;
use crate::dom::{event_input, file_list};
use crate::format;
use crate::protocol::Stage;
use crate::state::AppState;

/// Copied next to index.html by Trunk (see index.html), so it resolves from any sub-path.
pub const EXAMPLE_URL: &str = "example.pickle";

#[component]
pub fn OpenPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let on_pick = move |e: leptos::ev::Event| {
        let Some(input) = event_input(&e) else { return };
        crate::perf::file_chosen();
        // Several files: one per rank of a distributed job.
        state.open_files(file_list(input.files()));
        // Picking the same file again should open it again.
        input.set_value("");
    };
    // A folder: every snapshot in it and its subfolders, one per rank.
    let on_folder = move |e: leptos::ev::Event| {
        let Some(input) = event_input(&e) else { return };
        crate::perf::file_chosen();
        state.open_folder(file_list(input.files()));
        input.set_value("");
    };

    view! {
        <section class="panel open">
            <h2>"Snapshot"</h2>
            {move || state.file.get().map(|f| view! {
                <div class="file-name" data-testid="file-name" title=f.name.clone()>{f.name.clone()}</div>
                <div class="muted" title=format!("read {:.0} ms, parsed {:.0} ms, indexed {:.0} ms", f.read_ms, f.parse_ms, f.index_ms)>
                    {format!("{} · {} · parsed in {:.0} ms", format::bytes(f.size), f.form, f.parse_ms + f.index_ms)}
                </div>
                // The worker's own timings and memory, for the page benchmark.
                <div hidden data-testid="perf" data-read-ms=f.read_ms.to_string()
                    data-parse-ms=f.parse_ms.to_string() data-index-ms=f.index_ms.to_string()
                    data-worker-memory=f.worker_memory.to_string() data-size=f.size.to_string()></div>
            })}
            <label class="button primary">
                "Open file(s)…"
                <input type="file" multiple data-testid="file-input" accept=".pickle,.pkl,.pk,.json,.gz,application/octet-stream,application/json,application/gzip"
                    on:change=on_pick/>
            </label>
            <label class="button">
                "Open a folder…"
                <input type="file" prop:webkitdirectory=true multiple data-testid="folder-input" on:change=on_folder/>
            </label>
            // A report carries one file and nothing beside it to fetch.
            {(!crate::report::is_report()).then(|| view! {
                <button class="button" data-testid="open-example"
                    on:click=move |_| state.open_url(EXAMPLE_URL)>
                    "Open the example"
                </button>
            })}
            <p class="muted hint">"several files (or a folder) open as the ranks of one job; or drop files or a folder anywhere, or add ?url=… to the address"</p>
            <Progress/>
            {move || state.load_error.get().map(|e| view! {
                <div class="error" data-testid="load-error" role="alert">{e}</div>
            })}
            <LoadWarnings/>
        </section>
    }
}

/// How long an open runs before its progress bar is drawn. Most files are open by then, and a
/// bar drawn at the pick was a layout, a paint and a compositor frame on the cores the worker's
/// read and parse share: the read of a 1.2 MB file took 1.5–2× as long as the same read in an
/// idle page (tests/src/web/read_floor.rs).
const PROGRESS_AFTER_MS: u32 = 150;

#[component]
fn Progress() -> impl IntoView {
    let state = expect_context::<AppState>();
    let opening = Memo::new(move |_| state.opening.with(Option::is_some));
    let shown = RwSignal::new(false);
    // Counts opens, so that a timer left from an earlier one shows nothing.
    let opens = StoredValue::new(0u64);
    Effect::new(move |_| {
        if !opening.get() {
            shown.set(false);
            return;
        }
        opens.update_value(|n| *n += 1);
        let this = opens.get_value();
        gloo_timers::callback::Timeout::new(PROGRESS_AFTER_MS, move || {
            // `try_`: the panel may be gone by then.
            if opens.try_get_value() == Some(this) && opening.try_get_untracked() == Some(true) {
                shown.try_set(true);
            }
        })
        .forget();
    });
    move || {
        state.opening.get().filter(|_| shown.get()).map(|o| {
            let (label, fraction) = match &o.progress {
                Some(p) => (
                    match p.stage {
                        Stage::Reading => format!("Reading {}", format::bytes(p.done)),
                        Stage::Parsing => "Parsing".to_string(),
                    },
                    p.total.filter(|t| *t > 0).map(|t| p.done as f64 / t as f64),
                ),
                None => ("Starting".to_string(), None),
            };
            let size = o.size.map(|s| format!(" ({})", format::bytes(s))).unwrap_or_default();
            view! {
                <div class="progress" data-testid="progress">
                    <div class="progress-label">{format!("{}{size}", o.name)}</div>
                    <div class="bar" class:indeterminate=fraction.is_none()>
                        <div class="fill" style:width=format!("{:.1}%", fraction.unwrap_or(1.0) * 100.0)></div>
                    </div>
                    <div class="muted">{label}</div>
                </div>
            }
        })
    }
}
