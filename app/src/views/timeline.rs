//! Timeline: allocated and reserved bytes over the range filter's entries, each large
//! allocation a band stacked as in MemoryViz's Active Memory Timeline, the peak marked.
//! The worker sends one LOD point and one band column per pixel for the visible range, so
//! drawing costs the same at a million entries as at a thousand. Wheel zooms around the pointer,
//! drag pans, double-click shows the whole trace; hovering or clicking a band shows it in the
//! stack panel.

use std::sync::Arc;

use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::{Clamped, JsCast};
use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement, ImageData};

use super::analysis_state::{drawn_range, entries, range, time_label, Analysis, Picked};
use super::size::size;
use crate::format;
use crate::perf;
use crate::protocol::analysis::{AllocationView, EntryRange, TimelineRequest, TimelineView};
use crate::protocol::{PlotSize, Request, Response};
use crate::state::AppState;

const HEIGHT: f64 = 260.0;
/// Plot margins: y labels on the left, x labels below.
const LEFT: f64 = 70.0;
const RIGHT: f64 = 10.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 22.0;
/// Zooming in stops at this many entries across the plot.
const MIN_SPAN: u64 = 16;
/// Rows of the bands' pixels written at a time (`draw_with`).
const STRIP_ROWS: usize = 64;

/// The plot's size in pixels on a canvas `w` wide: the margins hold the axes' labels.
fn plot_size(w: f64) -> PlotSize {
    PlotSize {
        width: (w - LEFT - RIGHT).max(1.0) as u32,
        height: (HEIGHT - TOP - BOTTOM) as u32,
    }
}

/// A timeline request in flight, the one queued behind it, and the first screen's epoch.
type Pending = (
    StoredValue<bool>,
    StoredValue<Option<TimelineRequest>>,
    StoredValue<u64>,
);

#[derive(Clone, Copy)]
struct Drag {
    x: f64,
    range: EntryRange,
    moved: bool,
}

/// The timeline, or for a device without a trace (segment-only files) one line saying so, so
/// the views below move up.
#[component]
pub fn Timeline() -> impl IntoView {
    let state = expect_context::<AppState>();
    let traced = Memo::new(move |_| state.file.with(|f| f.is_none()) || entries(&state) > 0);
    move || {
        if traced.get() {
            view! { <TimelineChart/> }.into_any()
        } else {
            view! { <super::no_trace::NoTrace/> }.into_any()
        }
    }
}

