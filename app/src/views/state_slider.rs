//! State at any point: a slider over the range filter's entries (arrow keys step it when
//! focused); moving it rebuilds the segment view from `analysis::state_at` in the worker.

use std::sync::Arc;

use leptos::prelude::*;

use super::analysis_state::{drawn_range, entries, time_label, Analysis};
use crate::protocol::{Request, Response};
use crate::state::AppState;

/// The entry whose state is shown, its time and the trace's first time.
type Shown = (u64, Option<i64>, Option<i64>);

#[component]
pub fn StateSlider() -> impl IntoView {
    let state = expect_context::<AppState>();
    let an = expect_context::<Analysis>();
    // The state shown: (entry, time), once the worker has answered for it.
    let shown = RwSignal::new(None::<Shown>);
    let in_flight = StoredValue::new(false);
    let queued = StoredValue::new(None::<u64>);

    fn fetch(
        state: AppState,
        shown: RwSignal<Option<Shown>>,
        in_flight: StoredValue<bool>,
        queued: StoredValue<Option<u64>>,
        index: u64,
    ) {
        let Some(device) = state.device.get_untracked() else {
            return;
        };
        if in_flight.get_value() {
            queued.set_value(Some(index));
            return;
        }
        in_flight.set_value(true);
        state.request(Request::StateAt { device, index }, None, move |r| {
            in_flight.set_value(false);
            let next = queued.try_update_value(|q| q.take()).flatten();
            match r {
                // A newer position is queued: skip drawing this one.
                Response::StateAt(v)
                    if next.is_none()
                        && state.device.get_untracked() == Some(v.segments.device) =>
                {
                    shown.set(Some((v.index, v.time_us, v.first_time_us)));
                    state.hover.set(None);
                    state.segments.set(Some(Arc::new(v.segments)));
                }
                Response::Failed { message } => state.load_error.set(Some(message)),
                _ => {}
            }
            if let Some(next) = next {
                fetch(state, shown, in_flight, queued, next);
            }
        });
    }

    Effect::new(move |_| match an.cursor.get() {
        Some(i) => fetch(state, shown, in_flight, queued, i),
        None => shown.set(None),
    });

    let back_to_dump = move |_| {
        an.cursor.set(None);
        state.select_device(state.device.get_untracked());
    };

    // Only the range's figures follow a zoom, when the timeline draws it: rebuilding the panel
    // at every wheel step showed as layout and paint ahead of the timeline's redraw.
    let r = Memo::new(move |_| drawn_range(&state, &an));
    let n = Memo::new(move |_| entries(&state));
    move || {
        let n = n.get();
        (n > 0).then(|| {
            view! {
                <section class="panel state-at" data-testid="state-at"
                    data-index=move || shown.get().map(|s| s.0.to_string()).unwrap_or_default()>
                    <div class="panel-head">
                        <h2>"State at entry"</h2>
                        <span class="muted">{move || match shown.get() {
                            Some((i, t, t0)) => format!(
                                "segments after {i} of {n} entries{}",
                                time_label(t, t0).map(|t| format!(" (+{t})")).unwrap_or_default()
                            ),
                            None => "segments at the dump (end of the trace)".to_string(),
                        }}</span>
                        <span class="spacer"></span>
                        <button class="button small" data-testid="state-dump"
                            disabled=move || an.cursor.get().is_none()
                            on:click=back_to_dump>"Show the dump"</button>
                    </div>
                    <input type="range" class="slider" data-testid="state-slider"
                        min=move || r.get().start.to_string() max=move || r.get().end.to_string() step="1"
                        prop:value=move || an.cursor.get().unwrap_or(r.get().end).to_string()
                        on:input=move |e| {
                            if let Ok(i) = event_target_value(&e).parse::<u64>() {
                                an.cursor.set(Some(i));
                            }
                        }/>
                    <div class="slider-scale muted"><span>{move || r.get().start}</span><span>{move || r.get().end}</span></div>
                </section>
            }
        })
    }
}
