//! The open file's consistency warnings (`snapshot::validate`, run in the worker): the file read,
//! but its numbers disagree, so what the views show is a partial picture.

use leptos::prelude::*;

use crate::state::AppState;

/// Up to this many warnings are shown open; a longer list starts collapsed.
const SHOWN_OPEN: usize = 5;

#[component]
pub fn LoadWarnings() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let warnings = state.file.get().map(|f| f.warnings).unwrap_or_default();
        (!warnings.is_empty()).then(|| {
            let n = warnings.len();
            let summary = format!(
                "{n} inconsistenc{} in this file: a partial view",
                if n == 1 { "y" } else { "ies" }
            );
            view! {
                <details class="warning" data-testid="load-warnings" role="status" open=n <= SHOWN_OPEN>
                    <summary>{summary}</summary>
                    <ul>
                        {warnings.into_iter().map(|w| view! { <li>{w}</li> }).collect_view()}
                    </ul>
                </details>
            }
        })
    }
}
