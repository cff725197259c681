//! What the worker sends the page: responses, and progress while it reads and parses.

use js_sys::{Array, Uint8Array};
use wasm_bindgen::JsCast;
use web_sys::DedicatedWorkerGlobalScope;

use crate::protocol::{encode, Progress, RequestId, Response, Stage};

pub(super) fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// Posts one response; its buffer is transferred, not copied.
pub(crate) fn post(id: RequestId, response: &Response) {
    let bytes = Uint8Array::from(encode(id, response).as_slice());
    let message = Array::of1(&bytes);
    let transfer = Array::of1(&bytes.buffer());
    if let Err(e) = scope().post_message_with_transfer(&message, &transfer) {
        web_sys::console::error_2(&"memsnap worker: postMessage failed".into(), &e);
    }
}

/// Work on fewer bytes than this reports no progress: it ends about when the page would first
/// draw a bar (`views/open.rs`, `PROGRESS_AFTER_MS`), and each report is a message the page's
/// thread takes while the worker reads and parses (a 1.2 MB file sent seven: the read's start
/// and end, the parse's start, one per 256 KiB parsed).
const PROGRESS_FROM: u64 = 2 << 20;

pub(super) fn progress(id: RequestId, stage: Stage, done: u64, total: Option<u64>) {
    if total.is_some_and(|t| t < PROGRESS_FROM) {
        return;
    }
    post(id, &Response::Progress(Progress { stage, done, total }));
}
