//! Diagnostics additions beside the shell's numbers: largest hole against total free, churn
//! verdict, pinning blocks, top frames at the peak, ranked fixes, and the file's settings as the
//! `PYTORCH_CUDA_ALLOC_CONF` string that reproduces them.

use leptos::prelude::*;

use super::analysis_state::{pick_stack, Analysis};
use super::size::size;
use crate::format;
use crate::state::AppState;

#[component]
pub fn Insights() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    move || {
        let d = an.insights.get()?;
        let hole_pct = if d.free == 0 {
            0.0
        } else {
            d.largest_free as f64 * 100.0 / d.free as f64
        };
        let conf = if d.conf.is_empty() {
            format!("{}= (defaults)", d.conf_var)
        } else {
            format!("{}={}", d.conf_var, d.conf)
        };
        let pinning = d.pinning.clone().into_iter().map(|p| {
            let facts = vec![
                ("Block".to_string(), format!("{} ({})", format::address(p.block_address), format::bytes(p.block_size))),
                ("Pins".to_string(), format!("{} free in a {} segment", format::bytes(p.pinned), format::bytes(p.segment_size))),
                ("Segment".to_string(), format::address(p.segment_address)),
            ];
            let stack = p.stack;
            view! {
                <li class="clickable" on:click=move |_| pick_stack(state, an, stack, facts.clone(), "Pinning block allocated at")>
                    <b>{size(p.block_size)}</b>" pins "{size(p.pinned)}" — "
                    <span class="label" title=p.label.clone()>{p.label.clone()}</span>
                </li>
            }
        }).collect_view();
        Some(view! {
            <section class="panel insights" data-testid="insights">
                <h2>"Analysis"</h2>
                <div class="number">
                    <dt>"Largest hole vs total free"</dt>
                    <dd>
                        <span class="human" data-testid="insight-largest-hole">{size(d.largest_free)}" of "{size(d.free)}</span>
                        <span class="hole-bar"><i style=format!("width:{hole_pct:.1}%")></i></span>
                        <span class="note muted">{format!("fragmentation {:.0}% · {} segments with free space · ",
                            d.fragmentation * 100.0, d.segments_with_free)}<span data-testid="insight-releasable">{size(d.releasable)}</span>" releasable by empty_cache"</span>
                    </dd>
                </div>
                {d.has_trace.then(|| view! {
                    <div class="number">
                        <dt>"Churn"</dt>
                        <dd><span class="verdict" data-testid="insight-churn" title=d.churn_verdict_exact.clone()>{d.churn_verdict.clone()}</span>
                            <span class="note muted">{format!("{} distinct sizes · memory recycled {:.1}× the peak", d.distinct_sizes, d.turnover)}</span></dd>
                    </div>
                })}
                <div class="number">
                    <dt>{format!("Pinning blocks ({})", d.pinning_count)}</dt>
                    <dd>{if d.pinning.is_empty() {
                        view! { <span class="muted">"No small live block holds a mostly free segment."</span> }.into_any()
                    } else {
                        view! { <ul class="compact" data-testid="insight-pinning">{pinning}</ul> }.into_any()
                    }}</dd>
                </div>
                {(!d.peak_frames.is_empty()).then(|| view! {
                    <div class="number">
                        <dt>"Top frames at the peak ("{size(d.peak_allocated)}
                            {d.peak_index.map(|i| format!(", entry {i}")).unwrap_or_default()}")"</dt>
                        <dd><ol class="compact" data-testid="insight-peak-frames">
                            {d.peak_frames.iter().map(|g| view! {
                                <li><b>{size(g.bytes)}</b>" "<span class="label" title=g.label.clone()>{g.label.clone()}</span></li>
                            }).collect_view()}
                        </ol></dd>
                    </div>
                })}
                <div class="number">
                    <dt>"Fixes, replayed through the model"</dt>
                    <dd>{(!d.host && !d.allocator.is_empty()).then(|| view! {
                        <div class="muted small" data-testid="insight-allocator">{format!("Rules: {}.", d.allocator)}</div>
                    })}{if d.host {
                        view! { <span class="muted" data-testid="insight-host">"None here: pinned host memory is served by the CUDA host allocator, and these fixes are settings of the CUDA caching allocator."</span> }.into_any()
                    } else if let Some(why) = d.fixes_not_replayed.clone() {
                        view! { <span class="muted" data-testid="insight-fixes-none">{format!("None replayed: {why}.")}</span> }.into_any()
                    } else {
                        let start = d.ranked_on.clone();
                        let other = if start == "cold" { "reconstructed" } else { "cold" };
                        let base = d.base_peak_reserved;
                        view! {
                            <div class="muted small" data-testid="insight-fixes-basis" title=d.why_start.clone()>
                                {format!("{} replays, ranked by {} from the {start} start ({} under the file's settings).", d.replays, d.figure, format::bytes(base))}
                            </div>
                            {if d.fixes.is_empty() {
                                view! { <span class="muted" data-testid="insight-no-fix">"No fix tried lowers it: every replay saved nothing or cost memory."</span> }.into_any()
                            } else {
                                view! { <ol class="fixes" data-testid="insight-fixes">
                                    {d.fixes.iter().map(|f| view! {
                                        <li data-setting=f.setting.clone() data-saves=f.saves.to_string()>
                                            <code>{f.setting.clone()}</code>
                                            <div>{f.title.clone()}" — "<b>{saving(f.saves)}</b>{format!(" (replayed: {} → {})", format::bytes(base), format::bytes(f.peak_reserved))}
                                                {f.served.filter(|s| *s).map(|_| view! { {format!("; the failing request is served with {} to spare", format::bytes(f.spare.unwrap_or(0)))} })}</div>
                                            {f.saves_other_start.map(|o| view! { <div class="muted small">{format!("From the {other} start: {}", saving(o))}</div> })}
                                            {f.evidence.iter().map(|e| view! { <div class="muted small">{e.clone()}</div> }).collect_view()}
                                            <div class="muted small">{format!("Cost: {}", f.cost)}</div>
                                        </li>
                                    }).collect_view()}
                                </ol> }.into_any()
                            }}
                            {d.try_line.clone().map(|t| view! { <div>"Try: "<code data-testid="insight-try">{t}</code></div> })}
                            {(!d.no_saving.is_empty()).then(|| view! {
                                <details data-testid="insight-no-saving">
                                    <summary class="muted small">{format!("{} tried and not a fix here", d.no_saving.len())}</summary>
                                    <ul class="compact">{d.no_saving.iter().map(|f| view! {
                                        <li class="muted small" data-setting=f.setting.clone() data-saves=f.saves.to_string()>
                                            <code>{f.setting.clone()}</code>{format!(": {} ({} → {})", saving(f.saves), format::bytes(base), format::bytes(f.peak_reserved))}
                                        </li>
                                    }).collect_view()}</ul>
                                </details>
                            })}
                        }.into_any()
                    }}</dd>
                </div>
                <div class="number">
                    <dt>"This file's allocator settings"</dt>
                    <dd><code class="conf" data-testid="alloc-conf">{conf}</code>
                        <span class="note muted">{match (&d.settings_error, d.has_settings) {
                            (Some(e), _) => format!("could not read them: {e}"),
                            (None, false) => "the file records no allocator_settings: PyTorch's defaults assumed".to_string(),
                            (None, true) => "from the file's allocator_settings".to_string(),
                        }}</span></dd>
                </div>
            </section>
        })
    }
}

/// A replayed difference in peak reserved: "saves 1.2 GiB", "costs 16.0 MiB", "saves nothing".
fn saving(bytes: i64) -> String {
    match bytes {
        0 => "saves nothing".to_string(),
        b if b > 0 => format!("saves {}", format::bytes(b as u64)),
        b => format!("costs {}", format::bytes(b.unsigned_abs())),
    }
}