#[component]
fn TimelineChart() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    let canvas = NodeRef::<html::Canvas>::new();
    let data = RwSignal::new(None::<Arc<TimelineView>>);
    let width = RwSignal::new(0.0f64);
    let hovered = RwSignal::new(None::<u32>);
    let drag = StoredValue::new(None::<Drag>);
    // One request in flight; a newer wish replaces the queued one (zooming stays responsive).
    let in_flight = StoredValue::new(false);
    let queued = StoredValue::new(None::<TimelineRequest>);
    // Bumped when the open's first screen supplies the data: an answer asked for before it is
    // stale (another file's range) and not shown.
    let epoch = StoredValue::new(0u64);

    let measure = move || {
        if let Some(c) = canvas.get_untracked() {
            let w = c
                .parent_element()
                .map(|p| p.client_width() as f64)
                .unwrap_or(800.0);
            let w = w.max(200.0);
            width.set(w);
            state.timeline_plot.set_value(Some(plot_size(w)));
        }
    };
    let resized = window_event_listener(leptos::ev::resize, move |_| measure());
    on_cleanup(move || resized.remove());

    fn send(
        state: AppState,
        data: RwSignal<Option<Arc<TimelineView>>>,
        (in_flight, queued, epoch): Pending,
        req: TimelineRequest,
    ) {
        if let Some(view) = state.take_timeline(&req) {
            queued.set_value(None);
            epoch.update_value(|e| *e += 1);
            // Set after the effects this change woke: the one that blanks the chart for a new
            // file must not run after it.
            wasm_bindgen_futures::spawn_local(async move { data.set(Some(Arc::new(view))) });
            return;
        }
        if in_flight.get_value() {
            queued.set_value(Some(req));
            return;
        }
        in_flight.set_value(true);
        let asked = epoch.get_value();
        state.request(Request::Timeline(req), None, move |r| {
            in_flight.set_value(false);
            match r {
                Response::Timeline(v)
                    if state.device.get_untracked() == Some(v.device)
                        && epoch.get_value() == asked =>
                {
                    data.set(Some(Arc::new(v)))
                }
                Response::Failed { message } => state.load_error.set(Some(message)),
                _ => {}
            }
            if let Some(next) = queued.try_update_value(|q| q.take()).flatten() {
                send(state, data, (in_flight, queued, epoch), next);
            }
        });
    }

    // A new file shows nothing until its own timeline comes: never the last file's curve (nor
    // a first paint counted on it).
    Effect::new(move |_| {
        state.file.track();
        data.set(None);
    });

    // Ask for the visible range whenever the device, range or size changes.
    Effect::new(move |_| {
        if width.get() == 0.0 {
            measure();
        }
        let Some(device) = state.device.get() else {
            data.set(None);
            return;
        };
        let r = range(&state, &an);
        let w = width.get();
        if w == 0.0 {
            return;
        }
        let plot = plot_size(w);
        let req = TimelineRequest {
            device,
            range: r,
            width: plot.width,
            height: plot.height,
        };
        send(state, data, (in_flight, queued, epoch), req);
    });

    // Redraw on new data, the slider's entry, or a new hover.
    Effect::new(move |_| {
        let v = data.get();
        let cursor = an.cursor.get();
        let hover = hovered.get();
        let w = width.get();
        if let Some(c) = canvas.get() {
            let started = perf::now();
            draw(&c, w, v.as_deref(), cursor, hover);
            if let Some(v) = &v {
                perf::measure_since(perf::TIMELINE_DRAW, started);
                // What is on the canvas now, for the benchmark to wait on.
                let _ =
                    c.set_attribute("data-drawn", &format!("{}-{}", v.range.start, v.range.end));
                if an.drawn.get_untracked() != Some(v.range) {
                    an.drawn.set(Some(v.range));
                }
                state.painted(perf::View::Timeline);
            }
        }
    });

    // Pointer position -> (entry index, bytes) under it.
    let at = move |x: f64, y: f64| -> Option<(u64, u64)> {
        let v = data.get_untracked()?;
        let plot_w = width.get_untracked() - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let fx = (x - LEFT) / plot_w;
        let fy = (TOP + plot_h - y) / plot_h;
        if !(0.0..1.0).contains(&fx) || !(0.0..=1.0).contains(&fy) {
            return None;
        }
        let index = v.range.start + (fx * v.range.len() as f64) as u64;
        Some((index, (fy * v.y_max as f64) as u64))
    };
    let band_at = move |x: f64, y: f64| -> Option<u32> {
        let (index, bytes) = at(x, y)?;
        data.get_untracked()?.hit(index, bytes)
    };
    let show = move |alloc: u32, sticky: bool| {
        let Some(device) = state.device.get_untracked() else {
            return;
        };
        if !sticky && hovered.get_untracked() == Some(alloc) {
            return;
        }
        hovered.set(Some(alloc));
        if sticky {
            an.selected.set(Some(alloc));
        }
        state.request(Request::Allocation { device, alloc }, None, move |r| {
            if let Response::Allocation(a) = r {
                if hovered.get_untracked() == Some(a.alloc) {
                    an.pick(&state, describe(&a));
                }
            }
        });
    };

    // An allocation selected from elsewhere (the address, `view_link`) is shown as if clicked.
    Effect::new(move |_| {
        if let Some(alloc) = an.selected.get() {
            if hovered.get_untracked() != Some(alloc) {
                show(alloc, true);
            }
        }
    });

    let on_wheel = move |e: leptos::ev::WheelEvent| {
        let n = entries(&state);
        if n == 0 {
            return;
        }
        e.prevent_default();
        let r = range(&state, &an);
        let plot_w = width.get_untracked() - LEFT - RIGHT;
        let fx = ((e.offset_x() as f64 - LEFT) / plot_w).clamp(0.0, 1.0);
        let pivot = r.start as f64 + fx * r.len() as f64;
        let factor = if e.delta_y() > 0.0 { 1.25 } else { 0.8 };
        let span = ((r.len() as f64 * factor).round() as u64).clamp(MIN_SPAN.min(n), n);
        let start = (pivot - fx * span as f64).round().max(0.0) as u64;
        let start = start.min(n - span);
        an.range.set(Some(EntryRange {
            start,
            end: start + span,
        }));
    };
    let on_down = move |e: leptos::ev::MouseEvent| {
        drag.set_value(Some(Drag {
            x: e.offset_x() as f64,
            range: range(&state, &an),
            moved: false,
        }));
    };
    let on_move = move |e: leptos::ev::MouseEvent| {
        let (x, y) = (e.offset_x() as f64, e.offset_y() as f64);
        if let Some(mut d) = drag.get_value().filter(|_| e.buttons() & 1 == 1) {
            let n = entries(&state);
            let dx = x - d.x;
            if dx.abs() >= 3.0 {
                d.moved = true;
                drag.set_value(Some(d));
            }
            if d.moved && n > 0 {
                let plot_w = width.get_untracked() - LEFT - RIGHT;
                let shift = (dx / plot_w * d.range.len() as f64).round() as i64;
                let span = d.range.len();
                let start = (d.range.start as i64 - shift).clamp(0, (n - span) as i64) as u64;
                an.range.set(Some(EntryRange {
                    start,
                    end: start + span,
                }));
            }
            return;
        }
        if let Some(alloc) = band_at(x, y) {
            show(alloc, false);
        }
    };
    let on_up = move |e: leptos::ev::MouseEvent| {
        let d = drag.get_value();
        drag.set_value(None);
        if d.is_some_and(|d| !d.moved) {
            if let Some(alloc) = band_at(e.offset_x() as f64, e.offset_y() as f64) {
                show(alloc, true);
            }
        }
    };

    view! {
        <section class="panel timeline-panel">
            <div class="panel-head">
                <h2>"Timeline"</h2>
                <RangeFilter/>
            </div>
            <div class="legend">
                <span><i class="swatch line-reserved"></i>"reserved"</span>
                <span><i class="swatch band"></i>"allocations (one band each)"</span>
                <span><i class="swatch small"></i>"smaller allocations, summed"</span>
                <span><i class="swatch line-peak"></i>"peak"</span>
                <span><i class="swatch line-cursor"></i>"state slider"</span>
                <span class="muted">"wheel: zoom · drag: pan · double-click: whole trace"</span>
            </div>
            <div class="timeline-wrap">
                <canvas data-testid="timeline" node_ref=canvas height=HEIGHT
                    data-ready=move || data.with(|d| d.is_some()).to_string()
                    data-bands=move || data.with(|d| d.as_ref().map_or(0, |d| d.bands.banded.len())).to_string()
                    on:wheel=on_wheel
                    on:mousedown=on_down
                    on:mousemove=on_move
                    on:mouseup=on_up
                    on:mouseleave=move |_| drag.set_value(None)
                    on:dblclick=move |_| an.range.set(None)></canvas>
            </div>
            {move || data.get().and_then(|v| v.peak.clone().map(|p| {
                let total = p.allocated.max(1);
                let shown: u64 = p.groups.iter().map(|g| g.bytes).sum();
                let other = p.allocated.saturating_sub(shown);
                view! {
                    <div class="peak" data-testid="peak" data-index=p.index.to_string()
                        data-allocated=p.allocated.to_string()>
                        <h3>"Peak of this range: "{size(p.allocated)}" allocated, "{size(p.reserved)}
                            {format!(" reserved, after entry {}{} — {} live allocations", p.index,
                            time_label(p.time_us, v.start_time_us).map(|t| format!(" ({t})")).unwrap_or_default(),
                            p.live_allocations)}
                            {an.phases.get().and_then(|ph| ph.innermost_at(p.index).map(|r| r.path.clone())).map(|path| view! {
                                <span data-testid="peak-in-phase" data-phase=path.clone()>{format!(", in {path}")}</span>
                            })}</h3>
                        <ul class="shares">
                            {p.groups.into_iter().map(|g| {
                                let pct = g.bytes as f64 * 100.0 / total as f64;
                                view! {
                                    <li>
                                        <span class="share-bar"><i style=format!("width:{pct:.1}%")></i></span>
                                        <span class="share-bytes">{size(g.bytes)}</span>
                                        <span class="share-label" title=g.label.clone()>{format!("{} ({}×)", g.label, g.count)}</span>
                                    </li>
                                }
                            }).collect_view()}
                            {(other > 0).then(|| view! {
                                <li class="muted"><span class="share-bar"></span>
                                    <span class="share-bytes">{size(other)}</span>
                                    <span class="share-label">"other frames"</span></li>
                            })}
                        </ul>
                    </div>
                }
            }))}
        </section>
    }
}

