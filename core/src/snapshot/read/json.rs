//! JSON text -> the pickle machine's node arena, so a snapshot written as JSON (the same dict
//! `_snapshot()` returns, `json.dump`ed, which PyTorch's viewer also opens) goes through the
//! same schema code, limits and error messages as a pickle. Python's `json` writes `NaN`,
//! `Infinity` and `-Infinity` for such floats: accepted too. JSON has no sharing, so every
//! frame dict is its own node (the schema still shares equal short strings).

use std::borrow::Cow;

use super::arena::{long_from_le, Arena, Node, NodeId, Span};
use super::error::ReadError;

/// Deepest nesting accepted (a snapshot nests five levels; this bounds the parser's recursion).
const MAX_DEPTH: usize = 256;
/// Bytes between two progress calls.
const PROGRESS_EVERY: usize = 1 << 20;

/// Whether `bytes` look like JSON: the first non-blank byte opens an object or an array (no
/// pickle starts with either: `{` and `[` are not pickle opcodes).
pub(super) fn is_json(bytes: &[u8]) -> bool {
    matches!(
        bytes.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

pub(super) fn parse<'a>(
    data: &'a [u8],
    progress: &mut dyn FnMut(u64),
) -> Result<Arena<'a>, ReadError> {
    let mut p = Parser {
        data,
        pos: 0,
        next_progress: PROGRESS_EVERY,
        progress,
        arena: Arena {
            nodes: Vec::new(),
            at: Vec::new(),
            items: Vec::new(),
            pairs: Vec::new(),
            root: 0,
            skipped_frame_dicts: Vec::new(),
        },
    };
    let root = p.value(0)?;
    p.blank();
    if p.pos < data.len() {
        return Err(p.error("more data after the JSON value"));
    }
    p.arena.root = root;
    Ok(p.arena)
}

struct Parser<'a, 'p> {
    data: &'a [u8],
    pos: usize,
    next_progress: usize,
    progress: &'p mut dyn FnMut(u64),
    arena: Arena<'a>,
}

