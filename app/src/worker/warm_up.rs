//! Warming the worker's code before the first file arrives. V8 runs wasm first in its baseline
//! tier and compiles a function's optimised code only once it has run a while, so the first
//! parse in a fresh worker ran 2–4× slower than later ones (`scripts/bench.sh`'s page step:
//! cs336-c-medium512-training at 42 MB/s first, 96 MB/s after). While the user picks a file,
//! the worker parses and indexes the bundled example a few times, one pass per task so a
//! request that arrives meanwhile waits for one pass at most (a few ms).

use memsnap_core::snapshot;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::viewmodel::{file_summary, Analyses};

/// The bundled example (38 kB), the same bytes the page's "Open the example" loads.
const EXAMPLE: &[u8] = include_bytes!("../../assets/example.pickle");
/// Passes over it: in node, 5 brought the next parse of a 3.9 MB snapshot from 98 to 25 ms.
const PASSES: u32 = 8;

/// Starts the passes; call once when the worker starts.
pub fn start() {
    schedule(PASSES);
}

fn schedule(left: u32) {
    if left == 0 {
        return;
    }
    let next = Closure::once_into_js(move || {
        pass();
        schedule(left - 1);
    });
    if let Err(e) = super::scope()
        .set_timeout_with_callback_and_timeout_and_arguments_0(next.unchecked_ref(), 0)
    {
        web_sys::console::error_2(&"memsnap worker: no warm-up".into(), &e);
    }
}

/// One parse and index of the example, thrown away.
fn pass() {
    match snapshot::read(EXAMPLE) {
        Ok(snap) => {
            let summary = file_summary(&snap, &mut Analyses::new(), "example.pickle", 0, 0.0);
            std::hint::black_box(summary);
        }
        Err(e) => web_sys::console::error_1(&format!("memsnap worker: warm-up: {e}").into()),
    }
}
