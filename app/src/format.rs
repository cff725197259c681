//! Human-readable numbers for the page (the exact byte counts are shown beside them).

/// Bytes in binary units with three significant digits: "512 B", "1.50 MiB", "23.4 GiB"
/// (core's `analysis::units::bytes`, so the page's sentences and core's read the same).
pub fn bytes(n: u64) -> String {
    memsnap_core::analysis::units::bytes(n)
}

/// An address as PyTorch's viewer prints it: lowercase hex with 0x.
pub fn address(a: u64) -> String {
    format!("{a:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_bytes() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(bytes(20 << 20), "20.0 MiB");
        assert_eq!(bytes(300 << 30), "300 GiB");
        assert_eq!(address(0x7f00_0000_0000), "0x7f0000000000");
    }
}
