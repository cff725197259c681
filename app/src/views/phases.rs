//! The program's phases above the timeline: a band with one span per phase over the range the
//! timeline shows (nested ones stacked, compiler phases folded until asked for), hover for the
//! name and duration, click to zoom the timeline (and the range filter the flame graph and
//! anomalies follow) to it; the phase of the peak; a table of each phase's figures. A file
//! without phases gets one line saying why.

use leptos::prelude::*;

use super::analysis_state::{drawn_range, Analysis};
use super::size::size;
use crate::format;
use crate::protocol::analysis::{EntryRange, PhaseRow, PhasesView};
use crate::state::AppState;

/// Lanes of the band at most (deeper phases share the last).
const LANES: usize = 6;
/// Rows of the table at most.
const TABLE_ROWS: usize = 200;

/// "+1.50 GiB" / "-3.00 MiB" / "0 B".
fn signed(n: i64) -> String {
    match n {
        0 => "0 B".into(),
        n if n > 0 => format!("+{}", format::bytes(n as u64)),
        n => format!("-{}", format::bytes(n.unsigned_abs())),
    }
}

fn duration(us: Option<i64>) -> String {
    match us {
        Some(us) if us >= 1_000_000 => format!("{:.2} s", us as f64 / 1e6),
        Some(us) => format!("{:.1} ms", us as f64 / 1e3),
        None => "open-ended".into(),
    }
}

/// The lane of each row shown: how many of its enclosing phases are shown.
fn lanes(v: &PhasesView, shown: &[bool]) -> Vec<usize> {
    v.rows
        .iter()
        .map(|r| {
            let (mut lane, mut at) = (0, r.phase.parent);
            while let Some(p) = at {
                lane += usize::from(shown[p]);
                at = v.rows[p].phase.parent;
            }
            lane.min(LANES - 1)
        })
        .collect()
}

/// The zoom for a phase: its entries, at least one.
fn phase_range(r: &PhaseRow) -> EntryRange {
    let start = r.phase.first as u64;
    EntryRange {
        start,
        end: (r.phase.end as u64).max(start + 1),
    }
}

