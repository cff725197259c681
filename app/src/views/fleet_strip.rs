//! The fleet overview's strip: every rank as one small bar (peak reserved, with peak allocated
//! inside, a coloured cap for each flag), drawn on one canvas so that a set of 4,096 ranks costs
//! one element, not ~11 per rank (which grew the page ~30 KB a rank). Rows wrap at the panel's
//! width; a click opens the rank under the pointer, hovering names it (the canvas's `title`).
//!
//! What is drawn is also kept (`LAID_OUT`) and answered by `window.memsnapFleetBars()`, a list
//! of the bars in display order with their figures and boxes (CSS pixels in the canvas), so
//! scripts and tests read the overview without an element per bar.

use std::cell::RefCell;

use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use web_sys::HtmlCanvasElement;

use super::timeline::{context_2d, css_var, size_canvas};
use crate::format;
use crate::state::AppState;
use crate::viewmodel::fleet::{reasons, FleetRow};

/// A bar's height, and the cap a flag paints above it.
const BAR_HEIGHT: f64 = 44.0;
const CAP: f64 = 4.0;
/// Space between bars and between rows.
const GAP: f64 = 1.0;

/// The strip as last drawn: each bar's row and box, for hit tests and `memsnapFleetBars`.
#[derive(Default)]
struct Layout {
    bars: Vec<(FleetRow, Rect)>,
    median: Option<usize>,
    /// Bytes of a full bar; taller ranks are clipped to it.
    scale: f64,
}

#[derive(Clone, Copy, Default)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

thread_local! {
    static LAID_OUT: RefCell<Layout> = RefCell::new(Layout::default());
    static QUERY: RefCell<Option<Closure<dyn Fn() -> js_sys::Array>>> = const { RefCell::new(None) };
}

/// Bar width by set size: wide for a few ranks, 3 px from 513 on so 4,096 fit in a few rows.
fn bar_width(n: usize) -> f64 {
    match n {
        0..=64 => 14.0,
        65..=512 => 6.0,
        _ => 3.0,
    }
}

/// The strip for `rows` (sorted already): bars scaled by `scale` bytes (taller ones clipped),
/// `median` the median rank's index; the rank shown is outlined.
#[component]
pub fn FleetStrip(rows: Vec<FleetRow>, scale: f64, median: Option<usize>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let canvas = NodeRef::<html::Canvas>::new();
    let count = rows.len();
    register_query();
    LAID_OUT.with(|l| {
        *l.borrow_mut() = Layout {
            bars: rows.into_iter().map(|r| (r, Rect::default())).collect(),
            median,
            scale,
        }
    });
    Effect::new(move |_| {
        let shown = state.fleet.shown.get();
        if let Some(c) = canvas.get() {
            draw(&c, shown);
        }
    });
    // Rows wrap at the panel's width: a new width lays them out again.
    let resized = window_event_listener(leptos::ev::resize, move |_| {
        if let Some(c) = canvas.get_untracked() {
            draw(&c, state.fleet.shown.get_untracked());
        }
    });
    on_cleanup(move || resized.remove());
    // What `with` gives for the bar under the pointer, if any.
    fn under<T>(e: &web_sys::MouseEvent, with: impl Fn(&FleetRow, f64) -> T) -> Option<T> {
        let (x, y) = (e.offset_x() as f64, e.offset_y() as f64);
        LAID_OUT.with(|l| {
            let l = l.borrow();
            (l.bars.iter())
                .find(|(_, b)| x >= b.x && x < b.x + b.w + GAP && y >= b.y && y < b.y + b.h + GAP)
                .map(|(r, _)| with(r, l.scale))
        })
    }
    let on_click = move |e: web_sys::MouseEvent| {
        if let Some(index) = under(&e, |r, _| r.index) {
            state.show_rank(index);
        }
    };
    let on_move = move |e: web_sys::MouseEvent| {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let _ = match under(&e, title) {
            Some(t) => c.set_attribute("title", &t),
            None => c.remove_attribute("title"),
        };
    };
    view! {
        <div class="fleet-strip">
            <canvas node_ref=canvas data-testid="fleet-strip" data-bars=count.to_string()
                class="fleet-strip-canvas" on:click=on_click on:mousemove=on_move></canvas>
        </div>
    }
}

/// The hover text of a bar: the rank, its file and figures, why it is flagged.
fn title(r: &FleetRow, scale: f64) -> String {
    let why = reasons(&r.flags);
    format!(
        "rank {} · {}\npeak reserved {} · peak allocated {}\nfragmentation {:.0}% · {} OOM(s){}{}{}",
        r.rank,
        r.file,
        format::bytes(r.peak_reserved),
        format::bytes(r.peak_allocated),
        r.fragmentation * 100.0,
        r.ooms,
        r.top_frame.as_deref().map(|f| format!("\ntop frame at the peak: {f}")).unwrap_or_default(),
        if why.is_empty() { String::new() } else { format!("\nflagged: {}", why.join(", ")) },
        if r.peak_reserved as f64 > scale { "\n(clipped at 3× the median)" } else { "" },
    )
}

