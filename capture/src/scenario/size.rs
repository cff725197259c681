//! Byte sizes as scenario files write them: `1.5GiB`, `512MB`, `4096` (bytes).
//!
//! Decimal units (KB, MB, GB, TB, PB) are powers of 1000 and binary ones (KiB, MiB, ...) powers
//! of 1024, as in PyTorch's own messages; case does not matter (`1.5gib` is fine).

/// The largest size a step may ask for: 1 PiB. Anything bigger is a typo, not a tensor.
pub const MAX_SIZE: u64 = 1 << 50;

/// Bytes per unit, or `None` for a word that is not a size unit.
pub fn unit_bytes(unit: &str) -> Option<f64> {
    let u = unit.to_ascii_lowercase();
    let v = match u.as_str() {
        "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        "pb" => 1e15,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0f64.powi(4),
        "pib" => 1024.0f64.powi(5),
        _ => return None,
    };
    Some(v)
}

/// Turns an evaluated size into whole bytes: positive, at most [`MAX_SIZE`], fractions of a
/// byte rounded up (a tensor of 1.2 bytes needs 2).
pub fn to_bytes(v: f64) -> Result<u64, String> {
    if !v.is_finite() {
        return Err(format!("size is not a number ({v})"));
    }
    if v < 0.0 {
        return Err(format!("size is negative ({})", fmt_num(v)));
    }
    let bytes = v.ceil();
    if bytes == 0.0 {
        return Err("size is zero".into());
    }
    if bytes > MAX_SIZE as f64 {
        return Err(format!(
            "size {} bytes is more than 1 PiB ({} bytes)",
            fmt_num(v),
            MAX_SIZE
        ));
    }
    Ok(bytes as u64)
}

/// Human form of a byte count for messages and summaries: `1.50 GiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e18 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(unit_bytes("GiB"), Some(1073741824.0));
        assert_eq!(unit_bytes("mb"), Some(1e6));
        assert_eq!(unit_bytes("gigs"), None);
    }

    #[test]
    fn bytes() {
        assert_eq!(to_bytes(1.5 * 1073741824.0), Ok(1610612736));
        assert_eq!(to_bytes(1.2), Ok(2));
        assert!(to_bytes(0.0).unwrap_err().contains("zero"));
        assert!(to_bytes(-3.0).unwrap_err().contains("negative"));
        assert!(to_bytes(2.0 * MAX_SIZE as f64)
            .unwrap_err()
            .contains("1 PiB"));
        assert_eq!(human(1610612736), "1.50 GiB");
        assert_eq!(human(100), "100 B");
    }
}
