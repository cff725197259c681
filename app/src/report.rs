//! A self-contained report (`memsnap html`): one file, opened from `file://`, holding the viewer
//! and one snapshot. There the page can neither start a worker from a script file nor fetch a
//! file beside itself, so the report's bootstrap script (capture/src/report/bootstrap.js) sets
//! `window.memsnapReport` before the page starts: `{ worker(): Worker, file: File }`, the worker
//! already holding its compiled module and the file the snapshot's bytes. Everything else is
//! the page as served.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{File, Worker};

fn report() -> Option<JsValue> {
    let window = web_sys::window()?;
    js_sys::Reflect::get(&window, &JsValue::from_str("memsnapReport"))
        .ok()
        .filter(|v| v.is_object())
}

/// Whether the page is a report (it then has no example or `?url=` beside it to fetch).
pub fn is_report() -> bool {
    report().is_some()
}

/// A worker started by the report's bootstrap; `None` outside a report.
pub fn worker() -> Option<Result<Worker, String>> {
    let report = report()?;
    let start = js_sys::Reflect::get(&report, &JsValue::from_str("worker")).ok()?;
    let start = start.dyn_into::<js_sys::Function>().ok()?;
    Some(
        start
            .call0(&report)
            .map_err(|e| format!("the report could not start its worker: {e:?}"))
            .and_then(|w| {
                w.dyn_into::<Worker>()
                    .map_err(|_| "the report's worker() returned no Worker".to_string())
            }),
    )
}

/// The snapshot the report carries.
pub fn file() -> Option<File> {
    let report = report()?;
    js_sys::Reflect::get(&report, &JsValue::from_str("file"))
        .ok()?
        .dyn_into::<File>()
        .ok()
}
