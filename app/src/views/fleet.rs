//! The fleet overview: every rank of a set as one small bar (peak reserved, with peak allocated
//! inside, on one canvas: `fleet_strip.rs`), sortable, outliers flagged (`analysis::fleet`), the
//! whole set's progress and each failed file by name. A click opens that rank in the detail
//! views. Bars are a few pixels wide so 4096 ranks fit in a scrolling strip; sorted worst
//! first, the ranks to look at come first.

use leptos::prelude::*;

use super::fleet_strip::FleetStrip;
use crate::format;
use crate::state::{AppState, FleetProgress, RankStatus};
use crate::viewmodel::fleet::{
    bar_scale, fleet_rows, median_rank, outliers, reasons, sort_rows, SortKey,
};

/// Outliers listed by name under the strip (all are flagged in it).
const OUTLIERS_LISTED: usize = 12;

#[component]
pub fn FleetOverview() -> impl IntoView {
    let state = expect_context::<AppState>();
    let fleet = state.fleet;
    let sort = RwSignal::new(SortKey::default());
    let total = move || fleet.progress.with(|p| p.total);
    move || {
        if fleet.ranks.with(|r| r.is_empty()) {
            return None;
        }
        let options = SortKey::ALL
            .into_iter()
            .map(|k| {
                view! { <option value=k.as_str() selected=move || sort.get() == k>{k.label()}</option> }
            })
            .collect_view();
        Some(view! {
            <section class="panel fleet" data-testid="fleet"
                data-ranks-loaded=move || fleet.progress.with(|p| p.loaded.to_string())
                data-ranks-failed=move || fleet.progress.with(|p| p.failed.to_string())
                data-ranks-total=move || total().to_string()
                data-workers=move || fleet.progress.with(|p| p.workers.to_string())
                data-elapsed-ms=move || fleet.progress.with(|p| p.elapsed_ms.map(|ms| format!("{ms:.0}")))>
                <div class="fleet-head">
                    <h2>{move || format!("Fleet · {} ranks", total())}</h2>
                    <label class="muted">"sort by "
                        <select data-testid="fleet-sort" on:change=move |e| {
                            if let Some(k) = SortKey::parse(&event_target_value(&e)) {
                                sort.set(k)
                            }
                        }>{options}</select>
                    </label>
                </div>
                <SetProgress/>
                <Strip sort=sort/>
                <Failures/>
            </section>
        })
    }
}

/// The set's progress. Its elements are made once and their text and width updated in place:
/// progress changes with every message from the pool's workers (several per file), and
/// remaking the block each time left thousands of dead elements per second for Blink's
/// collector while a large set loaded.
#[component]
fn SetProgress() -> impl IntoView {
    let state = expect_context::<AppState>();
    let progress = state.fleet.progress;
    let width = move || {
        progress.with(|p| {
            let fraction = if p.bytes_total > 0 {
                p.bytes_read as f64 / p.bytes_total as f64
            } else {
                p.finished() as f64 / p.total.max(1) as f64
            };
            format!("{:.1}%", fraction.min(1.0) * 100.0)
        })
    };
    let text = move || progress.with(progress_text);
    let done = move || progress.with(|p| p.elapsed_ms.is_some());
    // The files the workers are on now, by name (empty, and hidden, when none).
    let now = move || {
        let now: Vec<String> = progress.with(|p| {
            state.fleet.ranks.with_untracked(|ranks| {
                p.in_flight
                    .iter()
                    .filter_map(|(i, _)| ranks.get(*i).map(|r| r.name.clone()))
                    .collect()
            })
        });
        if now.is_empty() {
            String::new()
        } else {
            format!("reading {}", now.join(", "))
        }
    };
    view! {
        <div class="fleet-progress" data-testid="fleet-progress" class:done=done>
            <div class="bar"><div class="fill" style:width=width></div></div>
            <div class="muted">{text}</div>
            <div class="muted fleet-now">{now}</div>
        </div>
    }
}

fn progress_text(p: &FleetProgress) -> String {
    format!(
        "{} of {} open{} · {} of {} read · {} workers{}",
        p.loaded,
        p.total,
        if p.failed > 0 {
            format!(", {} failed", p.failed)
        } else {
            String::new()
        },
        format::bytes(p.bytes_read),
        format::bytes(p.bytes_total),
        p.workers,
        p.elapsed_ms
            .map(|ms| format!(" · all in {:.1} s", ms / 1e3))
            .unwrap_or_default(),
    )
}

#[component]
fn Strip(sort: RwSignal<SortKey>) -> impl IntoView {
    let state = expect_context::<AppState>();
    let fleet = state.fleet;
    move || {
        let key = sort.get();
        let (figures, mut rows, median) = fleet.open.with(|o| {
            let (figures, rows) = fleet_rows(&o.index, &o.summaries);
            let median = median_rank(&o.index, &o.summaries, &figures);
            (figures, rows, median)
        });
        if rows.is_empty() {
            return view! { <p class="muted">"No rank open yet."</p> }.into_any();
        }
        sort_rows(&mut rows, key);
        // One scale for all bars, clipped so one huge rank does not flatten the rest.
        let scale = bar_scale(&rows) as f64;
        let outliers = outliers(&rows);
        let outlier_count = outliers.len();
        let listed = outliers
            .into_iter()
            .take(OUTLIERS_LISTED)
            .map(|r| {
                let index = r.index;
                let why = reasons(&r.flags).join(", ");
                view! {
                    <li data-testid="fleet-outlier" data-rank=r.rank.to_string()>
                        <button class="link" on:click=move |_| state.show_rank(index)>{format!("rank {}", r.rank)}</button>
                        " " <span class="muted">{why}</span>
                    </li>
                }
            })
            .collect_view();
        let majority = figures
            .majority_top_frame
            .clone()
            .map(|f| format!("most ranks' top frame at the peak: {f}"));
        view! {
            <div class="fleet-legend muted">
                {format!("median allocated peak {}", format::bytes(figures.median_peak_allocated_bytes))}
                " · bar: peak reserved, dark: peak allocated (a dark cap: over 3× the median, clipped) · "
                <span class="flag-oom">"OOM"</span>" "<span class="flag-peak">"peak off the median"</span>" "
                <span class="flag-frame">"other top frame"</span>" "<span class="flag-frag">"fragmented"</span>
            </div>
            <FleetStrip rows=rows scale=scale median=median/>
            {majority.map(|m| view! { <p class="muted hint fleet-majority">{m}</p> })}
            <div class="fleet-outliers">
                <h3>{format!("Outliers · {outlier_count}")}</h3>
                <ul>{listed}</ul>
            </div>
        }
        .into_any()
    }
}

/// Every file that did not open, by name, with the reader's reason.
#[component]
fn Failures() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let failed: Vec<(String, String)> = state.fleet.ranks.with(|ranks| {
            ranks
                .iter()
                .filter_map(|r| match &r.status {
                    RankStatus::Failed(m) => Some((r.name.clone(), m.clone())),
                    _ => None,
                })
                .collect()
        });
        (!failed.is_empty()).then(|| {
            let rows = failed
                .into_iter()
                .map(|(name, message)| {
                    view! { <li class="error" data-testid="fleet-failure" data-file=name>{message}</li> }
                })
                .collect_view();
            view! {
                <div class="fleet-failures" role="alert">
                    <h3>"Not opened"</h3>
                    <ul>{rows}</ul>
                </div>
            }
        })
    }
}
