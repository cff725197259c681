//! Views you can link to: the address keeps what is on screen (`view_address`: the rank of a
//! job, the device, the timeline's range, the state slider's entry, the allocation clicked in
//! the timeline, the block pinned in the segment view, the panel looked at) beside `?url=`, so
//! a reload or a link sent to a colleague opens the same view; "Copy link" puts the address on
//! the clipboard. An address naming what the file lacks opens the file with a note saying what
//! was not restored, never an error.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::analysis_state::{entries, Analysis};
use super::view_address::{self, range_of, View, Wanted};
use super::view_panel;
use crate::dom::next_frame;
use crate::protocol::analysis::EntryRange;
use crate::protocol::{Request, Response};
use crate::state::AppState;

/// The fewest milliseconds between two writes of the address.
const WRITE_MS: i32 = 250;
/// How long a restored panel may take to mount: tries × milliseconds.
const PANEL_TRIES: u32 = 100;
const PANEL_EVERY_MS: i32 = 100;
/// Scrolls within this many milliseconds of a restored panel's are the restore's.
const QUIET_MS: f64 = 1000.0;

type Then = Box<dyn FnOnce(Vec<String>)>;

/// Applies the range and the entry once the wanted device is shown (after the effects that
/// reset them on a device change have run); returns what could not be restored.
fn apply_range_and_entry(state: AppState, an: Analysis, w: &View) -> Vec<String> {
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

/// The allocation is asked of the worker first: one the file lacks is named in the note
/// rather than silently not shown.
fn restore_alloc(state: AppState, an: Analysis, w: &View, missed: Vec<String>, then: Then) {
    match (w.alloc, state.device.get_untracked()) {
        (Some(alloc), Some(device)) => {
            state.request(Request::Allocation { device, alloc }, None, move |r| {
                let mut missed = missed;
                match r {
                    Response::Allocation(_) => an.selected.set(Some(alloc)),
                    _ => missed.push(format!("allocation {alloc} (not in this trace)")),
                }
                then(missed)
            });
        }
        _ => then(missed),
    }
}

/// The block is looked for in the segments at the wanted entry (asked of the worker, since
/// the slider's answer may still be on its way), or in the dump's.
fn restore_block(state: AppState, w: &View, missed: Vec<String>, then: Then) {
    let Some(block) = w.block else {
        return then(missed);
    };
    let pin = move |found: bool, mut missed: Vec<String>| {
        if found {
            state.pinned.set(Some(block));
        } else {
            missed.push(format!("block {block:#x} (not in this view)"));
        }
        then(missed)
    };
    let entry = w.entry.filter(|&e| e < entries(&state));
    match (entry, state.device.get_untracked()) {
        (Some(index), Some(device)) => {
            state.request(Request::StateAt { device, index }, None, move |r| {
                let found =
                    matches!(&r, Response::StateAt(v) if v.segments.block_at(block).is_some());
                pin(found, missed)
            })
        }
        _ => {
            let found = state
                .segments
                .with_untracked(|s| s.as_ref().is_some_and(|v| v.block_at(block).is_some()));
            pin(found, missed)
        }
    }
}

/// The rank a job's link names, among the ranks open: `Ok(index)`, or what to say.
fn rank_index(state: AppState, rank: u32) -> Result<usize, String> {
    state.fleet.ranks.with_untracked(|ranks| {
        ranks
            .iter()
            .position(|r| r.rank == rank)
            .ok_or_else(|| format!("rank {rank} (not among the {} files open)", ranks.len()))
    })
}

#[component]
pub fn ViewLink() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    // What the address asked for when the page loaded; taken by the first file that opens
    // (of a job, the rank's file).
    let pending = StoredValue::new(view_address::wanted());
    // The file a wanted rank opens: other ranks' files are not the view asked for (empty once
    // the rank proved missing).
    let rank_file = StoredValue::new(None::<String>);
    // The address is written only once the wanted view is restored (or none was asked for).
    let restoring = RwSignal::new(pending.with_value(Option::is_some));
    // A job's link without its files' addresses: they were opened from disk.
    let note = RwSignal::new(pending.with_value(|p| {
        p.as_ref()
            .and_then(|w| w.view.rank)
            .filter(|_| !view_address::has_url())
            .map(|r| format!("This link shows rank {r} of a job: open its files to see it."))
    }));
    let copied = RwSignal::new(false);
    let panel = RwSignal::new(None::<String>);
    // Scrolls made by a restore are not the user's: none is read until this time (ms).
    let quiet_until = StoredValue::new(0.0);

    // A job opened with a rank asked for: that rank is shown instead of the first to open.
    Effect::new(move |_| {
        // Once: the ranks' statuses change as their summaries arrive.
        if state.fleet.ranks.with(Vec::is_empty) || rank_file.with_value(Option::is_some) {
            return;
        }
        let Some(rank) = pending.with_value(|p| p.as_ref().and_then(|w| w.view.rank)) else {
            return;
        };
        match rank_index(state, rank) {
            Ok(index) => {
                let name = state.fleet.ranks.with_untracked(|r| r[index].name.clone());
                rank_file.set_value(Some(name));
                note.set(None);
                state.show_rank(index);
            }
            Err(why) => {
                rank_file.set_value(Some(String::new()));
                pending.update_value(|p| {
                    if let Some(w) = p {
                        w.view.rank = None;
                        w.bad.push(why);
                    }
                });
                note.set(None);
            }
        }
    });

    Effect::new(move |_| {
        let Some(file) = state.file.get() else { return };
        let Some(Wanted { view: w, bad }) = pending.get_value() else {
            return;
        };
        let mut missed = bad;
        if let Some(rank) = w.rank {
            if state.fleet.ranks.with_untracked(Vec::is_empty) {
                missed.push(format!("rank {rank} (one file is open, not a job's ranks)"));
            } else if rank_file.with_value(|f| f.as_deref() != Some(file.name.as_str())) {
                return; // another rank's file: the wanted one is still opening
            }
        }
        pending.set_value(None);
        note.set(None);
        match w.device {
            Some(d) if file.devices.iter().any(|x| x.device == d) => state.select_device(Some(d)),
            Some(d) => missed.push(format!("device {d} (not in this file)")),
            None => {}
        }
        // Two frames: the device's views and the resets of its range run in between.
        next_frame(move || {
            next_frame(move || {
                missed.extend(apply_range_and_entry(state, an, &w));
                let wanted_panel = w.panel.clone();
                let finish: Then = Box::new(move |mut missed: Vec<String>| {
                    let say = move |missed: Vec<String>| {
                        if !missed.is_empty() {
                            note.set(Some(format!("Opened without {}.", missed.join(", "))));
                        }
                        restoring.set(false);
                    };
                    match wanted_panel {
                        Some(name) => {
                            quiet_until.set_value(js_sys::Date::now() + QUIET_MS);
                            panel.set(Some(name.clone()));
                            let shown = name.clone();
                            view_panel::show(name, PANEL_TRIES, PANEL_EVERY_MS, move |found| {
                                if !found {
                                    missed.push(format!("panel {shown} (not on this page)"));
                                    panel.set(None);
                                }
                                say(missed)
                            });
                        }
                        None => say(missed),
                    }
                });
                let block_then: Then = {
                    let w = w.clone();
                    Box::new(move |missed| restore_block(state, &w, missed, finish))
                };
                restore_alloc(state, an, &w, missed, block_then);
            })
        });
    });

    // The panel looked at: the one clicked, or after a scroll the one at the column's top. A
    // click wins over the scroll before it, whose answer comes WRITE_MS later: a click on a
    // block that scrolled into view was overridden by the panel above it at the top (seen in
    // page_view_link on a loaded machine).
    let clicked_at = StoredValue::new(f64::NEG_INFINITY);
    let _ = window_event_listener(leptos::ev::pointerdown, move |e| {
        if let Some(name) = view_panel::clicked(e.target()) {
            clicked_at.set_value(js_sys::Date::now());
            panel.set(Some(name));
        }
    });
    let scroll_scheduled = StoredValue::new(false);
    let on_scroll = wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || {
        if scroll_scheduled.get_value() {
            return;
        }
        scroll_scheduled.set_value(true);
        let scrolled_at = js_sys::Date::now();
        let later = wasm_bindgen::closure::Closure::once_into_js(move || {
            scroll_scheduled.set_value(false);
            let now = js_sys::Date::now();
            if now >= quiet_until.get_value() && clicked_at.get_value() < scrolled_at {
                panel.set(view_panel::in_view());
            }
        });
        let _ = window()
            .set_timeout_with_callback_and_timeout_and_arguments_0(later.unchecked_ref(), WRITE_MS);
    });
    // Scroll events do not bubble: caught on their way down, from the views column or the page.
    let options = web_sys::AddEventListenerOptions::new();
    options.set_capture(true);
    options.set_passive(true);
    let _ = document().add_event_listener_with_callback_and_add_event_listener_options(
        "scroll",
        on_scroll.as_ref().unchecked_ref(),
        &options,
    );
    on_scroll.forget();

    // Written at most every WRITE_MS (a zoom burst changes the range every frame, and browsers
    // throttle a page that replaces its address too often).
    let scheduled = StoredValue::new(false);
    Effect::new(move |_| {
        state.device.track();
        state.fleet.shown.track();
        state.pinned.track();
        panel.track();
        an.range.track();
        an.cursor.track();
        an.selected.track();
        if state.file.with(Option::is_none) || restoring.get() || scheduled.get_value() {
            return;
        }
        scheduled.set_value(true);
        let later = wasm_bindgen::closure::Closure::once_into_js(move || {
            scheduled.set_value(false);
            let Some(file) = state.file.get_untracked() else {
                return;
            };
            let rank = state.fleet.shown.get_untracked().and_then(|i| {
                state
                    .fleet
                    .ranks
                    .with_untracked(|r| r.get(i).map(|r| r.rank))
            });
            let view = View {
                device: state.device.get_untracked(),
                range: range_of(an.range.get_untracked()),
                entry: an.cursor.get_untracked(),
                alloc: an.selected.get_untracked(),
                block: state.pinned.get_untracked(),
                panel: panel.get_untracked(),
                rank,
            };
            view_address::write(&file.name, &view);
        });
        let _ = window()
            .set_timeout_with_callback_and_timeout_and_arguments_0(later.unchecked_ref(), WRITE_MS);
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

    view! {
        <div class="view-link">
            {move || state.file.with(Option::is_some).then(|| view! {
                <button class="button small" data-testid="copy-link" on:click=copy
                    title="Copy the address of this view (rank, device, range, entry, block, panel)">
                    {move || if copied.get() { "Link copied" } else { "Copy link" }}
                </button>
            })}
            {move || note.get().map(|n| view! { <span class="muted small" data-testid="link-note">{n}</span> })}
        </div>
    }
}
