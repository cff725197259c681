//! The largest file the page will open, checked before a byte of it is read.

use crate::format;

/// 256 MiB. The reader needs about 6–11× the file's size in memory (the bytes, the decoded
/// values, the model, the analyses' caches) and a wasm32 instance has at most 4 GiB, so a larger
/// file would end in an out-of-memory abort of the worker instead of a message. The CLI
/// (`memsnap`) has no such limit.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

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
        assert!(e.contains("268435457 bytes"), "{e}");
        assert!(e.contains("limit of 256 MiB (268435456 bytes)"), "{e}");
    }
}
