//! What-if: change four allocator settings, replay the trace through the allocator model in
//! the worker, and compare peak reserved, overhead and OOMs with the file's own settings and
//! with what the file recorded; the planned lower bound beside them.

use leptos::prelude::*;

use super::analysis_state::Analysis;
use super::size::size;
use crate::format;
use crate::protocol::analysis::{FiguresVm, WhatIfRequest, WhatIfView, HOST_NOT_REPLAYED};
use crate::protocol::{Request, Response};
use crate::state::AppState;

#[component]
pub fn WhatIf() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    let expandable = RwSignal::new(false);
    let max_split = RwSignal::new(String::new());
    let roundup = RwSignal::new(String::new());
    let gc = RwSignal::new(String::new());
    let capacity_gib = RwSignal::new(String::new());
    // The file's device size in bytes and as first shown: unedited, the exact bytes are sent.
    let default_capacity = StoredValue::new((None::<u64>, String::new()));
    let running = RwSignal::new(false);
    let result = RwSignal::new(None::<WhatIfView>);
    let error = RwSignal::new(None::<String>);

    // The form starts from the file's settings.
    Effect::new(move |_| {
        result.set(None);
        error.set(None);
        let Some(d) = an.insights.get().map(|i| i.defaults.clone()) else {
            return;
        };
        expandable.set(d.expandable_segments);
        max_split.set(
            d.max_split_size_mb
                .map(|m| m.to_string())
                .unwrap_or_default(),
        );
        roundup.set(d.roundup_power2_divisions.clone());
        gc.set(
            d.garbage_collection_threshold
                .map(|t| t.to_string())
                .unwrap_or_default(),
        );
        let shown = d
            .capacity
            .map(|c| format!("{:.2}", c as f64 / (1u64 << 30) as f64))
            .unwrap_or_default();
        default_capacity.set_value((d.capacity, shown.clone()));
        capacity_gib.set(shown);
    });

    let run = move |_| {
        let Some(device) = state.device.get_untracked() else {
            return;
        };
        let number = |s: String, what: &str| -> Result<Option<f64>, String> {
            let s = s.trim().to_string();
            if s.is_empty() {
                return Ok(None);
            }
            s.parse::<f64>()
                .map(Some)
                .map_err(|_| format!("{what}: `{s}` is not a number"))
        };
        let parsed = (|| -> Result<WhatIfRequest, String> {
            Ok(WhatIfRequest {
                device,
                expandable_segments: expandable.get_untracked(),
                max_split_size_mb: number(max_split.get_untracked(), "max_split_size_mb")?
                    .map(|v| v as u64),
                roundup_power2_divisions: roundup.get_untracked(),
                garbage_collection_threshold: number(
                    gc.get_untracked(),
                    "garbage_collection_threshold",
                )?,
                capacity: match default_capacity.get_value() {
                    (bytes, shown) if shown == capacity_gib.get_untracked() => bytes,
                    _ => number(capacity_gib.get_untracked(), "device memory")?
                        .map(|g| (g * (1u64 << 30) as f64) as u64),
                },
            })
        })();
        let req = match parsed {
            Ok(r) => r,
            Err(e) => return error.set(Some(e)),
        };
        error.set(None);
        running.set(true);
        state.request(Request::WhatIf(req), None, move |r| {
            running.set(false);
            match r {
                Response::WhatIf(v) => result.set(Some(v)),
                Response::Failed { message } => error.set(Some(message)),
                _ => {}
            }
        });
    };

    move || {
        state.device.get()?;
        if an.insights.get().is_some_and(|i| i.host) {
            return Some(
                view! {
                    <section class="panel whatif" data-testid="whatif">
                        <div class="panel-head"><h2>"What if"</h2></div>
                        <p class="muted" data-testid="whatif-host">{HOST_NOT_REPLAYED}</p>
                    </section>
                }
                .into_any(),
            );
        }
        Some(view! {
            <section class="panel whatif" data-testid="whatif">
                <div class="panel-head"><h2>"What if"</h2>
                    <span class="muted">"replay this trace through the allocator model under other settings"</span>
                </div>
                <div class="whatif-form">
                    <label class="check"><input type="checkbox" data-testid="whatif-expandable"
                        prop:checked=move || expandable.get()
                        on:change=move |e| expandable.set(event_target_checked(&e))/>"expandable_segments"</label>
                    <label>"max_split_size_mb"<input type="text" data-testid="whatif-max-split" placeholder="unlimited"
                        prop:value=move || max_split.get() on:change=move |e| max_split.set(event_target_value(&e))/></label>
                    <label>"roundup_power2_divisions"<input type="text" data-testid="whatif-roundup" placeholder="none, e.g. 4 or [256:1,>:4]"
                        prop:value=move || roundup.get() on:change=move |e| roundup.set(event_target_value(&e))/></label>
                    <label>"garbage_collection_threshold"<input type="text" data-testid="whatif-gc" placeholder="off, e.g. 0.8"
                        prop:value=move || gc.get() on:change=move |e| gc.set(event_target_value(&e))/></label>
                    <label>"device memory (GiB)"<input type="text" data-testid="whatif-capacity" placeholder="unlimited"
                        prop:value=move || capacity_gib.get() on:change=move |e| capacity_gib.set(event_target_value(&e))/></label>
                    <button class="button primary" data-testid="whatif-run" disabled=move || running.get() on:click=run>
                        {move || if running.get() { "Replaying…" } else { "Run" }}
                    </button>
                </div>
                {move || error.get().map(|e| view! { <div class="error" role="alert">{e}</div> })}
                {move || result.get().map(result_view)}
            </section>
        }.into_any())
    }
}