/// The shared range filter: entry inputs, times, and a reset.
#[component]
fn RangeFilter() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    let set = move |start: Option<u64>, end: Option<u64>| {
        let n = entries(&state);
        let r = range(&state, &an);
        let s = start.unwrap_or(r.start).min(n);
        let e = end.unwrap_or(r.end).min(n);
        if e > s {
            an.range.set(Some(EntryRange { start: s, end: e }));
        }
    };
    view! {
        <div class="range-filter" data-testid="range-filter"
            data-start=move || range(&state, &an).start.to_string()
            data-end=move || range(&state, &an).end.to_string()>
            <label class="control">"entries "
                <input type="number" min="0" data-testid="range-start"
                    prop:value=move || drawn_range(&state, &an).start.to_string()
                    on:change=move |e| set(event_target_value(&e).parse().ok(), None)/>
            </label>
            <label class="control">" to "
                <input type="number" min="1" data-testid="range-end"
                    prop:value=move || drawn_range(&state, &an).end.to_string()
                    on:change=move |e| set(None, event_target_value(&e).parse().ok())/>
            </label>
            <span class="muted">{move || format!("of {}", entries(&state))}</span>
            <button class="button small" data-testid="range-reset" on:click=move |_| an.range.set(None)>"Whole trace"</button>
        </div>
    }
}