/// Lays the bars out in rows at the canvas's width and paints them; `shown` gets an outline.
fn draw(canvas: &HtmlCanvasElement, shown: Option<usize>) {
    let ratio = web_sys::window()
        .map_or(1.0, |w| w.device_pixel_ratio())
        .max(1.0);
    let width = (canvas.parent_element().map_or(0, |p| p.client_width()) as f64 - 2.0).max(60.0);
    let colour = |name: &str, fallback: &str| css_var(canvas, name, fallback);
    let (track, reserved, allocated) = (
        colour("--track", "#eef0f3"),
        colour("--unmapped", "#c9cfd8"),
        colour("--allocated", "#3aa374"),
    );
    let (error, text, accent) = (
        colour("--error", "#d33c3c"),
        colour("--text", "#1c2430"),
        colour("--accent", "#2563eb"),
    );
    LAID_OUT.with(|l| {
        let mut l = l.borrow_mut();
        let n = l.bars.len();
        let w = bar_width(n);
        let per_row = (((width + GAP) / (w + GAP)).floor() as usize).max(1);
        let rows = n.div_ceil(per_row).max(1);
        let row_h = CAP + BAR_HEIGHT + GAP;
        let height = rows as f64 * row_h;
        size_canvas(canvas, (width * ratio) as u32, (height * ratio) as u32);
        let style = web_sys::HtmlElement::style(canvas);
        let _ = style.set_property("width", &format!("{width}px"));
        let _ = style.set_property("height", &format!("{height}px"));
        let Some(ctx) = context_2d(canvas) else {
            return;
        };
        let _ = ctx.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0);
        ctx.clear_rect(0.0, 0.0, width, height);
        let (scale, median) = (l.scale.max(1.0), l.median);
        for (i, (r, rect)) in l.bars.iter_mut().enumerate() {
            let (x, top) = (
                (i % per_row) as f64 * (w + GAP),
                (i / per_row) as f64 * row_h,
            );
            let y = top + CAP;
            *rect = Rect {
                x,
                y: top,
                w,
                h: CAP + BAR_HEIGHT,
            };
            let part = |v: u64| (v as f64 / scale).min(1.0) * BAR_HEIGHT;
            ctx.set_fill_style_str(&track);
            ctx.fill_rect(x, y, w, BAR_HEIGHT);
            ctx.set_fill_style_str(&reserved);
            let h = part(r.peak_reserved);
            ctx.fill_rect(x, y + BAR_HEIGHT - h, w, h);
            let inside = if r.ooms > 0 {
                &error
            } else if median == Some(r.index) {
                "#2f6fde"
            } else {
                &allocated
            };
            ctx.set_fill_style_str(inside);
            let h = part(r.peak_allocated);
            ctx.fill_rect(x, y + BAR_HEIGHT - h, w, h);
            // One cap: the flag that matters most (the legend's colours, as the CSS had them).
            let f = &r.flags;
            let cap = if r.ooms > 0 {
                Some(error.as_str())
            } else if f.high_peak || f.low_peak {
                Some("#e8833a")
            } else if f.top_frame_differs {
                Some("#8a4fd6")
            } else if f.fragmented {
                Some("#c2a400")
            } else {
                None
            };
            if let Some(c) = cap {
                ctx.set_fill_style_str(c);
                ctx.fill_rect(x, top, w, CAP);
            }
            if r.peak_reserved as f64 > scale {
                ctx.set_fill_style_str(&text);
                ctx.fill_rect(x, y, w, 3.0);
            }
            if shown == Some(r.index) {
                ctx.set_stroke_style_str(&accent);
                ctx.set_line_width(2.0);
                ctx.stroke_rect(x - 1.0, top - 1.0, w + 2.0, CAP + BAR_HEIGHT + 2.0);
            }
        }
    });
}

/// Defines `window.memsnapFleetBars()` once: the bars as last drawn, as JSON.
fn register_query() {
    QUERY.with(|q| {
        if q.borrow().is_some() {
            return;
        }
        let f = Closure::<dyn Fn() -> js_sys::Array>::new(bars);
        if let Some(w) = web_sys::window() {
            let _ = js_sys::Reflect::set(&w, &"memsnapFleetBars".into(), f.as_ref());
        }
        *q.borrow_mut() = Some(f);
    });
}

fn bars() -> js_sys::Array {
    LAID_OUT.with(|l| {
        let l = l.borrow();
        l.bars
            .iter()
            .map(|(r, b)| {
                let o = js_sys::Object::new();
                let set = |k: &str, v: JsValue| {
                    let _ = js_sys::Reflect::set(&o, &k.into(), &v);
                };
                set("index", (r.index as f64).into());
                set("rank", r.rank.into());
                set("file", r.file.as_str().into());
                // Byte counts as strings: JavaScript numbers lose them above 2^53.
                set("peak_reserved", r.peak_reserved.to_string().into());
                set("peak_allocated", r.peak_allocated.to_string().into());
                set("ooms", (r.ooms as f64).into());
                set("outlier", r.flags.is_outlier().into());
                set("median", (l.median == Some(r.index)).into());
                for (k, v) in [("x", b.x), ("y", b.y), ("w", b.w), ("h", b.h)] {
                    set(k, v.into());
                }
                JsValue::from(o)
            })
            .collect()
    })
}
