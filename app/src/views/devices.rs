//! Device picker: the devices with segments or trace entries, and the file's pinned host
//! memory when it has some ("host (pinned)").

use leptos::prelude::*;

use crate::state::AppState;

#[component]
pub fn DevicePicker() -> impl IntoView {
    let state = expect_context::<AppState>();
    move || {
        let file = state.file.get()?;
        let options = file
            .devices
            .iter()
            .map(|d| {
                let label = if d.host {
                    format!("host (pinned) · {} segments", d.segments)
                } else {
                    format!("{}:{} · {} segments", d.allocator, d.device, d.segments)
                };
                let title = format!(
                    "{} segments, {} blocks, {} trace entries",
                    d.segments, d.blocks, d.trace_entries
                );
                let value = d.device.to_string();
                let selected = state.device.get_untracked() == Some(d.device);
                let kind = if d.host { "host".to_string() } else { d.allocator.clone() };
                view! { <option value=value selected=selected title=title data-kind=kind>{label}</option> }
            })
            .collect_view();
        let empty = file.devices.is_empty();
        Some(view! {
            <section class="panel devices">
                <h2>"Device"</h2>
                {empty.then(|| view! { <p class="muted">"This file has no segments and no trace entries."</p> })}
                <select data-testid="device-picker" disabled=empty
                    on:change=move |e| {
                        state.select_device(event_target_value(&e).parse().ok());
                    }>
                    {options}
                </select>
            </section>
        })
    }
}
