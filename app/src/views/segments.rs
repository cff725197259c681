//! Segment view: one bar per segment, its blocks laid out by address and coloured by state.
//! Rows are virtualised (only those in the scroll viewport exist as elements), so a file with
//! thousands of segments stays cheap; `segment-view` carries the device's full counts.

use std::sync::Arc;

use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::size::size;
use crate::format;
use crate::perf;
use crate::protocol::{SegmentVm, SegmentsView};
use crate::state::{AppState, Hover};

/// Height of one segment row in pixels (CSS `.seg-row` matches).
const ROW: f64 = 30.0;
/// Rows kept beyond each edge of the viewport so fast scrolling shows no gaps.
const OVERSCAN: usize = 8;
/// The scroll box's largest height, as a share of the window's (CSS `.seg-scroll`'s
/// `max-height: 75vh` matches).
const SCROLL_MAX_VH: f64 = 0.75;

/// The height rows are rendered for: the scroll box's largest, which it has whenever its rows
/// overflow it. Measuring the box instead read its height after the frame, which laid the page
/// out (9 ms of a first open's 108 ms of page work, scripts/profile/profile_page.py), and rendered the
/// rows a second time, since the box had been measured empty, before a file, at its least.
fn viewport_px() -> f64 {
    let inner = window()
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64())
        .unwrap_or(900.0);
    (inner * SCROLL_MAX_VH).ceil()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SortBy {
    Size,
    Address,
    Stream,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// Bars share one scale: the largest segment spans the track.
    Shared,
    /// Every bar spans the track (blocks still to scale within it).
    Fill,
}

#[component]
pub fn SegmentView() -> impl IntoView {
    let state = expect_context::<AppState>();
    let sort = RwSignal::new(SortBy::Size);
    // Which pool's segments are shown: None = all; Some(None) = the default pools.
    let pool = RwSignal::new(None::<Option<(i64, i64)>>);
    let width = RwSignal::new(Width::Shared);
    let scroll_top = RwSignal::new(0.0);
    let viewport = RwSignal::new(viewport_px());
    let scroller = NodeRef::<html::Div>::new();

    let order = Memo::new(move |_| {
        state.segments.with(|v| {
            v.as_ref()
                .map(|v| {
                    let only = pool.get();
                    let mut idx = sorted(&v.segments, sort.get());
                    idx.retain(|&i| only.is_none_or(|p| v.segments[i].pool_id == p));
                    idx
                })
                .unwrap_or_default()
        })
    });
    let scrolled = move || {
        if let Some(el) = scroller.try_get_untracked().flatten() {
            scroll_top.set(el.scroll_top() as f64);
        }
    };
    // The private pools of the shown segments (the pool filter appears when there are any).
    let private_pools = Memo::new(move |_| {
        state.segments.with(|v| {
            let mut p: Vec<(i64, i64)> = v
                .iter()
                .flat_map(|v| v.segments.iter().filter_map(|s| s.pool_id))
                .collect();
            p.sort_unstable();
            p.dedup();
            p
        })
    });
    // A new device or file starts at the top, with every pool shown.
    Effect::new(move |_| {
        state.device.track();
        state.file.track();
        pool.set(None);
    });
    Effect::new(move |_| {
        state.segments.track();
        // Back to the top, touching the scroll box only when it was scrolled (each touch makes
        // the browser lay the page out at once: 7 ms on a first paint).
        if scroll_top.get_untracked() != 0.0 {
            if let Some(el) = scroller.get() {
                el.set_scroll_top(0);
            }
            scroll_top.set(0.0);
        }
        if state.segments.with_untracked(|v| v.is_some()) {
            state.painted(perf::View::Segments);
        }
    });
    let resized = window_event_listener(leptos::ev::resize, move |_| viewport.set(viewport_px()));
    on_cleanup(move || resized.remove());

    let rows = move || {
        let Some(view) = state.segments.get() else {
            return Vec::new();
        };
        let order = order.get();
        let first = ((scroll_top.get() / ROW) as usize).saturating_sub(OVERSCAN);
        let last = (((scroll_top.get() + viewport.get()) / ROW).ceil() as usize + OVERSCAN)
            .min(order.len());
        let max = view
            .segments
            .iter()
            .map(|s| s.total_size)
            .max()
            .unwrap_or(1)
            .max(1);
        let w = width.get();
        (first.min(last)..last)
            .map(|rank| RowKey {
                view: view.clone(),
                rank,
                segment: order[rank],
                max,
                width: w,
            })
            .collect::<Vec<_>>()
    };

    let counts = move || {
        state
            .segments
            .with(|v| v.as_ref().map(|v| (v.segments.len(), v.block_count())))
            .unwrap_or((0, 0))
    };

    view! {
        <section class="panel segment-view" data-testid="segment-view"
            data-segments=move || counts().0.to_string()
            data-blocks=move || counts().1.to_string()>
            <div class="panel-head">
                <h2>"Segments"</h2>
                <span class="muted">{move || {
                    let (s, b) = counts();
                    format!("{s} segments, {b} blocks")
                }}</span>
                <span class="spacer"></span>
                <label class="control">"Sort "
                    <select data-testid="segment-sort" on:change=move |e| sort.set(match event_target_value(&e).as_str() {
                        "address" => SortBy::Address,
                        "stream" => SortBy::Stream,
                        _ => SortBy::Size,
                    })>
                        <option value="size">"by size"</option>
                        <option value="address">"by address"</option>
                        <option value="stream">"by stream"</option>
                    </select>
                </label>
                {move || (!private_pools.get().is_empty()).then(|| view! {
                    <label class="control">"Pool "
                        <select data-testid="segment-pool" on:change=move |e| pool.set(match event_target_value(&e).as_str() {
                            "all" => None,
                            "default" => Some(None),
                            other => other.split_once(',').and_then(|(a, b)| Some(Some((a.parse().ok()?, b.parse().ok()?)))),
                        })>
                            <option value="all">"all pools"</option>
                            <option value="default">"default pools"</option>
                            {private_pools.get().into_iter().map(|(a, b)| view! {
                                <option value=format!("{a},{b}")>{format!("private ({a}, {b})")}</option>
                            }).collect_view()}
                        </select>
                    </label>
                })}
                <label class="control">"Bars "
                    <select data-testid="segment-width" on:change=move |e| width.set(match event_target_value(&e).as_str() {
                        "fill" => Width::Fill,
                        _ => Width::Shared,
                    })>
                        <option value="shared">"to one scale"</option>
                        <option value="fill">"full width"</option>
                    </select>
                </label>
            </div>
            <Legend/>
            <div class="seg-scroll" node_ref=scroller on:scroll=move |_| scrolled()>
                {move || state.segments.with(|v| v.is_none()).then(|| view! {
                    <p class="empty muted">"Open a snapshot to see its segments."</p>
                })}
                <div class="seg-canvas" style:height=move || format!("{}px", order.with(|o| o.len()) as f64 * ROW)>
                    <For each=rows key=|k| k.key() let:k>
                        <SegmentRow key=k/>
                    </For>
                </div>
            </div>
        </section>
    }
}

