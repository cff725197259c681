//! The shown rank beside the fleet's median rank (or another rank picked here): dump totals and
//! peaks from each rank's `RankSummary` (the device shown, else the rank's first), and what the
//! shown rank holds more of than the other at its peak, by top frame. Summaries only: comparing
//! never parses a file again.

use leptos::prelude::*;
use memsnap_core::analysis::rank_summary::{DeviceRankSummary, RankSummary};

use crate::format;
use crate::state::AppState;
use crate::viewmodel::fleet::{fleet_rows, holds_more, median_rank, outliers};

/// Frames listed under the table.
const FRAMES_LISTED: usize = 5;
/// Outliers offered in the picker (any other rank is typed by number).
const PICKS_LISTED: usize = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Other {
    Median,
    Rank(usize),
}

#[component]
pub fn RankCompare() -> impl IntoView {
    let state = expect_context::<AppState>();
    let fleet = state.fleet;
    let other = RwSignal::new(Other::Median);
    move || {
        let shown = fleet.shown.get()?;
        let ranks = fleet.ranks.get();
        if ranks.len() < 2 {
            return None;
        }
        let device = state.device.get();
        let (left, right, median) = fleet.open.with(|o| {
            let figures = memsnap_core::analysis::fleet::fleet(&o.summaries);
            let median = median_rank(&o.index, &o.summaries, &figures);
            let pick = match other.get() {
                Other::Median => median,
                Other::Rank(i) => Some(i),
            };
            (
                o.get(shown).cloned(),
                pick.and_then(|i| o.get(i)).cloned(),
                median,
            )
        });
        let left = left?;
        // The median and the outliers to pick from, plus any rank by number below: an option
        // per rank made ~6 nodes a rank (24,000 at 4,096 ranks).
        let mut picks: Vec<usize> = fleet.open.with(|o| {
            let (_, rows) = fleet_rows(&o.index, &o.summaries);
            outliers(&rows).into_iter().map(|r| r.index).collect()
        });
        picks.truncate(PICKS_LISTED);
        if let Other::Rank(i) = other.get_untracked() {
            if !picks.contains(&i) {
                picks.insert(0, i);
            }
        }
        let options = picks
            .into_iter()
            .filter(|i| *i != shown)
            .filter_map(|i| ranks.get(i).map(|r| (i, r)))
            .map(|(i, r)| {
                let selected = other.get_untracked() == Other::Rank(i);
                view! { <option value=i.to_string() selected=selected>{format!("rank {} · {}", r.rank, r.name)}</option> }
            })
            .collect_view();
        let by_number = {
            let ranks = ranks.clone();
            move |e: leptos::ev::Event| {
                let n: Option<u32> = event_target_value(&e).trim().parse().ok();
                if let Some(i) = n.and_then(|n| ranks.iter().position(|r| r.rank == n)) {
                    other.set(Other::Rank(i));
                }
            }
        };
        let median_label = median
            .and_then(|i| ranks.get(i))
            .map_or("fleet median".to_string(), |r| {
                format!("fleet median (rank {})", r.rank)
            });
        let dev = |s: &RankSummary| -> Option<DeviceRankSummary> {
            device
                .and_then(|d| s.devices.iter().find(|x| x.device == d))
                .or_else(|| s.devices.first())
                .cloned()
        };
        let (l, r) = (dev(&left), right.as_ref().and_then(dev));
        type Row = (&'static str, &'static str, fn(&DeviceRankSummary) -> u64);
        let rows: [Row; 9] = [
            ("Peak reserved", "peak-reserved", |d| d.peak_reserved_bytes),
            ("Peak allocated", "peak-allocated", |d| {
                d.peak_allocated_bytes
            }),
            ("Reserved", "reserved", |d| d.reserved_bytes),
            ("Allocated", "allocated", |d| d.allocated_bytes),
            ("Largest free", "largest-free", |d| {
                d.largest_free_block_bytes
            }),
            ("Cached free", "inactive", |d| d.total_free_bytes),
            ("Segments", "segments", |d| d.segments),
            ("Blocks", "blocks", |d| d.blocks),
            ("OOMs", "ooms", |d| d.ooms.len() as u64),
        ];
        let rows = rows
            .into_iter()
            .map(|(label, key, get)| {
                let cell = |d: &Option<DeviceRankSummary>| {
                    let v = d.as_ref().map(get);
                    let text = match (v, key) {
                        (Some(v), "segments" | "blocks" | "ooms") => v.to_string(),
                        (Some(v), _) => format::bytes(v),
                        (None, _) => "—".to_string(),
                    };
                    view! { <td data-value=v.map(|v| v.to_string()) title=v.map(|v| format!("{v}"))>{text}</td> }
                };
                view! { <tr data-row=key><th>{label}</th>{cell(&l)}{cell(&r)}</tr> }
            })
            .collect_view();
        let more = right
            .as_ref()
            .map(|right| holds_more(&left, right))
            .unwrap_or_default();
        let frames = more
            .into_iter()
            .take(FRAMES_LISTED)
            .map(|d| {
                let title = format!(
                    "{}: {} here, {} there",
                    d.frame,
                    format::bytes(d.bytes),
                    format::bytes(d.other_bytes)
                );
                view! {
                    <li data-testid="holds-more" data-frame=d.frame.clone() data-excess=d.excess().to_string() title=title>
                        <span class="mono">{format!("+{}", format::bytes(d.excess() as u64))}</span>" "{d.frame.clone()}
                    </li>
                }
            })
            .collect_view();
        let right_name = right
            .as_ref()
            .map_or("—".to_string(), |s| format!("rank {}", s.rank));
        Some(view! {
            <section class="panel rank-compare-panel">
                <h2>"Compare ranks"</h2>
                <select data-testid="compare-rank" on:change=move |e| {
                    let v = event_target_value(&e);
                    other.set(v.parse().map_or(Other::Median, Other::Rank));
                }>
                    <option value="median" selected=other.get_untracked() == Other::Median>{median_label}</option>
                    {options}
                </select>
                <label class="muted">" or rank "
                    <input type="number" min="0" data-testid="compare-rank-number" class="rank-number"
                        on:change=by_number/>
                </label>
                <table class="rank-compare" data-testid="rank-compare">
                    <tr><th></th><th>{format!("rank {}", left.rank)}</th><th>{right_name.clone()}</th></tr>
                    {rows}
                </table>
                <h3 class="muted">{format!("Holds more than {right_name} at its peak")}</h3>
                <ul class="holds-more">{frames}</ul>
            </section>
        })
    }
}
