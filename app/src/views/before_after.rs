//! Before / after: the open file is AFTER; a file picked here is BEFORE. The worker compares
//! them with core `compare::compare` (what `memsnap compare` prints): both files' numbers, the
//! frames whose live bytes grew or shrank, stacks new in AFTER, and segments added.

use leptos::prelude::*;

use super::size::size;
use crate::dom::event_input;
use crate::format;
use crate::protocol::analysis::CompareView;
use crate::protocol::{Request, Response};
use crate::state::AppState;

/// What the panel shows.
#[derive(Clone)]
enum Shown {
    Nothing,
    Comparing(String),
    Done(Box<CompareView>),
    Failed(String),
}

/// `+1.5 MiB`, `-512 B`, `0 B`.
fn change(d: i64) -> String {
    match d {
        0 => "0 B".to_string(),
        d if d > 0 => format!("+{}", format::bytes(d.unsigned_abs())),
        d => format!("-{}", format::bytes(d.unsigned_abs())),
    }
}

/// `/a/b/c/model.py:39:forward` -> `…/c/model.py:39:forward`: the end of a path says the most.
fn short(label: &str) -> String {
    let file_end = label.find(':').unwrap_or(label.len());
    let file = &label[..file_end];
    match file.rmatch_indices('/').nth(1) {
        Some((i, _)) => format!("…{}", &label[i..]),
        None => label.to_string(),
    }
}

fn change_class(d: i64) -> &'static str {
    match d {
        0 => "",
        d if d > 0 => "grew",
        _ => "shrank",
    }
}

#[component]
pub fn BeforeAfter() -> impl IntoView {
    let state = expect_context::<AppState>();
    let shown = RwSignal::new(Shown::Nothing);
    // The BEFORE file, kept to compare again when the device changes (`File` is not `Send`).
    let before = StoredValue::new_local(None::<web_sys::File>);

    let ask = move |file: web_sys::File, device: i64| {
        let name = file.name();
        shown.set(Shown::Comparing(name.clone()));
        let request = Request::CompareWith {
            name: name.clone(),
            size: file.size() as u64,
            device,
        };
        state.request(request, Some(file.into()), move |r| {
            shown.set(match r {
                Response::Compare(v) => Shown::Done(Box::new(v)),
                Response::Failed { message } => Shown::Failed(message),
                other => Shown::Failed(format!("unexpected answer {other:?}")),
            })
        });
    };
    // A new AFTER file or device: compare again with the same BEFORE.
    Effect::new(move |_| {
        let device = state.device.get();
        state.file.track();
        let file = before.get_value();
        if let (Some(file), Some(device)) = (file, device) {
            ask(file, device);
        }
    });
    let on_pick = move |e: leptos::ev::Event| {
        let Some(input) = event_input(&e) else { return };
        let Some(file) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        input.set_value("");
        before.set_value(Some(file.clone()));
        ask(file, state.device.get_untracked().unwrap_or(0));
    };

    move || {
        state.file.get()?;
        Some(view! {
            <section class="panel before-after" data-testid="before-after">
                <h2>"Before / after"</h2>
                <label class="button">
                    "Compare with a before file…"
                    <input type="file" data-testid="before-input" accept=".pickle,.pkl,.pk,application/octet-stream"
                        on:change=on_pick/>
                </label>
                <p class="muted hint">"this file is AFTER; the file picked is BEFORE"</p>
                {move || match shown.get() {
                    Shown::Nothing => None,
                    Shown::Comparing(name) => Some(view! {
                        <p class="muted">{format!("comparing with {name}…")}</p>
                    }.into_any()),
                    Shown::Failed(m) => Some(view! {
                        <div class="error" role="alert" data-testid="before-error">{m}</div>
                    }.into_any()),
                    Shown::Done(v) => Some(result(*v).into_any()),
                }}
            </section>
        })
    }
}

fn result(v: CompareView) -> impl IntoView {
    let (b, a) = (&v.before, &v.after);
    let sizes = [
        (
            "Peak allocated",
            "peak-allocated",
            b.peak_allocated,
            a.peak_allocated,
        ),
        (
            "Peak reserved",
            "peak-reserved",
            b.peak_reserved,
            a.peak_reserved,
        ),
        (
            "Reserved at dump",
            "dump-reserved",
            b.dump_reserved,
            a.dump_reserved,
        ),
        (
            "Reserved − allocated",
            "reserved-gap",
            b.reserved_minus_allocated,
            a.reserved_minus_allocated,
        ),
        (
            "Largest hole",
            "largest-free",
            b.largest_free,
            a.largest_free,
        ),
    ];
    let rows = sizes
        .into_iter()
        .map(|(label, key, x, y)| {
            let d = (y as i128 - x as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
            view! {
                <tr data-row=key>
                    <th>{label}</th>
                    <td data-value=x.to_string()>{size(x)}</td>
                    <td data-value=y.to_string()>{size(y)}</td>
                    <td class=change_class(d)>{change(d)}</td>
                </tr>
            }
        })
        .collect_view();
    let pct = |f: f64| format!("{:.0}%", f * 100.0);
    let frames = v
        .frames
        .iter()
        .map(|f| {
            view! {
                <tr data-testid="frame-change" title=f.label.clone()>
                    <td class=change_class(f.peak_change) data-value=f.peak_change.to_string()>{change(f.peak_change)}</td>
                    <td class=change_class(f.dump_change)>{change(f.dump_change)}</td>
                    <td class="frame-label">{short(&f.label)}</td>
                </tr>
            }
        })
        .collect_view();
    let more_frames = (v.frames_total > v.frames.len() as u64)
        .then(|| format!("… {} more frames", v.frames_total - v.frames.len() as u64));
    let new_stacks = v
        .new_stacks
        .iter()
        .map(|g| {
            view! {
                <li title=g.label.clone()>{format!("{} ({} allocations) {}", format::bytes(g.bytes), g.count, short(&g.label))}</li>
            }
        })
        .collect_view();
    view! {
        <div class="muted">{format!("before: {} · device {}", v.before_name, v.device)}</div>
        <table data-testid="before-after-table">
            <tr><th></th><th>"before"</th><th>"after"</th><th>"change"</th></tr>
            {rows}
            <tr data-row="fragmentation">
                <th>"Fragmentation"</th><td>{pct(b.fragmentation)}</td><td>{pct(a.fragmentation)}</td>
                <td>{format!("{:+.0} points", (a.fragmentation - b.fragmentation) * 100.0)}</td>
            </tr>
            <tr data-row="segments">
                <th>"Segments"</th><td>{b.segments}</td><td>{a.segments}</td>
                <td>{format!("{:+}", a.segments as i64 - b.segments as i64)}</td>
            </tr>
        </table>
        <h3>"By frame: live bytes at each file's peak, and at its dump"</h3>
        {if v.frames.is_empty() {
            view! { <p class="muted" data-testid="no-change">"no frame's live bytes changed"</p> }.into_any()
        } else {
            view! { <table class="frame-changes">{frames}</table> }.into_any()
        }}
        {more_frames.map(|m| view! { <p class="muted">{m}</p> })}
        <h3>{format!("New in after: {} stacks, {} at its peak", v.new_stacks_total, format::bytes(v.new_stacks_bytes))}</h3>
        <ul class="new-stacks">{new_stacks}</ul>
        <p class="muted" data-testid="segments-added">{format!(
            "segments added: {} ({}); removed: {} ({})",
            v.segments_added, format::bytes(v.segments_added_bytes),
            v.segments_removed, format::bytes(v.segments_removed_bytes)
        )}</p>
    }
}