fn describe(a: &AllocationView) -> Picked {
    let exact = |n: u64| format!("{} ({n} B)", format::bytes(n));
    let mut facts = vec![
        ("Allocation".to_string(), format::address(a.addr)),
        ("Size".to_string(), exact(a.size)),
        ("Requested".to_string(), exact(a.requested)),
    ];
    let from = if a.allocated_in_trace {
        a.start.to_string()
    } else {
        "before the trace".to_string()
    };
    let to = if a.freed_in_trace {
        a.end.to_string()
    } else {
        "after the trace (still live)".to_string()
    };
    facts.push((
        "Lifetime".to_string(),
        format!(
            "entries {from} → {to} ({} entries)",
            a.end.saturating_sub(a.start)
        ),
    ));
    if let (Some(t0), Some(t1)) = (a.start_time_us, a.end_time_us) {
        facts.push((
            "Time".to_string(),
            time_label(Some(t1), Some(t0)).unwrap_or_default(),
        ));
    }
    if let Some(s) = a.stream {
        facts.push(("Stream".to_string(), s.to_string()));
    }
    Picked {
        facts,
        caption: "Allocated at".to_string(),
        frames: a.frames.clone(),
    }
}

/// A stable colour per allocation (golden-angle hues, as MemoryViz spreads them).
fn colour(alloc: u32) -> [u8; 3] {
    // In thousandths of a degree, in integers: an f64 `%` is a libm call in wasm, a third of
    // the bands' fill loop.
    let h = (u64::from(alloc) * 137_508 % 360_000) as f64 / 1000.0;
    hsl(h, 0.55, 0.62)
}

