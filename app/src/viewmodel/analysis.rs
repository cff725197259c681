//! Answers the analysis views' requests (timeline, allocation, state at an entry, what-if,
//! flame graph, anomalies, insights, stacks) from the open snapshot and the worker's cache.

use memsnap_core::snapshot::Snapshot;

use super::allocation::allocation_view;
use super::anomalies::anomalies_view;
use super::cache::Analyses;
use super::flame::flame_view;
use super::insights::insights_view;
use super::stack::stack_view;
use super::state_at::state_at_view;
use super::timeline::timeline_view;
use super::whatif::whatif_view;
use crate::protocol::{Request, Response};

/// `None` for the requests this module does not answer.
pub fn answer_analysis(
    snap: &Snapshot,
    cache: &mut Analyses,
    request: &Request,
) -> Option<Response> {
    let failed = |message: String| Response::Failed { message };
    Some(match request {
        Request::Timeline(req) => Response::Timeline(timeline_view(snap, cache, req)),
        Request::Allocation { device, alloc } => {
            allocation_view(snap, cache, *device, *alloc).map_or_else(failed, Response::Allocation)
        }
        Request::StateAt { device, index } => {
            Response::StateAt(state_at_view(snap, cache, *device, *index))
        }
        Request::WhatIf(req) => whatif_view(snap, cache, req).map_or_else(failed, Response::WhatIf),
        Request::Flame(req) => Response::Flame(flame_view(snap, cache, req)),
        Request::Anomalies { device, range } => {
            Response::Anomalies(anomalies_view(snap, cache, *device, *range))
        }
        Request::Insights { device } => {
            Response::Insights(Box::new(insights_view(snap, cache, *device)))
        }
        Request::Stack { stack } => stack_view(snap, *stack).map_or_else(failed, Response::Stack),
        _ => return None,
    })
}
