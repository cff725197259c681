//! Sizes as PyTorch's `_memory_viz` prints them.

/// `_memory_viz._format_size`: `f"{num:3.1f}{unit}B"` with binary units, e.g. `20.0MiB`.
pub fn size(bytes: u64) -> String {
    let mut num = bytes as f64;
    for unit in ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"] {
        if num.abs() < 1024.0 {
            return format!("{num:.1}{unit}B");
        }
        num /= 1024.0;
    }
    format!("{num:.1}ZiB")
}

/// `20.0MiB (20971520 bytes)`
pub fn size_exact(bytes: u64) -> String {
    format!("{} ({bytes} bytes)", size(bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn like_memory_viz() {
        assert_eq!(super::size(512), "512.0B");
        assert_eq!(super::size(20 << 20), "20.0MiB");
        assert_eq!(super::size(1536), "1.5KiB");
        assert_eq!(super::size_exact(2 << 30), "2.0GiB (2147483648 bytes)");
    }
}
