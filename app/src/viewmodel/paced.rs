//! The answers that take tens of milliseconds at a million entries (the diagnosis behind the
//! Insights panel, a flame graph, a device's anomalies) as futures that give way through a
//! `Pace`, so the worker can answer a timeline zoom in the middle of one (`worker::paced`).
//! They hold the snapshot and the device's timeline by `Rc`, not by a borrow of the worker's
//! state, which other requests use while they wait. The synchronous `answer` runs the same code
//! to the end.

use std::rc::Rc;

use memsnap_core::analysis::anomalies::{anomalies_paced, Anomalies};
use memsnap_core::analysis::pace::Pace;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::Snapshot;

use super::anomalies::anomalies_in;
use super::cache::{trace_index, Analyses};
use super::flame::flame_view_paced;
use super::insights::insights_view_paced;
use crate::protocol::{Request, Response};

pub struct PacedAnswer {
    snapshot: Rc<Snapshot>,
    timeline: Rc<Timeline>,
    host: bool,
    request: Request,
}

/// A paced answer's result: the response, and what the cache keeps.
pub struct Paced {
    pub response: Response,
    /// A device's anomalies over its whole trace (found by the anomalies or the diagnosis).
    pub anomalies: Option<(i64, Rc<Anomalies>)>,
}

impl PacedAnswer {
    /// `None` for a request answered at once: another kind, or anomalies already found (a
    /// range's are then a filter of them).
    pub fn of(snapshot: &Rc<Snapshot>, cache: &mut Analyses, request: &Request) -> Option<Self> {
        let device = match request {
            Request::Flame(r) => r.device,
            Request::Insights { device } => *device,
            Request::Anomalies { device, .. } if cache.anomalies_found(*device).is_none() => {
                *device
            }
            _ => return None,
        };
        Some(PacedAnswer {
            snapshot: snapshot.clone(),
            timeline: cache.timeline_rc(snapshot, device).clone(),
            host: cache.is_host(device),
            request: request.clone(),
        })
    }

    pub async fn answer(self, pace: &mut Pace<'_>) -> Paced {
        let (snap, tl) = (&*self.snapshot, &*self.timeline);
        let response = match &self.request {
            Request::Flame(req) => Response::Flame(flame_view_paced(snap, tl, req, pace).await),
            Request::Insights { device } => {
                let (view, found) = insights_view_paced(snap, tl, self.host, *device, pace).await;
                return Paced {
                    response: Response::Insights(Box::new(view)),
                    anomalies: Some((*device, Rc::new(found))),
                };
            }
            Request::Anomalies { device, range } => {
                let all = Rc::new(anomalies_paced(snap, trace_index(*device), tl, pace).await);
                return Paced {
                    response: Response::Anomalies(anomalies_in(snap, &all, *device, *range)),
                    anomalies: Some((*device, all)),
                };
            }
            other => Response::Failed {
                message: format!("{} is answered at once, not paced", other.kind()),
            },
        };
        Paced {
            response,
            anomalies: None,
        }
    }
}
