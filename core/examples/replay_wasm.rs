//! The replay bench's generated trace, replayed in wasm: built for wasm32-unknown-unknown (no
//! wasm-bindgen, no imports), loaded and timed by scripts/bench/bench_replay_wasm.mjs under node, to
//! compare with the same code native (examples/replay_rate.rs).

use std::cell::RefCell;

use memsnap_core::analysis::replay::replay;
use memsnap_core::snapshot::Snapshot;

#[path = "../benches/support/generated.rs"]
mod generated;

thread_local! {
    static TRACE: RefCell<Option<Snapshot>> = const { RefCell::new(None) };
}

/// Generates the workload (about `n` trace entries); returns the trace's length.
#[no_mangle]
pub extern "C" fn prepare(n: u32) -> u32 {
    let s = generated::generated(n as usize);
    let len = s.trace(0).len() as u32;
    TRACE.with(|t| *t.borrow_mut() = Some(s));
    len
}

/// Replays the prepared trace once: 1 when every decision matched and the segments agree,
/// 0 when not, 2 when nothing was prepared.
#[no_mangle]
pub extern "C" fn replay_once() -> u32 {
    TRACE.with(|t| match t.borrow().as_ref() {
        None => 2,
        Some(s) => match replay(s, 0) {
            Ok(r) if r.decisions_matched == r.decisions && r.segments_match => 1,
            _ => 0,
        },
    })
}
