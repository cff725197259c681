//! Views you can link to: the address keeps what is on screen (the device, the timeline's range,
//! the state slider's entry, the allocation clicked in the timeline) beside `?url=`, so a reload or a link sent to a colleague opens the
//! same view; "Copy link" puts the address on the clipboard. An address naming a device or an
//! entry the file lacks opens the file with a note saying what was not restored, never an error.

use leptos::prelude::*;
use web_sys::UrlSearchParams;

use super::analysis_state::{entries, Analysis};
use crate::dom::next_frame;
use crate::protocol::analysis::EntryRange;
use crate::protocol::{Request, Response};
use crate::state::AppState;

/// The fewest milliseconds between two writes of the address.
const WRITE_MS: i32 = 250;

/// The view an address asks for; every field optional.
#[derive(Debug, Clone, Default, PartialEq)]
struct Wanted {
    device: Option<i64>,
    range: Option<(u64, u64)>,
    entry: Option<u64>,
    alloc: Option<u32>,
    /// Parameters that are there but not numbers.
    bad: Vec<String>,
}

fn params() -> Option<UrlSearchParams> {
    let search = window().location().search().ok()?;
    UrlSearchParams::new_with_str(&search).ok()
}

/// The number `key` holds, if any; a value that is not one is recorded in `bad`.
fn number<T: std::str::FromStr>(
    p: &UrlSearchParams,
    key: &str,
    bad: &mut Vec<String>,
) -> Option<T> {
    let v = p.get(key).filter(|v| !v.is_empty())?;
    let n = v.parse().ok();
    if n.is_none() {
        bad.push(format!("{key}={v}"));
    }
    n
}

fn wanted(p: &UrlSearchParams) -> Wanted {
    let mut bad = Vec::new();
    let device = number(p, "device", &mut bad);
    let start = number(p, "start", &mut bad);
    let end = number(p, "end", &mut bad);
    let entry = number(p, "entry", &mut bad);
    let alloc = number(p, "alloc", &mut bad);
    Wanted {
        device,
        range: start.zip(end),
        entry,
        alloc,
        bad,
    }
}

/// Writes the view of the file named `name` into the address, keeping its other parameters;
/// `url` is dropped when it names another file (one opened from disk since), so the link
/// never pairs one file's view with another file.
fn write(
    name: &str,
    device: Option<i64>,
    range: Option<EntryRange>,
    entry: Option<u64>,
    alloc: Option<u32>,
) {
    let Some(p) = params() else { return };
    if let Some(url) = p.get("url") {
        let file = url
            .split(['?', '#'])
            .next()
            .unwrap_or("")
            .rsplit('/')
            .next()
            .unwrap_or("");
        if file != name {
            p.delete("url");
        }
    }
    let set = |key: &str, v: Option<String>| match v {
        Some(v) => p.set(key, &v),
        None => p.delete(key),
    };
    set("device", device.map(|d| d.to_string()));
    set("start", range.map(|r| r.start.to_string()));
    set("end", range.map(|r| r.end.to_string()));
    set("entry", entry.map(|e| e.to_string()));
    set("alloc", alloc.map(|a| a.to_string()));
    let query = String::from(p.to_string());
    let location = window().location();
    let path = location.pathname().unwrap_or_default();
    let hash = location.hash().unwrap_or_default();
    let address = if query.is_empty() {
        format!("{path}{hash}")
    } else {
        format!("{path}?{query}{hash}")
    };
    if let Ok(history) = window().history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&address));
    }
}

/// Applies the rest of `w` once the wanted device is shown (after the effects that reset the
/// range and the slider on a device change have run); returns what could not be restored.
fn apply_range_and_entry(state: AppState, an: Analysis, w: &Wanted) -> Vec<String> {
    let n = entries(&state);
    let mut missed = Vec::new();
    if let Some((start, end)) = w.range {
        if start < end && end <= n {
            an.range.set(Some(EntryRange { start, end }));
        } else {
            missed.push(format!("entries {start} to {end} (the trace has {n})"));
        }
    }
    if let Some(e) = w.entry {
        if e < n {
            an.cursor.set(Some(e));
        } else {
            missed.push(format!("entry {e} (the trace has {n})"));
        }
    }
    missed
}