fn hsl(h: f64, s: f64, l: f64) -> [u8; 3] {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let sector = h / 60.0;
    // `sector % 2.0` through floor, a wasm instruction (`%` on f64 is a libm call).
    let x = c * (1.0 - (sector - 2.0 * (sector / 2.0).floor() - 1.0).abs());
    let m = l - c / 2.0;
    let (r, g, b) = match sector as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let f = |v: f64| ((v + m) * 255.0).round() as u8;
    [f(r), f(g), f(b)]
}

/// Sizes the canvas for a redraw, only where the size changed: setting a canvas's size, even
/// to the same value, throws away its backing store and its context's state, so the font was
/// parsed again on every zoom step (0.6 ms of a 2–3 ms draw, scripts/profile/profile_page.py --zoom).
/// The caller clears what it redraws.
pub(super) fn size_canvas(canvas: &HtmlCanvasElement, width: u32, height: u32) {
    if canvas.width() != width {
        canvas.set_width(width);
    }
    if canvas.height() != height {
        canvas.set_height(height);
    }
}

/// The canvas's 2D context (None where the browser gives none: nothing is drawn).
pub(super) fn context_2d(canvas: &HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<CanvasRenderingContext2d>().ok())
}

pub(super) fn css_var(el: &HtmlCanvasElement, name: &str, fallback: &str) -> String {
    window()
        .get_computed_style(el)
        .ok()
        .flatten()
        .and_then(|s| s.get_property_value(name).ok())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| fallback.to_string())
}

/// The theme's colours the canvas draws with.
#[derive(Clone)]
struct Palette {
    dark: bool,
    text: String,
    muted: String,
    grid: String,
    accent: String,
}

impl Palette {
    /// The light theme's colours: what a variable the CSS does not set falls back to.
    fn light() -> Palette {
        Palette {
            dark: false,
            text: "#1d2330".into(),
            muted: "#677083".into(),
            grid: "#d9dde3".into(),
            accent: "#2f6fde".into(),
        }
    }
}

thread_local! {
    static PALETTE: std::cell::RefCell<Option<Palette>> = const { std::cell::RefCell::new(None) };
}

fn prefers_dark() -> bool {
    window()
        .match_media("(prefers-color-scheme: dark)")
        .ok()
        .flatten()
        .is_some_and(|m| m.matches())
}

/// The palette, read from the CSS once per colour scheme. Reading computed style forces the
/// browser to recompute style (and layout) first: on the first paint that cost 15–25 ms, as
/// the segment view's new rows were still unstyled (scripts/profile/profile_page.py).
fn palette(canvas: &HtmlCanvasElement) -> Palette {
    let dark = prefers_dark();
    PALETTE.with(|p| {
        let mut p = p.borrow_mut();
        match &*p {
            Some(cached) if cached.dark == dark => cached.clone(),
            _ => {
                let light = Palette::light();
                let fresh = Palette {
                    dark,
                    text: css_var(canvas, "--text", &light.text),
                    muted: css_var(canvas, "--muted", &light.muted),
                    grid: css_var(canvas, "--border", &light.grid),
                    accent: css_var(canvas, "--accent", &light.accent),
                };
                *p = Some(fresh.clone());
                fresh
            }
        }
    })
}

fn draw(
    canvas: &HtmlCanvasElement,
    width: f64,
    v: Option<&TimelineView>,
    cursor: Option<u64>,
    hover: Option<u32>,
) {
    if width <= 0.0 {
        return;
    }
    draw_with(&palette(canvas), canvas, width, v, cursor, hover);
}

