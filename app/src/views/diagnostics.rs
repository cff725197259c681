//! Diagnostics numbers of the shown device (computed in core: `analysis::totals`).
//! The `diag-*-bytes` elements hold the exact byte count; the readable form sits beside them.

use leptos::prelude::*;

use crate::format;
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
                        note=format!("{} segments", d.segments)/>
                    <Number label="Allocated" testid="diag-allocated-bytes" bytes=d.allocated
                        note=share(d.allocated)/>
                    <Number label="Reserved − allocated" testid="diag-unallocated-bytes" bytes=free
                        note=share(free)/>
                    <Number label="Largest free block" testid="diag-largest-free-bytes" bytes=d.largest_free
                        note=format!("of {} cached free", format::bytes(d.inactive))/>
                    <Number label="Pending free" testid="diag-pending-free-bytes" bytes=d.pending_free
                        note="freed, waiting on other streams".to_string()/>
                </dl>
            </section>
        })
    }
}

#[component]
fn Number(label: &'static str, testid: &'static str, bytes: u64, note: String) -> impl IntoView {
    view! {
        <div class="number">
            <dt>{label}</dt>
            <dd>
                <span class="human">{format::bytes(bytes)}</span>
                <span class="exact" data-testid=testid title="bytes">{bytes.to_string()}</span>
                <span class="note muted">{note}</span>
            </dd>
        </div>
    }
}
