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

/// Sizes as people say them in a sentence: `16.0 MiB`, `512 B`.
pub fn spoken(bytes: u64) -> String {
    let s = size(bytes);
    match s.find(|c: char| c.is_ascii_alphabetic()) {
        Some(_) if bytes < 1024 => format!("{bytes} B"),
        Some(i) => format!("{} {}", &s[..i], &s[i..]),
        None => s,
    }
}

/// A change in bytes: `+16.0 MiB`, `-512 B`, `0 B`.
pub fn change(bytes: i64) -> String {
    match bytes {
        0 => "0 B".into(),
        b if b > 0 => format!("+{}", spoken(b.unsigned_abs())),
        b => format!("-{}", spoken(b.unsigned_abs())),
    }
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

    #[test]
    fn spoken_and_changes() {
        assert_eq!(super::spoken(16 << 20), "16.0 MiB");
        assert_eq!(super::spoken(512), "512 B");
        assert_eq!(super::change(-(3 << 29)), "-1.5 GiB");
        assert_eq!(super::change(1536), "+1.5 KiB");
        assert_eq!(super::change(0), "0 B");
    }
}
