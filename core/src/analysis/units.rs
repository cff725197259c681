//! Sizes as people say them, for sentences: "16.0 MiB", "1.50 GiB", "512 B" (binary units,
//! three significant digits). The page shows the exact byte count beside or on hover.

/// Bytes in binary units with three significant digits.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    #[test]
    fn as_people_say_them() {
        assert_eq!(super::bytes(16 << 20), "16.0 MiB");
        assert_eq!(super::bytes(1536 << 20), "1.50 GiB");
        assert_eq!(super::bytes(1023), "1023 B");
    }
}
