//! Anomalies inside the range filter: frees waiting on other streams (record_stream), leak
//! suspects (allocated and never freed), and OOM entries with the device's free memory then.
//! Clicking a row shows its stack.

use leptos::prelude::*;

use super::analysis_state::{entries, pick_stack, range, time_label, Analysis};
use super::size::size;
use crate::format;
use crate::protocol::analysis::{AnomaliesView, AnomalyRow};
use crate::protocol::{Request, Response};
use crate::state::AppState;

#[component]
pub fn Anomalies() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    let data = RwSignal::new(None::<AnomaliesView>);

    Effect::new(move |_| {
        let Some(device) = state.device.get() else {
            data.set(None);
            return;
        };
        let range = range(&state, &an);
        state.request_background(Request::Anomalies { device, range }, move |r| match r {
            Response::Anomalies(v) if state.device.get_untracked() == Some(v.device) => {
                data.set(Some(v))
            }
            Response::Failed { message } => state.load_error.set(Some(message)),
            _ => {}
        });
    });

    let rows = move |rows: Vec<AnomalyRow>, caption: &'static str| {
        rows.into_iter()
            .map(|r| {
                let facts = vec![
                    ("Address".to_string(), format::address(r.addr)),
                    ("Size".to_string(), format!("{} ({} B)", format::bytes(r.size), r.size)),
                    ("Entry".to_string(), r.index.map(|i| i.to_string()).unwrap_or_else(|| "before the trace".into())),
                ];
                let stack = r.stack;
                view! {
                    <tr class="clickable" on:click=move |_| pick_stack(state, an, stack, facts.clone(), caption)>
                        <td class="num">{size(r.size)}</td>
                        <td class="num">{r.index.map(|i| i.to_string()).unwrap_or_else(|| "—".into())}</td>
                        <td class="num">{r.age.map(|a| a.to_string()).or(r.stream.map(|s| format!("stream {s}"))).unwrap_or_default()}</td>
                        <td class="label" title=r.label.clone()>{r.label.clone()}</td>
                    </tr>
                }
            })
            .collect_view()
    };

    move || {
        let d = data.get()?;
        let total = (d.pending_count, d.leak_count, d.ooms.len());
        // OOMs and allocations never freed are read from a trace; pending frees from the dump.
        let traced = entries(&state) > 0;
        let no_trace = "Needs a trace: this file has none (only the segments at the dump).";
        Some(view! {
            <section class="panel anomalies" data-testid="anomalies"
                data-pending=d.pending_count.to_string() data-leaks=d.leak_count.to_string()
                data-ooms=total.2.to_string()>
                <div class="panel-head"><h2>"Anomalies"</h2>
                    <span class="muted">{format!("in the range: {} pending frees, {} never freed, {} OOMs", total.0, total.1, total.2)}</span>
                </div>
                <h3>{format!("Out of memory ({})", d.ooms.len())}</h3>
                {if !traced {
                    view! { <p class="muted" data-testid="anomalies-no-trace">{no_trace}</p> }.into_any()
                } else if d.ooms.is_empty() {
                    view! { <p class="muted">"No OOM entries."</p> }.into_any()
                } else {
                    view! { <div class="rows-scroll"><table class="rows"><thead><tr><th>"entry"</th><th>"requested"</th><th>"device free then"</th><th>"allocated"</th><th>"reserved"</th><th>"where"</th></tr></thead><tbody>
                        {d.ooms.into_iter().map(|o| {
                            let facts = vec![
                                ("OOM at entry".to_string(), format!("{}{}", o.index, time_label(o.time_us, None).map(|t| format!(" (t = {t})")).unwrap_or_default())),
                                ("Requested".to_string(), o.requested.map(format::bytes).unwrap_or_else(|| "?".into())),
                                ("Device free".to_string(), o.device_free.map(format::bytes).unwrap_or_else(|| "?".into())),
                            ];
                            let stack = o.stack;
                            view! { <tr class="clickable" on:click=move |_| pick_stack(state, an, stack, facts.clone(), "Failed allocation at")>
                                <td class="num">{o.index}</td>
                                <td class="num">{o.requested.map(size)}</td>
                                <td class="num" data-testid="oom-device-free">{match o.device_free { Some(f) => size(f).into_any(), None => "?".into_any() }}</td>
                                <td class="num">{size(o.allocated)}</td>
                                <td class="num">{size(o.reserved)}</td>
                                <td class="label" title=o.label.clone()>{o.label.clone()}</td></tr> }
                        }).collect_view()}
                    </tbody></table></div> }.into_any()
                }}
                <h3>{format!("Freed, waiting on other streams ({}, ", d.pending_count)}<span data-testid="anomalies-pending-bytes">{size(d.pending_bytes)}</span>")"</h3>
                {if d.pending.is_empty() {
                    view! { <p class="muted">"No frees pending on record_stream events."</p> }.into_any()
                } else {
                    view! { <div class="rows-scroll"><table class="rows"><thead><tr><th>"size"</th><th>"freed at"</th><th>"stream"</th><th>"allocated at"</th></tr></thead>
                        <tbody>{rows(d.pending, "Freed, still pending; allocated at")}</tbody></table></div> }.into_any()
                }}
                <h3>{format!("Never freed in the trace ({}, ", d.leak_count)}<span data-testid="anomalies-leak-bytes">{size(d.leak_bytes)}</span>")"</h3>
                {if !traced {
                    view! { <p class="muted">{no_trace}</p> }.into_any()
                } else if d.leaks.is_empty() {
                    view! { <p class="muted">"Every allocation made in this range was freed."</p> }.into_any()
                } else {
                    view! { <div class="rows-scroll"><table class="rows"><thead><tr><th>"size"</th><th>"allocated at"</th><th>"age (entries)"</th><th>"where"</th></tr></thead>
                        <tbody>{rows(d.leaks, "Allocated (never freed) at")}</tbody></table></div> }.into_any()
                }}
            </section>
        })
    }
}