fn draw_with(
    palette: &Palette,
    canvas: &HtmlCanvasElement,
    width: f64,
    v: Option<&TimelineView>,
    cursor: Option<u64>,
    hover: Option<u32>,
) {
    size_canvas(canvas, width as u32, HEIGHT as u32);
    let Some(ctx) = context_2d(canvas) else {
        return;
    };
    let Palette {
        text,
        muted,
        grid,
        accent,
        ..
    } = palette;
    ctx.clear_rect(0.0, 0.0, width, HEIGHT);
    ctx.set_font("11px system-ui, sans-serif");
    let plot_w = (width - LEFT - RIGHT).max(1.0);
    let plot_h = HEIGHT - TOP - BOTTOM;
    let Some(v) = v.filter(|v| !v.range.is_empty()) else {
        ctx.set_fill_style_str(muted);
        ctx.fill_text(
            "No trace entries: this file has no allocation history.",
            LEFT,
            TOP + plot_h / 2.0,
        )
        .ok();
        return;
    };
    let y_max = v.y_max.max(1) as f64;
    let span = v.range.len().max(1) as f64;
    let x_of = |i: u64| LEFT + (i.saturating_sub(v.range.start)) as f64 / span * plot_w;
    let y_of = |b: u64| TOP + plot_h - b as f64 / y_max * plot_h;

    // Grid and y labels.
    ctx.set_stroke_style_str(grid);
    ctx.set_line_width(1.0);
    ctx.set_fill_style_str(muted);
    ctx.set_text_align("right");
    for k in 0..=4 {
        let b = (y_max * k as f64 / 4.0) as u64;
        let y = y_of(b).round() + 0.5;
        ctx.begin_path();
        ctx.move_to(LEFT, y);
        ctx.line_to(LEFT + plot_w, y);
        ctx.stroke();
        ctx.fill_text(&format::bytes(b), LEFT - 6.0, y + 4.0).ok();
    }

    // Bands, written as pixels: one rectangle per run of columns a band keeps its place in
    // (`BandLayout::for_each_run`), never per entry. One `u32` per pixel, each rectangle's
    // stretch of a row filled at once (a 4-byte slice copied per pixel cost a cold page
    // 15–20 ms a draw). Where bands thinner than a pixel share a row, the highest shows, as
    // when each column was painted bottom up and its summary last: the summaries go first,
    // then the runs, which come highest first wherever they overlap, fill only what is empty.
    // In strips of rows through one buffer: the whole plot's pixels (1 MB at 1,120 × 226) were
    // most of the page's wasm heap on a small file, and a wasm instance keeps its peak.
    let (pw, ph) = (plot_w as usize, plot_h as usize);
    let strip = STRIP_ROWS.min(ph).max(1);
    let mut px = vec![0u32; pw * strip];
    let to_row = |b: u64| plot_h - b as f64 / y_max * plot_h;
    let columns = &v.bands.columns;
    let x_px = |entry: usize| {
        (entry.saturating_sub(v.range.start as usize) as f64 / span * plot_w) as usize
    };
    let column_px = |c: usize| {
        let x0 = x_px(columns[c].start);
        (x0, x_px(columns[c].end).max(x0 + 1))
    };
    for first_row in (0..ph).step_by(strip) {
        let rows = first_row..(first_row + strip).min(ph);
        let px = &mut px[..rows.len() * pw];
        px.fill(0);
        let mut paint =
            |x0: usize, x1: usize, top: f64, bottom: f64, rgb: [u8; 3], alpha: u8, under: bool| {
                let r0 = (top.max(0.0) as usize).min(ph);
                let r1 = (bottom.ceil().max(0.0) as usize)
                    .min(ph)
                    .max(r0 + 1)
                    .min(ph);
                // The rectangle's rows in this strip.
                let (r0, r1) = (r0.max(rows.start), r1.min(rows.end));
                let (x0, x1) = (x0.min(pw), x1.min(pw));
                if x0 >= x1 || r0 >= r1 {
                    return;
                }
                // RGBA in memory order, as ImageData reads the bytes.
                let value = u32::from_ne_bytes([rgb[0], rgb[1], rgb[2], alpha]);
                let at = |r: usize| (r - rows.start) * pw;
                for row in px[at(r0)..at(r1)].chunks_exact_mut(pw) {
                    if under {
                        for p in &mut row[x0..x1] {
                            *p = if *p == 0 { value } else { *p };
                        }
                    } else {
                        row[x0..x1].fill(value);
                    }
                }
            };
        for (c, col) in columns.iter().enumerate() {
            let (x0, x1) = column_px(c);
            if col.summary_max > 0 {
                paint(
                    x0,
                    x1,
                    to_row(col.top.saturating_add(col.summary_max)),
                    to_row(col.top),
                    [150, 158, 172],
                    150,
                    false,
                );
            }
        }
        v.bands.for_each_run(|run| {
            let Some((alloc, _)) = v.bands.band(run.band) else {
                return;
            };
            let alloc = alloc as u32;
            let rgb = if hover == Some(alloc) {
                [30, 30, 30]
            } else {
                colour(alloc)
            };
            let (x0, x1) = (column_px(run.first_column).0, column_px(run.last_column).1);
            paint(x0, x1, to_row(run.y1), to_row(run.y0), rgb, 255, true);
        });
        // SAFETY: the same memory seen as bytes (u8 has no alignment or validity to break).
        let bytes = unsafe { std::slice::from_raw_parts(px.as_ptr().cast::<u8>(), px.len() * 4) };
        if let Ok(img) = ImageData::new_with_u8_clamped_array_and_sh(
            Clamped(bytes),
            pw as u32,
            rows.len() as u32,
        ) {
            ctx.put_image_data(&img, LEFT, TOP + first_row as f64).ok();
        }
    }

    // Reserved (its max per column) as a step line over the bands.
    ctx.set_stroke_style_str(text);
    ctx.set_line_width(1.5);
    ctx.begin_path();
    for (k, p) in v.reserved.iter().enumerate() {
        let (x0, x1, y) = (x_of(p.start), x_of(p.end), y_of(p.max));
        if k == 0 {
            ctx.move_to(x0, y);
        } else {
            ctx.line_to(x0, y);
        }
        ctx.line_to(x1, y);
    }
    ctx.stroke();

    // The peak inside the range.
    if let Some(p) = &v.peak {
        let x = x_of(p.index).round() + 0.5;
        ctx.set_stroke_style_str("#d33c2f");
        ctx.set_line_width(1.0);
        ctx.set_line_dash(&js_sys::Array::of2(&4.into(), &3.into()))
            .ok();
        ctx.begin_path();
        ctx.move_to(x, TOP);
        ctx.line_to(x, TOP + plot_h);
        ctx.stroke();
        ctx.set_line_dash(&js_sys::Array::new()).ok();
        ctx.set_fill_style_str("#d33c2f");
        let label = format!("peak {}", format::bytes(p.allocated));
        let right = x > LEFT + plot_w * 0.8;
        ctx.set_text_align(if right { "right" } else { "left" });
        ctx.fill_text(&label, if right { x - 4.0 } else { x + 4.0 }, TOP + 10.0)
            .ok();
    }

    // The state slider's entry.
    if let Some(c) = cursor.filter(|c| *c >= v.range.start && *c <= v.range.end) {
        let x = x_of(c).round() + 0.5;
        ctx.set_stroke_style_str(accent);
        ctx.set_line_width(2.0);
        ctx.begin_path();
        ctx.move_to(x, TOP);
        ctx.line_to(x, TOP + plot_h);
        ctx.stroke();
    }

    // X labels: the range's first and last entries, with times when recorded.
    ctx.set_fill_style_str(muted);
    let with_time = |i: u64, t: Option<i64>| match time_label(t, v.start_time_us) {
        Some(t) => format!("entry {i} · +{t}"),
        None => format!("entry {i}"),
    };
    ctx.set_text_align("left");
    ctx.fill_text(
        &with_time(v.range.start, v.start_time_us),
        LEFT,
        HEIGHT - 6.0,
    )
    .ok();
    ctx.set_text_align("right");
    ctx.fill_text(
        &with_time(v.range.end, v.end_time_us),
        LEFT + plot_w,
        HEIGHT - 6.0,
    )
    .ok();
    ctx.set_text_align("center");
    ctx.fill_text(
        &format!("{} entries shown", v.range.len()),
        LEFT + plot_w / 2.0,
        HEIGHT - 6.0,
    )
    .ok();
}