fn sorted(segments: &[SegmentVm], by: SortBy) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..segments.len()).collect();
    match by {
        SortBy::Size => idx.sort_by_key(|&i| {
            (
                std::cmp::Reverse(segments[i].total_size),
                segments[i].address,
            )
        }),
        SortBy::Address => idx.sort_by_key(|&i| segments[i].address),
        SortBy::Stream => idx.sort_by_key(|&i| (segments[i].stream, segments[i].address)),
    }
    idx
}

/// One visible row and everything its drawing depends on (so the keyed list redraws it when
/// any of that changes).
#[derive(Clone)]
struct RowKey {
    view: Arc<SegmentsView>,
    rank: usize,
    segment: usize,
    max: u64,
    width: Width,
}

impl RowKey {
    fn key(&self) -> (usize, usize, usize, u64, bool) {
        (
            Arc::as_ptr(&self.view) as usize,
            self.rank,
            self.segment,
            self.max,
            self.width == Width::Fill,
        )
    }
}

#[component]
fn SegmentRow(key: RowKey) -> impl IntoView {
    let state = expect_context::<AppState>();
    let RowKey {
        view,
        rank,
        segment,
        max,
        width,
    } = key;
    let seg = &view.segments[segment];
    let bar_width = match width {
        Width::Shared => (seg.total_size as f64 / max as f64 * 100.0).max(0.5),
        Width::Fill => 100.0,
    };
    // The blocks go in as one HTML string: built from numbers and fixed state names only, it is
    // parsed natively in one call, where an element per block cost ten calls across the wasm
    // boundary and a reactive class each (the first paint's largest page cost on files with
    // a few thousand blocks: scripts/profile/profile_page.py). Hover is delegated to the bar.
    let blocks = blocks_html(seg);
    let bar = NodeRef::<html::Div>::new();
    mark_block(bar, "hovered", move || match state.hover.get() {
        Some(Hover::Block { segment: s, block }) if s == segment => Some(block as u32),
        _ => None,
    });
    // The pinned block of this segment, if any, is outlined.
    let starts: Vec<u64> = seg.blocks.iter().map(|b| seg.address + b.offset).collect();
    mark_block(bar, "pinned", move || {
        state
            .pinned
            .get()
            .and_then(|a| starts.iter().position(|&s| s == a))
            .map(|i| i as u32)
    });
    let on_click = move |e: leptos::ev::MouseEvent| {
        let addr = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.get_attribute("data-address"))
            .and_then(|a| a.parse::<u64>().ok());
        if let Some(addr) = addr {
            state
                .pinned
                .update(|p| *p = if *p == Some(addr) { None } else { Some(addr) });
        }
    };
    let on_over = move |e: leptos::ev::MouseEvent| {
        let index = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|el| el.get_attribute("data-index"))
            .and_then(|i| i.parse::<usize>().ok());
        if let Some(block) = index {
            state.hover.set(Some(Hover::Block { segment, block }));
        }
    };
    let tags = format!(
        "stream {}{}{}{}",
        seg.stream,
        seg.pool_id
            .map(|(a, b)| format!(" · private pool ({a}, {b})"))
            .unwrap_or_default(),
        seg.pool
            .as_deref()
            .map(|p| format!(" · {p}"))
            .unwrap_or_default(),
        if seg.expandable { " · expandable" } else { "" }
    );
    view! {
        <div class="seg-row" style=format!("top:{}px", rank as f64 * ROW)>
            <div class="seg-label" title=tags.clone()
                on:mouseenter=move |_| state.hover.set(Some(Hover::Segment { segment }))>
                <span class="addr">{format::address(seg.address)}</span>
                {size(seg.total_size)}
            </div>
            <div class="seg-track">
                <div class="segment" data-testid="segment"
                    data-address=seg.address.to_string()
                    data-total-size=seg.total_size.to_string()
                    data-pool-id=seg.pool_id.map(|(a, b)| format!("{a},{b}")).unwrap_or_default()
                    class:private-pool=seg.pool_id.is_some()
                    style=format!("width:{bar_width:.4}%")
                    node_ref=bar
                    inner_html=blocks
                    on:mouseover=on_over
                    on:click=on_click>
                </div>
            </div>
        </div>
    }
}