#[component]
pub fn PhaseBand() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    let show_compile = RwSignal::new(false);
    move || {
        let v = an.phases.get()?;
        if let Some(why) = &v.none {
            return Some(
                view! { <p class="muted note phases-none" data-testid="phases-none">{why.clone()}</p> }
                    .into_any(),
            );
        }
        let compile_count = v.rows.iter().filter(|r| r.phase.compile).count();
        let all = show_compile.get();
        let shown: Vec<bool> = v.rows.iter().map(|r| all || !r.phase.compile).collect();
        let lane_of = lanes(&v, &shown);
        let used = (0..v.rows.len())
            .filter(|&i| shown[i])
            .map(|i| lane_of[i] + 1)
            .max()
            .unwrap_or(0);
        let peak = v.peak_phase.map(|i| v.rows[i as usize].clone());
        let v2 = v.clone();
        let shown2 = shown.clone();
        let spans = move || {
            let r = drawn_range(&state, &an);
            let span = r.end.saturating_sub(r.start).max(1) as f64;
            v2.rows
                .iter()
                .enumerate()
                .filter(|(i, _)| shown2[*i])
                .filter(|(_, p)| (p.phase.first as u64) < r.end && (p.phase.end as u64) > r.start)
                .map(|(i, p)| {
                    let a = (p.phase.first as u64).max(r.start) - r.start;
                    let b = (p.phase.end as u64).min(r.end) - r.start;
                    let left = a as f64 * 100.0 / span;
                    let width = ((b - a) as f64 * 100.0 / span).max(0.2);
                    let title = format!(
                        "{} — {}, entries {}..{}, peak {} allocated",
                        p.path,
                        duration(p.phase.duration_us()),
                        p.phase.first,
                        p.phase.end,
                        format::bytes(p.stats.peak_allocated)
                    );
                    let zoom = phase_range(p);
                    view! {
                        <div class="phase-span" data-testid="phase-span"
                            class:compile=p.phase.compile
                            class:peak-phase=v2.peak_phase == Some(i as u32)
                            data-name=p.phase.name.clone() data-first=p.phase.first.to_string()
                            data-end=p.phase.end.to_string()
                            style=format!("left:{left:.3}%;width:{width:.3}%;top:{}px", lane_of[i] * 16)
                            title=title
                            on:click=move |_| an.range.set(Some(zoom))>
                            <span>{p.phase.name.clone()}</span>
                        </div>
                    }
                })
                .collect_view()
        };
        let table_rows: Vec<(usize, PhaseRow)> = v
            .rows
            .iter()
            .enumerate()
            .filter(|(i, _)| shown[*i])
            .take(TABLE_ROWS)
            .map(|(i, r)| (i, r.clone()))
            .collect();
        let hidden_rows = shown
            .iter()
            .filter(|s| **s)
            .count()
            .saturating_sub(TABLE_ROWS);
        let peak_line = match &peak {
            Some(p) => format!("The allocated peak is in {}.", p.path),
            None => "The allocated peak is outside every phase.".to_string(),
        };
        Some(view! {
            <section class="panel phases" data-testid="phases" data-count=v.rows.len().to_string()>
                <div class="panel-head">
                    <h2>"Phases"</h2>
                    <span class="muted" data-testid="peak-phase"
                        data-phase=peak.as_ref().map(|p| p.path.clone()).unwrap_or_default()>{peak_line}</span>
                    {(compile_count > 0).then(|| view! {
                        <label class="small">
                            <input type="checkbox" data-testid="phases-compile"
                                prop:checked=move || show_compile.get()
                                on:change=move |_| show_compile.update(|s| *s = !*s)/>
                            {format!(" compiler phases ({compile_count})")}
                        </label>
                    })}
                </div>
                {(!v.warnings.is_empty()).then(|| view! {
                    <p class="muted note" data-testid="phases-warnings">{format!("Marks repaired: {}.", v.warnings.join("; "))}</p>
                })}
                <div class="phase-band" data-testid="phase-band" style=format!("height:{}px", used.max(1) * 16)>
                    {spans}
                </div>
                <details class="phase-table">
                    <summary>"Memory in each phase"</summary>
                    <table class="rows"><thead><tr>
                        <th>"phase"</th><th>"entries"</th><th>"peak allocated"</th><th>"peak reserved"</th>
                        <th>"allocated"</th><th>"freed"</th><th>"net"</th><th>"left live (largest)"</th>
                    </tr></thead><tbody>
                    {table_rows.into_iter().map(|(i, r)| {
                        let zoom = phase_range(&r);
                        let s = r.stats.clone();
                        let top = s.left_live.first().map(|g| format!("{} {}", format::bytes(g.bytes), g.frame)).unwrap_or_default();
                        // Every group kept, largest first, for the cell's title.
                        let all = s.left_live.iter().map(|g| format!("{} ({} allocations) {}", format::bytes(g.bytes), g.count, g.frame)).collect::<Vec<_>>().join("\n");
                        view! {
                            <tr data-testid="phase-row" class:peak-phase=v.peak_phase == Some(i as u32)
                                data-name=r.phase.name.clone() data-peak-allocated=s.peak_allocated.to_string()
                                data-allocated=s.allocated_bytes.to_string() data-freed=s.freed_bytes.to_string()
                                on:click=move |_| an.range.set(Some(zoom))>
                                <td title=r.path.clone() style=format!("padding-left:{}px", 4 + 12 * r.phase.depth.min(8))>{r.phase.name.clone()}</td>
                                <td class="num">{format!("{}..{}", r.phase.first, r.phase.end)}</td>
                                <td class="num">{size(s.peak_allocated)}</td>
                                <td class="num">{size(s.peak_reserved)}</td>
                                <td class="num">{size(s.allocated_bytes)}</td>
                                <td class="num">{size(s.freed_bytes)}</td>
                                <td class="num">{signed(s.net_bytes)}</td>
                                <td class="small" data-testid="phase-left-live" title=all>{top.clone()}
                                    {(s.left_live.len() > 1).then(|| view! { <span class="muted">{format!(" +{} more", s.left_live.len() - 1)}</span> })}
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                    </tbody></table>
                    {(hidden_rows > 0).then(|| view! { <p class="muted note">{format!("{hidden_rows} more phases not listed")}</p> })}
                </details>
            </section>
        }.into_any())
    }
}
