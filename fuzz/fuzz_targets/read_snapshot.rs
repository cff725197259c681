//! Any bytes -> `snapshot::read` must return Ok or Err, never panic, hang or blow up memory.
//! When it reads, `write` then `read` again must give the same file back (a stable round trip),
//! and `validate` must run on it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memsnap_core::snapshot::{read, validate, write};

fuzz_target!(|data: &[u8]| {
    let Ok(snap) = read(data) else { return };
    let _ = validate(&snap);
    let once = write(&snap);
    let again = match read(&once) {
        Ok(s) => s,
        Err(e) => panic!("the writer's output does not read back: {e}"),
    };
    let twice = write(&again);
    assert!(
        once == twice,
        "write(read(write(read(x)))) differs from write(read(x))"
    );
});
