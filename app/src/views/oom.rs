//! The OOM panel: why the shown device ran out of memory (`analysis::oom`, the function
//! `memsnap oom` prints). It sits first in the views and, when the explanation arrives, moves
//! the state slider to the failing entry, so the segment view shows the holes the request
//! could not use. Figures carry their exact bytes in `data-*` attributes and on hover.

use leptos::prelude::*;
use memsnap_core::analysis::oom::{OomExplanation, PoolFree, Verdict};

use super::analysis_state::Analysis;
use super::size::size;
use crate::format;
use crate::protocol::{Request, Response};
use crate::state::AppState;

#[component]
pub fn OomPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    let data = RwSignal::new(None::<OomExplanation>);

    Effect::new(move |_| {
        data.set(None);
        let Some(device) = state.device.get() else {
            return;
        };
        let has_oom = state.file.with(|f| {
            f.as_ref().is_some_and(|f| {
                f.devices
                    .iter()
                    .any(|d| d.device == device && d.first_oom.is_some())
            })
        });
        if !has_oom {
            return;
        }
        state.request_background(Request::Oom { device }, move |r| match r {
            Response::Oom {
                device: d,
                oom: Some(o),
            } if state.device.get_untracked() == Some(d) => {
                // Open at the failure: the segments as the request found them.
                an.cursor.set(Some(o.entry as u64));
                data.set(Some(*o));
            }
            Response::Failed { message } => state.load_error.set(Some(message)),
            _ => {}
        });
    });

    move || data.get().map(panel)
}

fn panel(o: OomExplanation) -> impl IntoView {
    let free = o.device_free;
    let headline = format!(
        "{}:{} ran out of memory at entry {}{}",
        o.allocator,
        o.device,
        o.entry,
        if o.ooms_on_device > 1 {
            format!(" (the first of {} OOMs)", o.ooms_on_device)
        } else {
            String::new()
        }
    );
    let own = o.pools.first().cloned();
    let why = match &own {
        Some(p) if p.pool_id == o.pool_id && p.stream == o.stream => format!(
            "Its own pool's largest hole is {}: {}",
            format::bytes(p.largest_free),
            p.unfit.as_str()
        ),
        _ => "No free block in its own pool and stream".to_string(),
    };
    view! {
        <section class="panel oom" data-testid="oom"
            data-device=o.device.to_string() data-entry=o.entry.to_string()
            data-requested=o.requested.to_string()
            data-device-free=free.map(|f| f.to_string()).unwrap_or_default()
            data-reserved=o.reserved.to_string() data-allocated=o.allocated.to_string()
            data-releasable=o.releasable.to_string() data-capacity=o.capacity.to_string()
            data-live-bytes=o.live_bytes.to_string()
            data-planned-arena=o.planned_arena.to_string()>
            <div class="panel-head">
                <h2>"Out of memory"</h2>
                <span class="muted">{headline}</span>
            </div>
            <p class="oom-summary">
                "A request for " {size(o.requested)} " (rounded; a new segment would be "
                {size(o.segment_size)} ") on stream " {o.stream.to_string()}
                {o.pool_id.map(|(a, b)| format!(" in private pool ({a}, {b})"))}
                " failed with " {match free { Some(f) => size(f).into_any(), None => "an unrecorded amount".into_any() }}
                " free on the device, " {size(o.reserved)} " reserved and " {size(o.allocated)}
                " allocated. " {why} ". Releasing the " {size(o.releasable)}
                " of segments with nothing live did not make room either."
            </p>
            <h3>"Free blocks by pool and stream"</h3>
            {pools(o.pools)}
            <h3>"Live at the failure, by frame (" {size(o.live_bytes)} ")"</h3>
            <div class="rows-scroll"><table class="rows"><thead><tr><th>"bytes"</th><th>"blocks"</th><th>"frame"</th></tr></thead><tbody>
                {o.live.into_iter().map(|l| view! {
                    <tr data-testid="oom-live" data-bytes=l.bytes.to_string()>
                        <td class="num">{size(l.bytes)}</td>
                        <td class="num">{l.blocks}</td>
                        <td class="label wrap" title=l.frame.clone()>{l.frame.clone()}</td>
                    </tr>
                }).collect_view()}
            </tbody></table></div>
            <h3>"Replayed to the failure on " {size(o.capacity)} " (reserved + free then)"</h3>
            {verdicts(o.verdicts)}
            <p class="muted" data-testid="oom-plan">
                "A planned arena for every allocation up to and including this one needs "
                {size(o.planned_arena)} " (peak live " {size(o.planned_peak_live)} "): "
                {if o.planned_arena <= o.capacity { "it fits in what the process had." } else { "more than the process had." }}
            </p>
        </section>
    }
}

fn pools(rows: Vec<PoolFree>) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted">"No segments: nothing was cached."</p> }.into_any();
    }
    view! {
        <div class="rows-scroll"><table class="rows"><thead><tr>
            <th>"pool"</th><th>"stream"</th><th>"segments"</th><th>"free"</th><th>"largest hole"</th><th>"why it could not serve"</th>
        </tr></thead><tbody>
        {rows.into_iter().map(|p| view! {
            <tr data-testid="oom-pool" data-pool=p.pool.clone() data-stream=p.stream.to_string()
                data-largest=p.largest_free.to_string() data-unfit=p.unfit.as_str()>
                <td>{p.pool.clone()}{p.pool_id.map(|(a, b)| format!(" ({a}, {b})"))}</td>
                <td class="num">{p.stream.to_string()}</td>
                <td class="num">{p.segments}</td>
                <td class="num">{size(p.free_bytes)}</td>
                <td class="num">{size(p.largest_free)}</td>
                <td class="label">{p.unfit.as_str()}</td>
            </tr>
        }).collect_view()}
        </tbody></table></div>
    }
    .into_any()
}

fn verdicts(rows: Vec<Verdict>) -> impl IntoView {
    view! {
        <table class="rows verdicts"><thead><tr><th>"setting"</th><th>"outcome"</th><th>"reserved then"</th><th>"peak reserved"</th></tr></thead><tbody>
        {rows.into_iter().map(|v| {
            let outcome = match (v.avoided, v.failed_before) {
                (true, _) => "served: avoids this OOM".to_string(),
                (false, 0) => "fails here too".to_string(),
                (false, n) => format!("fails earlier ({n} requests)"),
            };
            view! {
                <tr data-testid="oom-verdict" data-change=v.change.clone() data-avoided=v.avoided.to_string()
                    class:good=v.avoided>
                    <td title=v.settings.clone()>{v.change.clone()}</td>
                    <td>{outcome}</td>
                    <td class="num">{size(v.reserved)}</td>
                    <td class="num">{size(v.peak_reserved)}</td>
                </tr>
            }
        }).collect_view()}
        </tbody></table>
    }
}
