//! Limits as `memsnap check` takes them: sizes (`40GiB`, `512 MB`, `4096`; the units of
//! scenario files) and fractions (`0.3`, `30%`).

use crate::scenario::size::{to_bytes, unit_bytes};

/// `40GiB`, `1.5 TB`, `4096` (bytes).
pub fn size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = (&t[..split], t[split..].trim());
    let v: f64 = num
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{text}` is not a size (e.g. 40GiB, 512MB, 4096)"))?;
    let scale = if unit.is_empty() {
        1.0
    } else {
        unit_bytes(unit).ok_or_else(|| {
            format!(
                "unknown size unit `{unit}` in `{text}` (use B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB or PiB)"
            )
        })?
    };
    // A limit of nothing is a fair limit (no gap at all), though not a tensor size.
    if v == 0.0 {
        return Ok(0);
    }
    to_bytes(v * scale).map_err(|e| format!("`{text}`: {e}"))
}

/// `0.3` or `30%`: a fraction, at least 0.
pub fn fraction(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{text}` is not a fraction (e.g. 0.3 or 30%)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{text}` must be a fraction of 0 or more"));
    }
    Ok(v * scale)
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes() {
        assert_eq!(super::size("40GiB"), Ok(40 << 30));
        assert_eq!(super::size("1.5 gib"), Ok(3 << 29));
        assert_eq!(super::size("512MB"), Ok(512_000_000));
        assert_eq!(super::size("4096"), Ok(4096));
        assert!(super::size("40 gigs")
            .unwrap_err()
            .contains("unknown size unit `gigs`"));
        assert!(super::size("GiB").unwrap_err().contains("not a size"));
        assert_eq!(super::size("0"), Ok(0));
    }

    #[test]
    fn fractions() {
        assert_eq!(super::fraction("0.3"), Ok(0.3));
        assert_eq!(super::fraction("5%"), Ok(0.05));
        assert!(super::fraction("-1").is_err());
        assert!(super::fraction("lots").is_err());
    }
}