/// Keeps `class` on the one block of `bar` that `which` names (an index among its children),
/// moving it when `which` changes: one class list touched, not one reactive class per block.
fn mark_block(
    bar: NodeRef<html::Div>,
    class: &'static str,
    which: impl Fn() -> Option<u32> + 'static,
) {
    let marked = StoredValue::new(None::<u32>);
    Effect::new(move |_| {
        let now = which();
        let Some(bar) = bar.get() else { return };
        if marked.get_value() == now {
            return;
        }
        let children = bar.children();
        if let Some(el) = marked.get_value().and_then(|i| children.item(i)) {
            let _ = el.class_list().remove_1(class);
        }
        if let Some(el) = now.and_then(|i| children.item(i)) {
            let _ = el.class_list().add_1(class);
        }
        marked.set_value(now);
    });
}

/// One `data-testid="block"` element per block, positioned in percent of the segment, with
/// its index (for the delegated hover), size, state and address.
fn blocks_html(seg: &SegmentVm) -> String {
    use std::fmt::Write;
    let total = seg.total_size.max(1) as f64;
    let mut html = String::with_capacity(seg.blocks.len() * 170);
    for (i, b) in seg.blocks.iter().enumerate() {
        let left = (b.offset as f64 / total * 100.0).min(100.0);
        let w = (b.size as f64 / total * 100.0).min(100.0 - left);
        let state = b.state.as_str();
        let _ = write!(
            html,
            "<div class=\"block {state}\" data-testid=\"block\" data-index=\"{i}\" \
             data-size=\"{}\" data-state=\"{state}\" data-address=\"{}\" \
             style=\"left:{left:.4}%;width:{w:.4}%\"></div>",
            b.size,
            seg.address + b.offset,
        );
    }
    html
}

#[component]
fn Legend() -> impl IntoView {
    view! {
        <div class="legend">
            <span><i class="swatch active_allocated"></i>"allocated"</span>
            <span><i class="swatch active_pending_free"></i>"freed, pending stream events"</span>
            <span><i class="swatch inactive"></i>"free (cached hole)"</span>
            <span><i class="swatch unmapped"></i>"not covered by a block"</span>
        </div>
    }
}