#[component]
pub fn ViewLink() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    // What the address asked for when the page loaded; taken by the first file that opens.
    let pending = StoredValue::new(
        params()
            .map(|p| wanted(&p))
            .filter(|w| *w != Wanted::default()),
    );
    // The address is written only once the wanted view is restored (or none was asked for).
    let restoring = RwSignal::new(pending.get_value().is_some());
    let note = RwSignal::new(None::<String>);
    let copied = RwSignal::new(false);

    Effect::new(move |_| {
        let Some(file) = state.file.get() else { return };
        let Some(w) = pending.get_value() else { return };
        pending.set_value(None);
        let mut missed: Vec<String> = w
            .bad
            .iter()
            .map(|b| format!("{b} (not a number)"))
            .collect();
        match w.device {
            Some(d) if file.devices.iter().any(|x| x.device == d) => state.select_device(Some(d)),
            Some(d) => missed.push(format!("device {d} (not in this file)")),
            None => {}
        }
        // Two frames: the device's views and the resets of its range run in between.
        next_frame(move || {
            next_frame(move || {
                missed.extend(apply_range_and_entry(state, an, &w));
                let say = move |missed: Vec<String>| {
                    if !missed.is_empty() {
                        note.set(Some(format!("Opened without {}.", missed.join(", "))));
                    }
                    restoring.set(false);
                };
                // The allocation is asked of the worker first: one the file lacks is named in
                // the note rather than silently not shown.
                match (w.alloc, state.device.get_untracked()) {
                    (Some(alloc), Some(device)) => {
                        state.request(Request::Allocation { device, alloc }, None, move |r| {
                            let mut missed = missed;
                            match r {
                                Response::Allocation(_) => an.selected.set(Some(alloc)),
                                _ => missed.push(format!("allocation {alloc} (not in this trace)")),
                            }
                            say(missed);
                        });
                    }
                    _ => say(missed),
                }
            })
        });
    });

    // Written at most every WRITE_MS (a zoom burst changes the range every frame, and browsers
    // throttle a page that replaces its address too often).
    let scheduled = StoredValue::new(false);
    Effect::new(move |_| {
        state.device.track();
        an.range.track();
        an.cursor.track();
        an.selected.track();
        if state.file.with(Option::is_none) || restoring.get() || scheduled.get_value() {
            return;
        }
        scheduled.set_value(true);
        let later = wasm_bindgen::closure::Closure::once_into_js(move || {
            scheduled.set_value(false);
            if let Some(file) = state.file.get_untracked() {
                write(
                    &file.name,
                    state.device.get_untracked(),
                    an.range.get_untracked(),
                    an.cursor.get_untracked(),
                    an.selected.get_untracked(),
                );
            }
        });
        let _ = window().set_timeout_with_callback_and_timeout_and_arguments_0(
            wasm_bindgen::JsCast::unchecked_ref(&later),
            WRITE_MS,
        );
    });

    let copy = move |_| {
        let href = window().location().href().unwrap_or_default();
        let clipboard = window().navigator().clipboard();
        let promise = clipboard.write_text(&href);
        copied.set(true);
        wasm_bindgen_futures::spawn_local(async move {
            if wasm_bindgen_futures::JsFuture::from(promise).await.is_err() {
                copied.set(false);
                note.set(Some(format!(
                    "The browser refused the clipboard; the link is {href}"
                )));
            }
        });
    };

    move || {
        state.file.with(Option::is_some).then(|| {
            view! {
                <div class="view-link">
                    <button class="button small" data-testid="copy-link" on:click=copy
                        title="Copy the address of this view (device, range, entry)">
                        {move || if copied.get() { "Link copied" } else { "Copy link" }}
                    </button>
                    {move || note.get().map(|n| view! { <span class="muted small" data-testid="link-note">{n}</span> })}
                </div>
            }
        })
    }
}
