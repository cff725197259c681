//! Builders of the view models the worker sends: plain functions of a `Snapshot`, so they are
//! tested natively. Analyses come from `memsnap_core::analysis`; these only shape them.

mod allocation;
mod analysis;
mod anomalies;
mod cache;
mod compare;
mod diagnostics;
mod first_screen;
mod flame;
pub mod fleet;
mod insights;
mod oom;
mod paced;
mod peak;
mod phases;
mod segments;
mod stack;
mod state_at;
mod summary;
mod timeline;
mod top_frames;
mod whatif;

pub use analysis::answer_analysis;
pub use cache::Analyses;
pub use compare::{compare_view, COMPARE_ROWS};
pub use diagnostics::diagnostics_view;
pub use first_screen::first_screen;
pub use paced::{Paced, PacedAnswer};
pub use segments::{segments_view, segments_view_of};
pub use summary::file_summary;

use memsnap_core::snapshot::Snapshot;

use crate::protocol::{Request, Response};

/// Answers a request about an open snapshot; `cache` holds what the analysis views reuse
/// (reset it when another file opens). Opening files is the worker's job, not this one's.
pub fn answer(snapshot: &Snapshot, cache: &mut Analyses, request: &Request) -> Response {
    if let Some(response) = answer_analysis(snapshot, cache, request) {
        return response;
    }
    match request {
        Request::Segments { device } => Response::Segments(segments_view(snapshot, *device)),
        Request::Diagnostics { device } => {
            Response::Diagnostics(diagnostics_view(snapshot, *device))
        }
        Request::Oom { device } => oom::oom_response(snapshot, *device),
        Request::Phases { device } => {
            Response::Phases(Box::new(phases::phases_view(snapshot, cache, *device)))
        }
        Request::Pools { device } => Response::Pools {
            device: *device,
            pools: memsnap_core::analysis::pools::pool_totals(snapshot)
                .into_iter()
                .filter(|p| p.device == *device)
                .collect(),
        },
        Request::OpenFile { .. } | Request::OpenUrl { .. } | Request::Summarize { .. } => {
            Response::Failed {
                message: "open requests are handled by the worker's loader".into(),
            }
        }
        other => Response::Failed {
            message: format!("no view model for {other:?}"),
        },
    }
}

/// What a page asks first for `device`: its segments and its whole timeline at a typical
/// plot size (1000 × 226 px). The worker's warm-up and the benchmarks send the same pair.
pub fn first_paint_requests(snapshot: &Snapshot, device: i64) -> [Request; 2] {
    let entries = usize::try_from(device).map_or(0, |d| snapshot.trace(d).len() as u64);
    let plot = crate::protocol::PlotSize {
        width: 1000,
        height: 226,
    };
    [
        Request::Segments { device },
        Request::Timeline(first_screen::whole_timeline(device, entries, plot)),
    ]
}
