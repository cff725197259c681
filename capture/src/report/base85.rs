//! Bytes as text for an HTML `<script>` element: 4 bytes to 5 characters (1.25×, where base64
//! is 1.33×, the margin that keeps a report within 1.3× of what it carries). The alphabet is
//! printable ASCII without `"`, `&`, `'`, `<`, `>`, `\`, `` ` ``, `|` and `~`, so no `</script` or `<!--` can
//! appear and the text needs no escaping. bootstrap.js decodes it; the test below is the
//! reference.

/// The 85 characters, in digit order (bootstrap.js holds the same string).
pub const ALPHABET: &[u8; 85] =
    b"!#$%()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{}";

/// Big-endian groups of 4 bytes as 5 digits; a last group of k < 4 bytes as its first k + 1
/// digits (the group zero-padded, as Ascii85 does).
pub fn encode(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len().div_ceil(4) * 5);
    for chunk in bytes.chunks(4) {
        let mut group = [0u8; 4];
        group[..chunk.len()].copy_from_slice(chunk);
        let mut v = u32::from_be_bytes(group);
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = ALPHABET[(v % 85) as usize];
            v /= 85;
        }
        out.extend_from_slice(&digits[..chunk.len() + 1]);
    }
    // Every byte pushed is from ALPHABET, which is ASCII.
    String::from_utf8(out).expect("the alphabet is ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &str, len: usize) -> Vec<u8> {
        let digit = |c: u8| ALPHABET.iter().position(|&a| a == c).unwrap() as u64;
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(5) {
            let mut v: u64 = 0;
            for i in 0..5 {
                // A short last group is padded with the highest digit, which rounds its value
                // up to the truncated bytes (Ascii85's rule).
                v = v * 85 + chunk.get(i).map_or(84, |&c| digit(c));
            }
            let group = (v as u32).to_be_bytes();
            out.extend_from_slice(&group[..chunk.len() - 1]);
        }
        out.truncate(len);
        out
    }

    #[test]
    fn alphabet_is_85_distinct_safe_characters() {
        let mut seen = std::collections::BTreeSet::new();
        for &c in ALPHABET {
            assert!(c.is_ascii_graphic(), "{c}");
            assert!(!b"\"&'<>\\".contains(&c), "{}", c as char);
            assert!(seen.insert(c), "{} twice", c as char);
        }
        assert_eq!(seen.len(), 85);
    }

    #[test]
    fn round_trips_every_length_and_extreme_bytes() {
        for len in 0..64 {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 97 + 13) as u8).collect();
            assert_eq!(decode(&encode(&bytes), len), bytes, "length {len}");
            let ones = vec![0xffu8; len];
            assert_eq!(decode(&encode(&ones), len), ones);
            let zeros = vec![0u8; len];
            assert_eq!(decode(&encode(&zeros), len), zeros);
        }
        assert_eq!(encode(&[0xff; 4]).len(), 5);
        assert_eq!(encode(&[1, 2, 3, 4, 5]).len(), 7);
    }
}
