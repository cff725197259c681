//! State the analysis views share: the time-range filter (entry indices), the state slider's
//! entry, what the timeline or a list picked for the stack panel, the device's insights and its
//! phases (the phase band, and the timeline's peak sentence, read them).

use std::sync::Arc;

use leptos::prelude::*;

use crate::protocol::analysis::{EntryRange, InsightsView, PhasesView};
use crate::protocol::{Request, Response};
use crate::state::AppState;

/// What the stack panel shows when the pointer is not over a segment block.
#[derive(Debug, Clone, PartialEq)]
pub struct Picked {
    pub facts: Vec<(String, String)>,
    pub caption: String,
    pub frames: Vec<String>,
}

#[derive(Clone, Copy)]
pub struct Analysis {
    /// The range filter; `None`: the whole trace.
    pub range: RwSignal<Option<EntryRange>>,
    /// The range the timeline last drew; `None`: none drawn yet. The range filter's inputs
    /// and the state slider show this one, so they change in the frame that the chart
    /// changes in. Changed at the wheel event, they made the browser lay out and paint the
    /// page before it could take the chart's data (scripts/profile/profile_page.py --zoom, trace).
    pub drawn: RwSignal<Option<EntryRange>>,
    /// The state slider's entry; `None`: the dump's segments are shown.
    pub cursor: RwSignal<Option<u64>>,
    pub picked: RwSignal<Option<Picked>>,
    /// The allocation last clicked in the timeline (an index into the device's allocations):
    /// the address keeps it, and the timeline shows it when it is set from there.
    pub selected: RwSignal<Option<u32>>,
    pub insights: RwSignal<Option<Arc<InsightsView>>>,
    pub phases: RwSignal<Option<Arc<PhasesView>>>,
}

impl Analysis {
    pub fn new() -> Analysis {
        Analysis {
            range: RwSignal::new(None),
            drawn: RwSignal::new(None),
            cursor: RwSignal::new(None),
            picked: RwSignal::new(None),
            selected: RwSignal::new(None),
            insights: RwSignal::new(None),
            phases: RwSignal::new(None),
        }
    }

    /// Provides the context and keeps it in step with the shell's device choice.
    pub fn provide(state: AppState) -> Analysis {
        let an = Analysis::new();
        provide_context(an);
        Effect::new(move |_| {
            let device = state.device.get();
            state.file.track();
            an.range.set(None);
            an.drawn.set(None);
            an.cursor.set(None);
            an.picked.set(None);
            an.selected.set(None);
            an.insights.set(None);
            an.phases.set(None);
            let Some(device) = device else { return };
            state.request_background(Request::Phases { device }, move |r| match r {
                Response::Phases(v) if state.device.get_untracked() == Some(v.device) => {
                    an.phases.set(Some(Arc::new(*v)))
                }
                Response::Failed { message } => state.load_error.set(Some(message)),
                _ => {}
            });
            state.request_background(Request::Insights { device }, move |r| match r {
                Response::Insights(v) if state.device.get_untracked() == Some(v.device) => {
                    an.insights.set(Some(Arc::new(*v)))
                }
                Response::Failed { message } => state.load_error.set(Some(message)),
                _ => {}
            });
        });
        an
    }

    /// Sets what the stack panel shows (and stops it showing a hovered segment block).
    pub fn pick(&self, state: &AppState, picked: Picked) {
        state.hover.set(None);
        self.picked.set(Some(picked));
    }
}

impl Default for Analysis {
    fn default() -> Self {
        Analysis::new()
    }
}

/// Trace entries of the shown device (0 for a trace of `snapshot` markers only: no trace).
pub fn entries(state: &AppState) -> u64 {
    let device = state.device.get();
    state
        .file
        .with(|f| {
            f.as_ref().and_then(|f| {
                f.devices
                    .iter()
                    .find(|d| Some(d.device) == device)
                    .map(|d| d.timeline_entries())
            })
        })
        .unwrap_or(0)
}

/// The range filter, or the whole trace (reactive).
pub fn range(state: &AppState, an: &Analysis) -> EntryRange {
    let n = entries(state);
    match an.range.get() {
        Some(r) => EntryRange {
            start: r.start.min(n),
            end: r.end.min(n).max(r.start.min(n)),
        },
        None => EntryRange { start: 0, end: n },
    }
}

/// The range the timeline shows, or the range filter before it has drawn (reactive).
pub fn drawn_range(state: &AppState, an: &Analysis) -> EntryRange {
    match an.drawn.get() {
        Some(r) => r,
        None => range(state, an),
    }
}

/// Shows a stack fetched by id in the stack panel, with `facts` above it.
pub fn pick_stack(
    state: AppState,
    an: Analysis,
    stack: Option<u32>,
    facts: Vec<(String, String)>,
    caption: &str,
) {
    let caption = caption.to_string();
    let Some(stack) = stack else {
        an.pick(
            &state,
            Picked {
                facts,
                caption,
                frames: Vec::new(),
            },
        );
        return;
    };
    state.request(Request::Stack { stack }, None, move |r| match r {
        Response::Stack(s) => an.pick(
            &state,
            Picked {
                facts,
                caption,
                frames: s.frames,
            },
        ),
        Response::Failed { message } => state.load_error.set(Some(message)),
        _ => {}
    });
}

/// "12.3 ms" style time of an entry (relative to `origin`, the range's first entry time).
pub fn time_label(us: Option<i64>, origin: Option<i64>) -> Option<String> {
    let t = us? - origin.unwrap_or(0);
    let abs = t.unsigned_abs() as f64;
    Some(if abs >= 1e6 {
        format!("{:.3} s", t as f64 / 1e6)
    } else if abs >= 1e3 {
        format!("{:.2} ms", t as f64 / 1e3)
    } else {
        format!("{t} µs")
    })
}