fn result_view(v: WhatIfView) -> impl IntoView {
    let row = |label: &'static str, f: fn(&FiguresVm) -> String, v: &WhatIfView| {
        view! {
            <tr><th>{label}</th>
                <td>{f(&v.recorded)}</td><td>{f(&v.original)}</td><td class="changed">{f(&v.changed)}</td></tr>
        }
    };
    let sizes = |label: &'static str, f: fn(&FiguresVm) -> u64, v: &WhatIfView| {
        view! {
            <tr><th>{label}</th>
                <td>{size(f(&v.recorded))}</td><td>{size(f(&v.original))}</td><td class="changed">{size(f(&v.changed))}</td></tr>
        }
    };
    let bytes = |b: u64| format::bytes(b);
    let conf = |s: &str| {
        if s.is_empty() {
            "(defaults)".to_string()
        } else {
            s.to_string()
        }
    };
    view! {
        <div class="whatif-result" data-testid="whatif-result"
            data-peak-reserved=v.changed.peak_reserved.to_string()
            data-peak-allocated=v.changed.peak_allocated.to_string()
            data-ooms=v.changed.ooms.to_string()
            data-original-peak-reserved=v.original.peak_reserved.to_string()
            data-start=v.start.clone()
            data-allocator=v.allocator.clone()>
            <table>
                <thead><tr><th></th><th>"recorded"</th>
                    <th title=conf(&v.original_settings)>"model, file's settings"</th>
                    <th title=conf(&v.changed_settings)>"model, changed"</th></tr></thead>
                <tbody>
                    {sizes("peak reserved", |f| f.peak_reserved, &v)}
                    {sizes("peak allocated", |f| f.peak_allocated, &v)}
                    {sizes("fragmentation (peak reserved − peak allocated)", |f| f.overhead(), &v)}
                    {row("OOMs", |f| f.ooms.to_string(), &v)}
                    {row("segments created (cudaMalloc / map)", |f| f.segment_allocs.to_string(), &v)}
                    {sizes("reserved at the end", |f| f.final_reserved, &v)}
                </tbody>
            </table>
            <p class="muted small">
                {format!("{}: file = {}; changed = {}. Replayed {} requests ({} failed) from a {} start, under {}.",
                    v.conf_var, conf(&v.original_settings), conf(&v.changed_settings), v.requests, v.failed_requests, v.start, v.allocator)}
            </p>
            {v.plan.map(|p| view! {
                <p class="plan" data-testid="whatif-plan" data-arena=p.arena_size.to_string()>
                    <b>"Planned lower bound: "</b>
                    {format!("{} live at most (block sizes; {} as requested); a best-fit offline plan of every allocation needs {}.",
                        bytes(p.peak_live_block), bytes(p.peak_live_requested), bytes(p.arena_size))}
                </p>
            })}
        </div>
    }
}
