//! Any bytes that read as a snapshot -> `analysis::state_at` (the viewer's "state at entry N"
//! slider) at the start, middle and end of each device's trace: must not panic or hang, whatever
//! the trace claims (frees of unknown blocks, overlapping segments, absurd sizes).
#![no_main]

use libfuzzer_sys::fuzz_target;
use memsnap_core::analysis::state_at::state_at;
use memsnap_core::snapshot::read;

fuzz_target!(|data: &[u8]| {
    let Ok(snap) = read(data) else {
        return;
    };
    for device in snap.devices().into_iter().take(2) {
        let len = usize::try_from(device)
            .map(|d| snap.trace(d).len())
            .unwrap_or(0);
        for n in [0, len / 2, len] {
            let _ = state_at(&snap, device, n);
        }
    }
});
