//! Flame graph: live bytes by stack after a point (default the range's peak, or the state
//! slider's entry), or bytes × entries lived inside the range. Torch internals, the standard
//! library and native frames are hidden unless "all frames" is on.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::analysis_state::{range, Analysis, Picked};
use crate::format;
use crate::protocol::analysis::{FlameMeasure, FlameRequest, FlameView};
use crate::protocol::{Request, Response};
use crate::state::AppState;

const ROW: f64 = 20.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Peak,
    Cursor,
    Lifetime,
}

#[component]
pub fn FlameGraph() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    let mode = RwSignal::new(Mode::Peak);
    let all_frames = RwSignal::new(false);
    let data = RwSignal::new(None::<FlameView>);

    Effect::new(move |_| {
        let Some(device) = state.device.get() else {
            data.set(None);
            return;
        };
        let r = range(&state, &an);
        let measure = match mode.get() {
            Mode::Peak => FlameMeasure::LiveAt(None),
            Mode::Cursor => FlameMeasure::LiveAt(an.cursor.get().map(|c| c.saturating_sub(1))),
            Mode::Lifetime => FlameMeasure::BytesTimesLifetime,
        };
        let req = FlameRequest {
            device,
            range: r,
            measure,
            all_frames: all_frames.get(),
        };
        state.request_background(Request::Flame(req), move |resp| match resp {
            Response::Flame(v) if v.measure == req.measure => data.set(Some(v)),
            Response::Failed { message } => state.load_error.set(Some(message)),
            _ => {}
        });
    });

    // One handler for all nodes (they are one HTML string: hundreds of Leptos nodes with a
    // closure each took the page's main thread long enough to delay a timeline zoom).
    let on_click = move |e: leptos::ev::MouseEvent| {
        let index = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.closest("[data-index]").ok().flatten())
            .and_then(|el| el.get_attribute("data-index"))
            .and_then(|i| i.parse::<usize>().ok());
        let Some(picked) =
            index.and_then(|i| data.with_untracked(|d| d.as_ref().and_then(|d| picked(d, i))))
        else {
            return;
        };
        an.pick(&state, picked);
    };

    move || {
        state.device.get()?;
        Some(view! {
            <section class="panel flame" data-testid="flamegraph"
                data-total=move || data.with(|d| d.as_ref().map(|d| d.total.to_string()).unwrap_or_default())
                data-nodes=move || data.with(|d| d.as_ref().map_or(0, |d| d.nodes.len())).to_string()>
                <div class="panel-head">
                    <h2>"Flame graph"</h2>
                    <span class="muted">{move || data.get().map(|d| match d.measure {
                        FlameMeasure::LiveAt(_) => format!("{} live{}", format::bytes(d.total),
                            d.point.map(|p| format!(" after entry {p}")).unwrap_or_else(|| " at the dump".into())),
                        FlameMeasure::BytesTimesLifetime => format!("{:.3e} byte·entries", d.total as f64),
                    })}</span>
                    <span class="spacer"></span>
                    <label class="control">"Measure "
                        <select data-testid="flame-measure" on:change=move |e| mode.set(match event_target_value(&e).as_str() {
                            "cursor" => Mode::Cursor,
                            "lifetime" => Mode::Lifetime,
                            _ => Mode::Peak,
                        })>
                            <option value="peak">"live bytes at the peak"</option>
                            <option value="cursor">"live bytes at the slider's entry"</option>
                            <option value="lifetime">"bytes × lifetime"</option>
                        </select>
                    </label>
                    <label class="control check"><input type="checkbox" data-testid="flame-all-frames"
                        prop:checked=move || all_frames.get()
                        on:change=move |e| all_frames.set(event_target_checked(&e))/>"all frames (torch, stdlib, native)"</label>
                </div>
                <div class="flame-scroll">
                    {move || data.with(|d| d.as_ref().map(|d| {
                        let depth = d.nodes.iter().map(|n| n.depth).max().unwrap_or(0) + 1;
                        view! {
                            <div class="flame-canvas" style=format!("height:{}px", depth as f64 * ROW)
                                inner_html=nodes_html(d) on:click=on_click></div>
                        }
                    }))}
                </div>
            </section>
        })
    }
}

/// The nodes as absolutely placed elements, each with its index for the delegated click. Frame
/// names come from the file, so they are escaped.
fn nodes_html(d: &FlameView) -> String {
    use std::fmt::Write;
    let total = d.total.max(1) as f64;
    let lifetime = d.measure == FlameMeasure::BytesTimesLifetime;
    let mut html = String::with_capacity(d.nodes.len() * 200);
    for (i, n) in d.nodes.iter().enumerate() {
        let left = n.offset as f64 / total * 100.0;
        let width = n.value as f64 / total * 100.0;
        let amount = if lifetime {
            format!("{:.3e} byte·entries", n.value as f64)
        } else {
            format::bytes(n.value)
        };
        let _ = write!(
            html,
            "<div class=\"flame-node\" data-index=\"{i}\" title=\"{}\n{amount} ({width:.1}%)\" \
             style=\"left:{left:.4}%;width:{width:.4}%;top:{}px;background:hsl({},70%,68%)\">\
             <span>{}</span></div>",
            escape(&n.name),
            n.depth as f64 * ROW,
            name_hue(&n.name),
            escape(&short(&n.name)),
        );
    }
    html
}

/// What the stack panel shows for node `i`.
fn picked(d: &FlameView, i: usize) -> Option<Picked> {
    let n = d.nodes.get(i)?;
    let value = n.value;
    let weight = if d.measure == FlameMeasure::BytesTimesLifetime {
        format!("{value} byte·entries")
    } else {
        format!("{} ({value} B)", format::bytes(value))
    };
    Some(Picked {
        facts: vec![("Frame".into(), n.name.clone()), ("Weight".into(), weight)],
        caption: String::new(),
        frames: Vec::new(),
    })
}

/// Text safe inside an element or a quoted attribute.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Warm hues, stable per frame name.
fn name_hue(name: &str) -> u32 {
    let h = name
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    h % 55
}

/// The function and file's last component: `forward (model.py:42)`.
fn short(name: &str) -> String {
    // `file:line:name`; C++ names may contain `::`, so split the file and line off the front.
    let mut parts = name.splitn(3, ':');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(file), Some(line), Some(func)) if line.chars().all(|c| c.is_ascii_digit()) => {
            let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
            format!("{func} ({base}:{line})")
        }
        _ => name.to_string(),
    }
}
