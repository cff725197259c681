//! Small browser helpers shared by the page's layers: the next animation frame, an input
//! event's element, a picker's or drop's files. They import nothing of the page.

use leptos::prelude::window;
use wasm_bindgen::JsCast;

/// Runs `f` in the next animation frame: after this frame's DOM and canvas work.
pub fn next_frame(f: impl FnOnce() + 'static) {
    let f = wasm_bindgen::closure::Closure::once_into_js(f);
    let _ = window().request_animation_frame(f.unchecked_ref());
}

/// The `HtmlInputElement` behind an input event.
pub fn event_input(e: &leptos::ev::Event) -> Option<web_sys::HtmlInputElement> {
    e.target()?.dyn_into().ok()
}

/// The files of a picker or a drop, in order.
pub fn file_list(files: Option<web_sys::FileList>) -> Vec<web_sys::File> {
    files
        .map(|f| (0..f.length()).filter_map(|i| f.get(i)).collect())
        .unwrap_or_default()
}
