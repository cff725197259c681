//! Requests answered one at a time, in the order they came, though reading a file awaits: the
//! page's pool sends a worker its next file before the answer to the one it is on, and a detail
//! worker's analysis requests must see the snapshot that the open sent before them made. The long
//! analyses only start here: they go on in slices (`paced`) while later requests are answered.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use wasm_bindgen::JsValue;

/// What handling a message left to do: nothing, or work the next message waits for.
pub type Pending = Option<Pin<Box<dyn Future<Output = ()>>>>;

thread_local! {
    /// Messages come in while an earlier one awaits.
    static WAITING: RefCell<VecDeque<JsValue>> = const { RefCell::new(VecDeque::new()) };
    static BUSY: Cell<bool> = const { Cell::new(false) };
}

/// Queues `data` for `handle`, and handles what is queued unless a request is under way.
pub fn push(data: JsValue, handle: fn(JsValue) -> Pending) {
    WAITING.with(|w| w.borrow_mut().push_back(data));
    run(handle);
}

fn run(handle: fn(JsValue) -> Pending) {
    if BUSY.get() {
        return;
    }
    while let Some(data) = WAITING.with(|w| w.borrow_mut().pop_front()) {
        if let Some(work) = handle(data) {
            BUSY.set(true);
            wasm_bindgen_futures::spawn_local(async move {
                work.await;
                BUSY.set(false);
                run(handle);
            });
            return;
        }
    }
}
