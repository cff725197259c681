//! The largest file the page will open, checked before a byte of it is read.

use crate::format;

/// 1.5 GiB. The worker peaks at about 2–2.5× the file's size (the bytes while they are parsed,
/// the reader's arena, the model, the timeline index: `scripts/bench/bench.sh`'s page step measured
/// 2.4× for a 109 MB snapshot, 2.2× for a 1.07 GB one) and a wasm32 instance has at most 4 GiB,
/// so a larger file would most likely end in the worker running out of memory after a long
/// parse (`worker::out_of_memory` says so) instead of this message at once. The CLI
/// (`memsnap`) has no such limit.
pub const MAX_FILE_BYTES: u64 = 3 << 29;

/// `Err` with a message naming the file, its size and the limit when `size` is over it.
pub fn check(name: &str, size: u64) -> Result<(), String> {
    if size <= MAX_FILE_BYTES {
        return Ok(());
    }
    Err(format!(
        "{name}: {} ({size} bytes) is over the page's limit of {} ({MAX_FILE_BYTES} bytes); \
         the reader needs several times the file's size and a browser's wasm memory stops at 4 GiB. \
         Use the `memsnap` command line for files this large.",
        format::bytes(size),
        format::bytes(MAX_FILE_BYTES),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_limit_opens_one_byte_over_does_not() {
        assert_eq!(check("a.pickle", 0), Ok(()));
        assert_eq!(check("a.pickle", MAX_FILE_BYTES), Ok(()));
        let e = check("big.pickle", MAX_FILE_BYTES + 1).unwrap_err();
        assert!(e.starts_with("big.pickle: "), "{e}");
        assert!(e.contains("1610612737 bytes"), "{e}");
        assert!(e.contains("limit of 1.50 GiB (1610612736 bytes)"), "{e}");
    }
}
