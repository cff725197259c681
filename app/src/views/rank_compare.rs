//! Two ranks' diagnostics side by side: the shown rank and one picked here. Each number comes
//! from that rank's worker (`analysis::totals`), for the rank's first device.

use leptos::prelude::*;

use crate::format;
use crate::protocol::{DiagnosticsView, Request, Response};
use crate::state::{AppState, RankStatus};

#[component]
pub fn RankCompare() -> impl IntoView {
    let state = expect_context::<AppState>();
    let other = RwSignal::new(None::<usize>);
    let sides = RwSignal::new([None::<DiagnosticsView>, None]);
    Effect::new(move |_| {
        let ranks = state.ranks.get();
        let picks = [Some(state.active.get()), other.get()];
        sides.set([None, None]);
        for (side, pick) in picks.into_iter().enumerate() {
            let device = pick.and_then(|i| match ranks.get(i).map(|r| &r.status) {
                Some(RankStatus::Open(f)) => Some(f.devices.first().map_or(0, |d| d.device)),
                _ => None,
            });
            let (Some(index), Some(device)) = (pick, device) else {
                continue;
            };
            state.request_rank(index, Request::Diagnostics { device }, move |r| {
                // A newer pick has replaced this one: its answer is not for this table.
                let current = [Some(state.active.get_untracked()), other.get_untracked()];
                if let (Response::Diagnostics(v), true) = (r, current[side] == pick) {
                    sides.update(|s| s[side] = Some(v));
                }
            });
        }
    });
    move || {
        let ranks = state.ranks.get();
        if ranks.len() < 2 {
            return None;
        }
        let active = state.active.get();
        let options = ranks
            .iter()
            .enumerate()
            .filter(|(i, r)| *i != active && matches!(r.status, RankStatus::Open(_)))
            .map(|(i, r)| {
                let selected = other.get_untracked() == Some(i);
                view! { <option value=i.to_string() selected=selected>{format!("rank {} · {}", r.rank, r.name)}</option> }
            })
            .collect_view();
        let [left, right] = sides.get();
        let rank_of = |i: Option<usize>| {
            i.and_then(|i| ranks.get(i))
                .map_or("—".to_string(), |r| format!("rank {}", r.rank))
        };
        type Row = (&'static str, &'static str, fn(&DiagnosticsView) -> u64);
        let rows: [Row; 7] = [
            ("Reserved", "reserved", |d: &DiagnosticsView| d.reserved),
            ("Allocated", "allocated", |d: &DiagnosticsView| d.allocated),
            ("Largest free", "largest-free", |d: &DiagnosticsView| {
                d.largest_free
            }),
            ("Cached free", "inactive", |d: &DiagnosticsView| d.inactive),
            ("Pending free", "pending-free", |d: &DiagnosticsView| {
                d.pending_free
            }),
            ("Segments", "segments", |d: &DiagnosticsView| d.segments),
            ("Blocks", "blocks", |d: &DiagnosticsView| d.blocks),
        ];
        let rows = rows.into_iter().map(|(label, key, get)| {
            let cell = |d: &Option<DiagnosticsView>| {
                let v = d.as_ref().map(get);
                let text = match (v, key) {
                    (Some(v), "segments" | "blocks") => v.to_string(),
                    (Some(v), _) => format::bytes(v),
                    (None, _) => "…".to_string(),
                };
                view! { <td data-value=v.map(|v| v.to_string()) title=v.map(|v| format!("{v} bytes"))>{text}</td> }
            };
            view! { <tr data-row=key><th>{label}</th>{cell(&left)}{cell(&right)}</tr> }
        });
        let rows = rows.collect_view();
        Some(view! {
            <section class="panel rank-compare-panel">
                <h2>"Compare ranks"</h2>
                <select data-testid="compare-rank" on:change=move |e| {
                    other.set(event_target_value(&e).parse().ok());
                }>
                    <option value="" selected=other.get_untracked().is_none()>"pick a rank…"</option>
                    {options}
                </select>
                <table class="rank-compare" data-testid="rank-compare">
                    <tr><th></th><th>{rank_of(Some(active))}</th><th>{rank_of(other.get())}</th></tr>
                    {rows}
                </table>
            </section>
        })
    }
}
