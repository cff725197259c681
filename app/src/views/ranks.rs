//! Several files open at once, one per rank: the rank picker (each rank's file, progress or
//! error) and each rank's peak allocated/reserved bytes as bars, so the worst rank stands out.

use leptos::prelude::*;

use crate::format;
use crate::state::{AppState, Rank, RankStatus};

#[component]
pub fn RankPicker() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let ranks = state.ranks.get();
        if ranks.is_empty() {
            return None;
        }
        let active = state.active.get();
        let rows = ranks
            .into_iter()
            .enumerate()
            .map(|(index, r)| rank_row(state, index, index == active, r))
            .collect_view();
        Some(view! {
            <section class="panel ranks">
                <h2>"Ranks"</h2>
                <div class="rank-picker" data-testid="rank-picker">{rows}</div>
            </section>
        })
    }
}

fn rank_row(state: AppState, index: usize, active: bool, r: Rank) -> impl IntoView {
    let (status, detail) = match r.status {
        RankStatus::Opening(o) => {
            let fraction = o
                .progress
                .and_then(|p| p.total.filter(|t| *t > 0).map(|t| p.done as f64 / t as f64));
            let detail = view! {
                <div class="bar" class:indeterminate=fraction.is_none() data-testid="rank-progress">
                    <div class="fill" style:width=format!("{:.1}%", fraction.unwrap_or(1.0) * 100.0)></div>
                </div>
            }
            .into_any();
            ("opening", detail)
        }
        RankStatus::Open(f) => {
            let text = format!(
                "{} · peak {}",
                format::bytes(f.size),
                format::bytes(f.peak_reserved)
            );
            ("open", view! { <div class="muted">{text}</div> }.into_any())
        }
        RankStatus::Failed(message) => (
            "failed",
            view! { <div class="error" data-testid="load-error" role="alert">{message}</div> }
                .into_any(),
        ),
    };
    let open = status == "open";
    view! {
        <div class="rank-row" class:active=active data-rank=r.rank.to_string()
            data-file=r.name.clone() data-status=status>
            <button class="button rank-button" data-testid="rank-button" disabled=!open
                title=r.name.clone() on:click=move |_| state.show_rank(index)>
                <span class="rank-number">{format!("rank {}", r.rank)}</span>
                <span class="rank-file">{r.name.clone()}</span>
            </button>
            {detail}
        </div>
    }
}

#[component]
pub fn RankPeaks() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let ranks = state.ranks.get();
        let open: Vec<(usize, u32, u64, u64)> = ranks
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match &r.status {
                RankStatus::Open(f) => Some((i, r.rank, f.peak_allocated, f.peak_reserved)),
                _ => None,
            })
            .collect();
        if open.is_empty() {
            return None;
        }
        // Bars share one scale: the largest reserved peak is the full width.
        let scale = open.iter().map(|o| o.3.max(o.2)).max().unwrap_or(0).max(1) as f64;
        let worst = open.iter().map(|o| o.3).max().unwrap_or(0);
        let active = state.active.get();
        let rows = open
            .into_iter()
            .map(|(index, rank, allocated, reserved)| {
                let pct = |v: u64| format!("{:.2}%", v as f64 / scale * 100.0);
                let title = format!(
                    "rank {rank}: peak allocated {}, peak reserved {}",
                    format::bytes(allocated),
                    format::bytes(reserved)
                );
                view! {
                    <div class="rank-peak" class:worst=reserved == worst class:active=index == active
                        data-rank=rank.to_string() data-peak-allocated=allocated.to_string()
                        data-peak-reserved=reserved.to_string() title=title
                        on:click=move |_| state.show_rank(index)>
                        <span class="rank-number">{rank.to_string()}</span>
                        <div class="peak-track">
                            <div class="peak-reserved" style:width=pct(reserved)></div>
                            <div class="peak-allocated" style:width=pct(allocated)></div>
                        </div>
                        <span class="muted peak-label">{format::bytes(reserved)}</span>
                    </div>
                }
            })
            .collect_view();
        Some(view! {
            <section class="panel rank-peaks-panel">
                <h2>"Peak per rank"</h2>
                <p class="muted hint">"reserved (light) and allocated (dark) at their highest"</p>
                <div class="rank-peaks" data-testid="rank-peaks">{rows}</div>
            </section>
        })
    }
}
