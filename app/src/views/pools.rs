//! Pools of the shown device (`analysis::pools`): reserved / allocated / free per pool, shown
//! when the device has a private pool (CUDA graph, `torch.cuda.MemPool`), whose free space
//! serves only allocations into that pool.

use leptos::prelude::*;
use memsnap_core::analysis::pools::{is_private, PoolTotals};

use super::size::size;
use crate::protocol::{Request, Response};
use crate::state::AppState;

/// "default" or "(a, b)".
pub fn pool_name(pool: Option<(i64, i64)>) -> String {
    match pool {
        Some((a, b)) => format!("private ({a}, {b})"),
        None => "default".to_string(),
    }
}

#[component]
pub fn PoolDiagnostics() -> impl IntoView {
    let state = expect_context::<AppState>();
    let pools = RwSignal::new(Vec::<PoolTotals>::new());
    Effect::new(move |_| {
        state.file.track();
        pools.set(Vec::new());
        let Some(device) = state.device.get() else {
            return;
        };
        // Not on the first screen's path: sent when the worker is idle (`state::request_background`).
        state.request_background(Request::Pools { device }, move |r| match r {
            Response::Pools {
                device: d,
                pools: p,
            } if state.device.get_untracked() == Some(d) => pools.set(p),
            Response::Failed { message } => state.load_error.set(Some(message)),
            _ => {}
        });
    });
    move || {
        let p = pools.get();
        p.iter().any(|p| is_private(p.pool_id)).then(|| {
            view! {
                <section class="panel pools" data-testid="pools">
                    <h2>"Pools"</h2>
                    <p class="muted note">"A private pool's holes serve only allocations into that pool (a CUDA graph's or a MemPool's), never ordinary ones."</p>
                    <table class="rows"><thead><tr><th>"pool"</th><th>"reserved"</th><th>"allocated"</th><th>"free"</th></tr></thead><tbody>
                    {p.into_iter().map(|t| {
                        let id = Some(t.pool_id).filter(|p| is_private(*p));
                        view! {
                            <tr data-testid="pool-row" data-pool-id=format!("{},{}", t.pool_id.0, t.pool_id.1)
                                data-reserved=t.reserved_bytes.to_string() data-allocated=t.allocated_bytes.to_string()
                                data-free=t.free_bytes.to_string() data-segments=t.segments.to_string()>
                                <td title=format!("{} segments", t.segments)>{pool_name(id)}</td>
                                <td class="num">{size(t.reserved_bytes)}</td>
                                <td class="num">{size(t.allocated_bytes)}</td>
                                <td class="num">{size(t.free_bytes)}<span class="muted small">" (largest hole "{size(t.largest_free_bytes)}")"</span></td>
                            </tr>
                        }
                    }).collect_view()}
                    </tbody></table>
                </section>
            }
        })
    }
}
