//! Every rank's reduced timeline (`RankSummary`'s ~256 points of its peak device, kept as a
//! `Curve`) overlaid on one canvas: reserved bytes over the trace, each trace stretched to the
//! full width so ranks with different entry counts line up by phase. Faint grey for all, blue for the median rank,
//! orange for the rank shown: a rank whose curve leaves the bundle stands out at any count.
//!
//! Drawn with the 2D canvas API directly, like the timeline view: one path per rank, the only
//! chart furniture a scale label, so plotters-canvas would add a dependency (and its compile
//! time on CI's two cores) for no drawing it does here.

use super::timeline::{context_2d, size_canvas};
use leptos::html;
use leptos::prelude::*;
use web_sys::HtmlCanvasElement;

use crate::format;
use crate::state::{AppState, Curve};
use crate::viewmodel::fleet::median_rank;

const HEIGHT: f64 = 160.0;
const LEFT: f64 = 8.0;
const TOP: f64 = 18.0;

#[component]
pub fn FleetTimelines() -> impl IntoView {
    let state = expect_context::<AppState>();
    let fleet = state.fleet;
    let canvas = NodeRef::<html::Canvas>::new();
    Effect::new(move |_| {
        let shown = fleet.shown.get();
        let Some(c) = canvas.get() else { return };
        fleet.open.with(|o| {
            let figures = memsnap_core::analysis::fleet::fleet(&o.summaries);
            let median = median_rank(&o.index, &o.summaries, &figures);
            let at = |i: Option<usize>| i.and_then(|i| o.index.iter().position(|&x| x == i));
            draw(&c, &o.curves, at(median), at(shown));
        });
    });
    move || {
        (!fleet.ranks.with(|r| r.is_empty())).then(|| {
            view! {
                <section class="panel fleet-timelines">
                    <h2>"Reserved over the trace, every rank"</h2>
                    <p class="muted hint">"each rank's trace stretched to the width · "
                        <span class="key-median">"median rank"</span>" · "<span class="key-shown">"rank shown"</span></p>
                    <canvas node_ref=canvas data-testid="fleet-timelines" class="fleet-timelines-canvas"></canvas>
                </section>
            }
        })
    }
}

fn draw(canvas: &HtmlCanvasElement, ranks: &[Curve], median: Option<usize>, shown: Option<usize>) {
    let width = canvas.client_width().max(300) as f64;
    size_canvas(canvas, width as u32, HEIGHT as u32);
    let Some(ctx) = context_2d(canvas) else {
        return;
    };
    ctx.clear_rect(0.0, 0.0, width, HEIGHT);
    // Each rank's highest point; the scale stops at 3x their median (as the bars do), so one
    // huge rank does not flatten the rest: its curve leaves through the top.
    let mut highs: Vec<u64> = ranks.iter().filter_map(|r| r.highest).collect();
    highs.sort_unstable();
    let middle = highs
        .get(highs.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0);
    let highest = highs.last().copied().unwrap_or(0);
    let scale = highest.min(middle.saturating_mul(3));
    let _ = canvas.set_attribute("data-ranks", &ranks.len().to_string());
    if scale == 0 {
        return;
    }
    let (w, h) = (width - 2.0 * LEFT, HEIGHT - TOP - 4.0);
    ctx.set_fill_style_str("#677083");
    ctx.set_font("11px sans-serif");
    let label = if scale < highest {
        format!(
            "{} (3× the median rank's highest; taller curves clipped)",
            format::bytes(scale)
        )
    } else {
        format!("{} (highest)", format::bytes(scale))
    };
    let _ = ctx.fill_text(&label, LEFT, 12.0);
    ctx.save();
    ctx.begin_path();
    ctx.rect(0.0, TOP - 1.0, width, h + 5.0);
    ctx.clip();
    // Faint enough that hundreds of identical curves still read as one band.
    let alpha = (8.0 / ranks.len().max(1) as f64).clamp(0.03, 0.6);
    let path = |r: &Curve| {
        if r.points.is_empty() {
            return;
        }
        ctx.begin_path();
        for (k, &(at, reserved)) in r.points.iter().enumerate() {
            let x = LEFT + at as f64 * w;
            let y = TOP + h - reserved as f64 / scale as f64 * h;
            if k == 0 {
                ctx.move_to(x, y)
            } else {
                ctx.line_to(x, y)
            }
        }
        ctx.stroke();
    };
    ctx.set_line_width(1.0);
    ctx.set_stroke_style_str(&format!("rgba(103, 112, 131, {alpha:.3})"));
    for r in ranks {
        path(r);
    }
    ctx.set_line_width(2.0);
    for (at, colour) in [(median, "#2f6fde"), (shown, "#e8833a")] {
        if let Some(r) = at.and_then(|i| ranks.get(i)) {
            ctx.set_stroke_style_str(colour);
            path(r);
        }
    }
    ctx.restore();
}
