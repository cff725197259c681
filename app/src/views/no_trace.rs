//! One line in place of the timeline for a device whose file has no trace (a
//! `memory_snapshot()` list, a dump taken without `_record_memory_history`, or a trace of one
//! `snapshot` marker): the views that need a trace give up their space.

use leptos::prelude::*;

#[component]
pub fn NoTrace() -> impl IntoView {
    // This line is the timeline's first paint for such a file, and for the next such file
    // opened while it stays (the benchmark waits on it).
    let state = expect_context::<crate::state::AppState>();
    Effect::new(move |_| {
        if state.file.with(|f| f.is_some()) {
            state.painted(crate::perf::View::Timeline);
        }
    });
    view! {
        <section class="panel no-trace" data-testid="no-trace">
            <strong>"No trace"</strong>
            " — this file holds only the segments at the dump (recorded without "
            <code>"torch.cuda.memory._record_memory_history()"</code>
            "), so there is no timeline or state history; the flame graph and top frames show the dump's live blocks."
        </section>
    }
}