impl<'a> Parser<'a, '_> {
    fn error(&self, message: impl Into<String>) -> ReadError {
        ReadError::at(self.pos as u64, format!("JSON: {}", message.into()))
    }

    fn blank(&mut self) {
        while self
            .data
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.pos += 1;
        }
    }

    fn push(&mut self, node: Node<'a>, at: usize) -> NodeId {
        self.arena.nodes.push(node);
        self.arena.at.push(at as u32);
        (self.arena.nodes.len() - 1) as NodeId
    }

    fn literal(&mut self, word: &str, node: Node<'a>) -> Result<NodeId, ReadError> {
        let at = self.pos;
        if self.data[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(self.push(node, at))
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<NodeId, ReadError> {
        if depth > MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH} levels")));
        }
        if self.pos >= self.next_progress {
            (self.progress)(self.pos as u64);
            self.next_progress = self.pos + PROGRESS_EVERY;
        }
        self.blank();
        let at = self.pos;
        match self.data.get(self.pos) {
            None => Err(self.error("unexpected end of input")),
            Some(b'{') => {
                self.pos += 1;
                let mut pairs = Vec::new();
                self.blank();
                if self.data.get(self.pos) == Some(&b'}') {
                    self.pos += 1;
                } else {
                    loop {
                        self.blank();
                        if self.data.get(self.pos) != Some(&b'"') {
                            return Err(self.error("expected a string key"));
                        }
                        let k = self.string()?;
                        self.blank();
                        if self.data.get(self.pos) != Some(&b':') {
                            return Err(self.error("expected ':' after a key"));
                        }
                        self.pos += 1;
                        let v = self.value(depth + 1)?;
                        pairs.push((k, v));
                        if self.close(b'}')? {
                            break;
                        }
                    }
                }
                let mut span = Span::default();
                span.extend(&mut self.arena.pairs, &pairs);
                Ok(self.push(Node::Dict(span), at))
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                self.blank();
                if self.data.get(self.pos) == Some(&b']') {
                    self.pos += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.close(b']')? {
                            break;
                        }
                    }
                }
                let mut span = Span::default();
                span.extend(&mut self.arena.items, &items);
                Ok(self.push(Node::List(span), at))
            }
            Some(b'"') => self.string(),
            Some(b't') => self.literal("true", Node::Bool(true)),
            Some(b'f') => self.literal("false", Node::Bool(false)),
            Some(b'n') => self.literal("null", Node::None),
            Some(b'N') => self.literal("NaN", Node::Float(f64::NAN)),
            Some(b'I') => self.literal("Infinity", Node::Float(f64::INFINITY)),
            Some(b'-') if self.data[self.pos..].starts_with(b"-Infinity") => {
                self.literal("-Infinity", Node::Float(f64::NEG_INFINITY))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(&b) => Err(self.error(format!("unexpected byte 0x{b:02x}"))),
        }
    }

    /// After a container item: `,` (more follow) or the closing byte (true).
    fn close(&mut self, end: u8) -> Result<bool, ReadError> {
        self.blank();
        match self.data.get(self.pos) {
            Some(b',') => {
                self.pos += 1;
                Ok(false)
            }
            Some(&b) if b == end => {
                self.pos += 1;
                Ok(true)
            }
            _ => Err(self.error(format!("expected ',' or '{}'", end as char))),
        }
    }

    fn number(&mut self) -> Result<NodeId, ReadError> {
        let at = self.pos;
        let mut end = self.pos;
        let mut float = false;
        while let Some(&b) = self.data.get(end) {
            match b {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => float = true,
                _ => break,
            }
            end += 1;
        }
        let text = std::str::from_utf8(&self.data[at..end]).unwrap_or_default();
        self.pos = end;
        let node = if float {
            Node::Float(
                text.parse()
                    .map_err(|_| self.error(format!("bad number {text:?}")))?,
            )
        } else if let Ok(v) = text.parse::<i64>() {
            Node::Int(v)
        } else if let Ok(v) = text.parse::<u64>() {
            // Above i64 (a 64-bit address with the top bit set): as a pickle LONG1 holds it.
            let mut le = v.to_le_bytes().to_vec();
            le.push(0);
            long_from_le(Cow::Owned(le))
        } else {
            return Err(self.error(format!("integer {text} does not fit 64 bits")));
        };
        Ok(self.push(node, at))
    }

    fn string(&mut self) -> Result<NodeId, ReadError> {
        let at = self.pos;
        self.pos += 1;
        let start = self.pos;
        // Fast path: no escapes, borrowed from the input.
        while let Some(&b) = self.data.get(self.pos) {
            match b {
                b'"' => {
                    let s = std::str::from_utf8(&self.data[start..self.pos])
                        .map_err(|_| self.error("string is not UTF-8"))?;
                    self.pos += 1;
                    return Ok(self.push(Node::Str(Cow::Borrowed(s)), at));
                }
                b'\\' => break,
                _ => self.pos += 1,
            }
        }
        let mut out = String::from_utf8(self.data[start..self.pos].to_vec())
            .map_err(|_| self.error("string is not UTF-8"))?;
        loop {
            let Some(&b) = self.data.get(self.pos) else {
                return Err(self.error("unterminated string"));
            };
            self.pos += 1;
            match b {
                b'"' => return Ok(self.push(Node::Str(Cow::Owned(out)), at)),
                b'\\' => {
                    let e = *self
                        .data
                        .get(self.pos)
                        .ok_or_else(|| self.error("unterminated string"))?;
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi)
                                && self.data[self.pos..].starts_with(b"\\u")
                            {
                                self.pos += 2;
                                let lo = self.hex4()?;
                                char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                            } else {
                                char::from_u32(hi)
                            };
                            // A lone surrogate (Python writes them): the replacement character.
                            out.push(c.unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.error(format!("bad escape \\{}", e as char))),
                    }
                }
                _ => {
                    // Copy the run up to the next quote or backslash as it is.
                    let run_end = self.data[self.pos..]
                        .iter()
                        .position(|&c| c == b'"' || c == b'\\')
                        .map_or(self.data.len(), |n| self.pos + n);
                    let run = std::str::from_utf8(&self.data[self.pos - 1..run_end])
                        .map_err(|_| self.error("string is not UTF-8"))?;
                    out.push_str(run);
                    self.pos = run_end;
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, ReadError> {
        let h = self
            .data
            .get(self.pos..self.pos + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.error("bad \\u escape"))?;
        self.pos += 4;
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::super::read;

    #[test]
    fn reads_a_json_snapshot() {
        let text = r#"{"segments": [{"device": 0, "address": 9223372036854775808,
            "total_size": 2097152, "stream": 0, "segment_type": "small",
            "blocks": [{"address": 9223372036854775808, "size": 512, "requested_size": 8,
                "state": "active_allocated",
                "frames": [{"filename": "a\u00e9.py", "line": 3, "name": "f\"g"}]}]}],
            "device_traces": [[{"action": "alloc", "addr": 1, "size": 8, "stream": 0,
                "time_us": 5, "frames": []}, {"action": "oom", "size": 8, "device_free": 0}]],
            "allocator_settings": {"garbage_collection_threshold": NaN}}"#;
        let s = read(text.as_bytes()).unwrap();
        assert_eq!(s.segments.len(), 1);
        assert_eq!(s.segments[0].address, 1 << 63);
        let f = s.stacks.frames_of(s.segments[0].blocks[0].frames.unwrap());
        let f: Vec<_> = f
            .map(|f| (f.filename.to_string(), f.name.to_string()))
            .collect();
        assert_eq!(f, vec![("aé.py".to_string(), "f\"g".to_string())]);
        assert_eq!(s.trace(0).len(), 2);
        assert_eq!(s.trace(0)[1].device_free(), Some(0));
    }

    #[test]
    fn a_bare_list_of_segments_and_errors_with_offsets() {
        let s = read(b" [] ").unwrap();
        assert!(s.segments.is_empty());
        let e = read(br#"{"segments": [1, }"#).unwrap_err();
        assert_eq!(e.offset, Some(17));
        assert!(e.message.contains("JSON"), "{e}");
        let e = read(br#"{"segments": "x"}"#).unwrap_err();
        assert!(e.message.contains("segments"), "{e}");
        assert!(read(b"{\"a\": 1} x").is_err());
    }
}
