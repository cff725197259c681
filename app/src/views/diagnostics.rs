//! Diagnostics numbers of the shown device (computed in core: `analysis::totals`).
//! The `diag-*-bytes` elements hold the exact byte count; the readable form sits beside them.

use leptos::prelude::*;

use super::size::size;
use crate::state::AppState;

#[component]
pub fn Diagnostics() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let d = state.diagnostics.get()?;
        let free = d.reserved.saturating_sub(d.allocated);
        let share = |part: u64| {
            if d.reserved == 0 {
                String::new()
            } else {
                format!(
                    "{:.1}% of reserved",
                    part as f64 * 100.0 / d.reserved as f64
                )
            }
        };
        Some(view! {
            <section class="panel diagnostics">
                <h2>"Diagnostics"</h2>
                <dl>
                    <Number label="Reserved" testid="diag-reserved-bytes" bytes=d.reserved
                        note=format!("{} segments", d.segments).into_any()/>
                    <Number label="Allocated" testid="diag-allocated-bytes" bytes=d.allocated
                        note=share(d.allocated).into_any()/>
                    <Number label="Reserved − allocated" testid="diag-unallocated-bytes" bytes=free
                        note=share(free).into_any()/>
                    <Number label="Largest free block" testid="diag-largest-free-bytes" bytes=d.largest_free
                        note=view! { "of " {size(d.inactive)} " cached free" }.into_any()/>
                    <Number label="Pending free" testid="diag-pending-free-bytes" bytes=d.pending_free
                        note="freed, waiting on other streams".into_any()/>
                </dl>
            </section>
        })
    }
}

#[component]
fn Number(label: &'static str, testid: &'static str, bytes: u64, note: AnyView) -> impl IntoView {
    view! {
        <div class="number">
            <dt>{label}</dt>
            <dd>
                <span class="human">{size(bytes)}</span>
                <span class="exact" data-testid=testid title="bytes">{bytes.to_string()}</span>
                <span class="note muted">{note}</span>
            </dd>
        </div>
    }
}
