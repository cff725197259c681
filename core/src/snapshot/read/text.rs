//! Arguments of the text opcodes of protocols 0 and 1 (INT, LONG, FLOAT, STRING, UNICODE,
//! PUT, GET), decoded as CPython's unpickler decodes them.

use std::borrow::Cow;

use super::arena::{long_from_le, Node};

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// A decimal integer (`int(text)`), any size.
pub(super) fn decimal(text: &[u8]) -> Result<Node<'static>, String> {
    let t = trim(text);
    let (negative, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.iter().all(|b| b.is_ascii_digit() || *b == b'_') {
        return Err(format!(
            "{:?} is not a decimal integer",
            String::from_utf8_lossy(text)
        ));
    }
    // Magnitude in base 2^32, little-endian limbs.
    let mut limbs: Vec<u32> = vec![0];
    for &d in digits.iter().filter(|b| **b != b'_') {
        let mut carry = u64::from(d - b'0');
        for limb in limbs.iter_mut() {
            let v = u64::from(*limb) * 10 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    let mut bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
    bytes.push(0); // room for the sign bit
    if negative {
        // Two's complement: invert and add one.
        let mut carry = true;
        for b in bytes.iter_mut() {
            let (v, c) = (!*b).overflowing_add(carry as u8);
            *b = v;
            carry = c;
        }
    }
    Ok(long_from_le(Cow::Owned(bytes)))
}

/// A float as `float(text)` reads it (`inf`, `nan` included).
pub(super) fn float(text: &[u8]) -> Result<f64, String> {
    let t = std::str::from_utf8(trim(text)).map_err(|_| "float text is not ASCII".to_string())?;
    t.parse::<f64>()
        .map_err(|_| format!("{t:?} is not a float"))
}

/// The argument of STRING: a quoted Python 2 string literal, unescaped (`codecs.escape_decode`).
pub(super) fn quoted_string(text: &[u8]) -> Result<Vec<u8>, String> {
    let t = text.strip_suffix(b"\r").unwrap_or(text);
    let quoted = t.len() >= 2 && (t[0] == b'\'' || t[0] == b'"') && t[t.len() - 1] == t[0];
    if !quoted {
        return Err("the STRING opcode argument must be quoted".into());
    }
    let s = &t[1..t.len() - 1];
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c != b'\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = s.get(i) else {
            return Err("STRING ends with a lone backslash".into());
        };
        i += 1;
        match e {
            b'\n' => {}
            b'\\' | b'\'' | b'"' => out.push(e),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match s.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            b'x' => {
                let hex = s.get(i..i + 2).and_then(|h| std::str::from_utf8(h).ok());
                let v = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
                let Some(v) = v else {
                    return Err("invalid \\x escape in STRING".into());
                };
                out.push(v);
                i += 2;
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    Ok(out)
}

/// Bytes of a protocol 0/1 string (STRING, BINSTRING, SHORT_BINSTRING) decoded as
/// `pickle.load`'s default `encoding="ASCII"` does.
pub(super) fn ascii(bytes: &[u8]) -> Result<&str, String> {
    if let Some(p) = bytes.iter().position(|b| !b.is_ascii()) {
        return Err(format!(
            "byte 0x{:02x} in a protocol 0/1 string is not ASCII (pickle.load's default encoding)",
            bytes[p]
        ));
    }
    std::str::from_utf8(bytes).map_err(|e| e.to_string())
}

/// The argument of UNICODE: `raw-unicode-escape` (Latin-1, plus `\uXXXX` and `\UXXXXXXXX`).
pub(super) fn raw_unicode_escape(text: &[u8]) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c != b'\\' {
            out.push(char::from(c));
            i += 1;
            continue;
        }
        // A run of backslashes: only an odd-length run escapes what follows.
        let run = text[i..].iter().take_while(|&&b| b == b'\\').count();
        for _ in 0..run - 1 {
            out.push('\\');
        }
        i += run;
        let digits = match text.get(i) {
            Some(b'u') if run % 2 == 1 => 4,
            Some(b'U') if run % 2 == 1 => 8,
            _ => {
                out.push('\\');
                continue;
            }
        };
        let hex = text
            .get(i + 1..i + 1 + digits)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        let ch = hex.and_then(char::from_u32).ok_or_else(|| {
            "invalid \\u or \\U escape in UNICODE (truncated, or a surrogate)".to_string()
        })?;
        out.push(ch);
        i += 1 + digits;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int_of(n: Node) -> Option<i64> {
        match n {
            Node::Int(i) => Some(i),
            _ => None,
        }
    }

    #[test]
    fn decimals_of_every_size() {
        assert_eq!(int_of(decimal(b"42").unwrap()), Some(42));
        assert_eq!(int_of(decimal(b"-7 ").unwrap()), Some(-7));
        assert_eq!(
            int_of(decimal(b"-9223372036854775808").unwrap()),
            Some(i64::MIN)
        );
        match decimal(b"18446744073709551615").unwrap() {
            Node::BigInt(b) => assert_eq!(
                &b[..],
                &[0xff; 8].iter().copied().chain([0]).collect::<Vec<_>>()[..]
            ),
            other => panic!("{other:?}"),
        }
        match decimal(b"-18446744073709551616").unwrap() {
            Node::BigInt(b) => assert_eq!(&b[..], &[0, 0, 0, 0, 0, 0, 0, 0, 0xff]),
            other => panic!("{other:?}"),
        }
        assert!(decimal(b"12a").is_err());
        assert!(decimal(b"").is_err());
    }

    #[test]
    fn string_escapes() {
        assert_eq!(quoted_string(b"'a\\nb\\x41\\101\\''").unwrap(), b"a\nbAA'");
        assert!(quoted_string(b"abc").is_err());
        assert_eq!(
            raw_unicode_escape(b"caf\xe9 \\u20ac \\\\u").unwrap(),
            "caf\u{e9} \u{20ac} \\\\u"
        );
        assert!(raw_unicode_escape(b"\\ud800").is_err());
        assert!(ascii(b"\xff").is_err());
        assert_eq!(float(b"1.5\n").unwrap(), 1.5);
        assert!(float(b"x").is_err());
    }
}
