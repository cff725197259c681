//! Stack panel: what the pointer is over in the segment view, and where it was allocated.

use leptos::prelude::*;

use crate::format;
use memsnap_core::analysis::pools::{serves, DEFAULT_POOL};

use crate::protocol::{BlockStateVm, SegmentsView};
use crate::state::{AppState, Hover};
use crate::views::analysis_state::Analysis;
use crate::views::pools::pool_name;

#[component]
pub fn StackPanel() -> impl IntoView {
    let state = expect_context::<AppState>();
    // What the analysis views picked (a timeline band, a row) shows when no block is hovered.
    let analysis = use_context::<Analysis>();
    let details = move || {
        // A pinned block wins over the pointer until it is clicked again.
        let view = state.segments.get();
        let pinned = view
            .as_ref()
            .zip(state.pinned.get())
            .and_then(|(v, addr)| v.block_at(addr))
            .map(|(segment, block)| Hover::Block { segment, block });
        let hovered = view.zip(pinned.or(state.hover.get())).map(|(view, hover)| {
            let (facts, frames, caption) = describe(&view, hover);
            let mut facts: Vec<(String, String)> =
                facts.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
            if pinned.is_some() {
                facts.push(("Pinned".into(), "click the block again to let go".into()));
            }
            (facts, frames, caption.to_string())
        });
        hovered.or_else(|| {
            analysis
                .and_then(|a| a.picked.get())
                .map(|p| (p.facts, p.frames, p.caption))
        })
    };
    view! {
        <section class="panel stack-panel">
            <h2>"Details"</h2>
            <div data-testid="stack" class="stack">
                {move || match details() {
                    Some((facts, frames, caption)) => view! {
                        <dl class="facts">
                            {facts.into_iter().map(|(k, v)| view! { <dt>{k}</dt><dd>{v}</dd> }).collect_view()}
                        </dl>
                        <h3>{caption}</h3>
                        {if frames.is_empty() {
                            view! { <p class="muted">"No stack was recorded (record_memory_history was off or context=None)."</p> }.into_any()
                        } else {
                            view! {
                                <ol class="frames">
                                    {frames.into_iter().map(|f| view! { <li class="frame">{f}</li> }).collect_view()}
                                </ol>
                            }.into_any()
                        }}
                    }.into_any(),
                    None => view! { <p class="muted">"Hover a block to see its size, state and stack."</p> }.into_any(),
                }}
            </div>
        </section>
    }
}

type Described = (Vec<(&'static str, String)>, Vec<String>, &'static str);

fn describe(view: &SegmentsView, hover: Hover) -> Described {
    let frames = |stack: Option<u32>| {
        stack
            .map(|s| view.frames_of(s).map(|f| f.to_string()).collect())
            .unwrap_or_default()
    };
    let exact = |n: u64| format!("{} ({n} B)", format::bytes(n));
    match hover {
        Hover::Block { segment, block } => {
            let Some(seg) = view.segments.get(segment) else {
                return (Vec::new(), Vec::new(), "");
            };
            let Some(b) = seg.blocks.get(block) else {
                return (Vec::new(), Vec::new(), "");
            };
            let mut facts = vec![
                ("Block", format::address(seg.address + b.offset)),
                ("Size", exact(b.size)),
            ];
            if let Some(r) = b.requested_size {
                facts.push(("Requested", exact(r)));
            }
            facts.push(("State", b.state.as_str().to_string()));
            facts.push(("Pool", pool_name(seg.pool_id)));
            if !b.history.is_empty() {
                // torch <= 2.0 files: every allocation this block has served, oldest first.
                let lines: Vec<String> = b
                    .history
                    .iter()
                    .map(|(a, n)| format!("{} {}", format::address(*a), format::bytes(*n)))
                    .collect();
                facts.push(("History", lines.join("; ")));
            }
            if b.state == BlockStateVm::Inactive {
                facts.push(("Can serve", serves(seg.pool_id.unwrap_or(DEFAULT_POOL))));
            }
            facts.push((
                "Segment",
                format!(
                    "{} ({})",
                    format::address(seg.address),
                    format::bytes(seg.total_size)
                ),
            ));
            (facts, frames(b.stack), "Allocated at")
        }
        Hover::Segment { segment } => {
            let Some(seg) = view.segments.get(segment) else {
                return (Vec::new(), Vec::new(), "");
            };
            let facts = vec![
                ("Segment", format::address(seg.address)),
                ("Size", exact(seg.total_size)),
                ("Stream", seg.stream.to_string()),
                ("Pool", seg.pool.clone().unwrap_or_else(|| "unknown".into())),
                ("Pool id", pool_name(seg.pool_id)),
                ("Blocks", seg.blocks.len().to_string()),
            ];
            (facts, frames(seg.stack), "Reserved (cudaMalloc) at")
        }
    }
}
