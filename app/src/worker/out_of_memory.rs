//! Telling the page the worker ran out of memory. A failed allocation in WebAssembly aborts with
//! a trap, and all the page would see is "RuntimeError: unreachable". The worker's own `error`
//! handler runs before the page's: if the instance's memory is near WebAssembly's 4 GiB ceiling
//! it cancels the event and posts the page a plain string saying so (`client` shows strings as
//! fatal errors). Below that, the trap is most likely a panic (its message is in the console), and
//! the event goes on to the page unchanged.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::ErrorEvent;

/// A wasm32 instance cannot grow past 4 GiB; a trap above this much memory is taken as that.
const NEAR_CEILING: f64 = 3.5 * (1u64 << 30) as f64;

/// No formatting here: the handler may run with the allocator exhausted.
const MESSAGE: &str = "the page ran out of memory: the worker reached WebAssembly's 4 GiB limit \
    with this snapshot (too many trace entries to hold in a browser). The command-line `memsnap` \
    reads it natively: `memsnap stats FILE`, `memsnap trace FILE`, `memsnap replay FILE`.";

/// Installs the handler; call once when the worker starts.
pub fn install() {
    let handler = Closure::<dyn FnMut(ErrorEvent)>::new(|event: ErrorEvent| {
        if memory_bytes() >= NEAR_CEILING {
            event.prevent_default();
            if let Err(e) = super::post::scope().post_message(&JsValue::from_str(MESSAGE)) {
                web_sys::console::error_2(&"memsnap worker: postMessage failed".into(), &e);
            }
        }
    });
    if let Err(e) = super::post::scope()
        .add_event_listener_with_callback("error", handler.as_ref().unchecked_ref())
    {
        web_sys::console::error_2(&"memsnap worker: no error handler".into(), &e);
    }
    // The handler lives as long as the worker.
    handler.forget();
}

fn memory_bytes() -> f64 {
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    memory
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64
}
