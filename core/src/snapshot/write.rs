//! [`Snapshot`] -> pickle bytes, as CPython's `pickle.dump` would write the same objects.
//!
//! Protocol 4 with FRAME opcodes: PyTorch's MemoryViz.js reads protocols 2–4 and FRAME, and
//! shows nothing for protocol 5. Written by hand rather than with serde-pickle because its
//! writer cannot express memo sharing of shared sub-objects: every interned frame dict and
//! frame list is written once (MEMOIZE) and referenced after (BINGET/LONG_BINGET), as are
//! repeated strings and `Value`s shared by `Arc`, so a large trace stays the size PyTorch's own
//! file would be instead of ballooning to one copy of each stack per entry.
//!
//! Integers use the opcode CPython picks (BININT1/BININT2/BININT, else LONG1 with the minimal
//! two's-complement bytes). Keys come in PyTorch's order, then the `extra` keys in file order.

use std::collections::HashMap;
use std::sync::Arc;

use super::model::{
    Block, Form, Frame, FrameId, History, HistoryEntry, Segment, Snapshot, StackId, TraceEntry,
};
use super::opcodes as op;
use super::value::Value;

/// CPython's `_FRAME_SIZE_TARGET`: a frame is closed at the first object boundary past this.
const FRAME_TARGET: usize = 64 * 1024;
/// CPython's list/dict/set batch size for APPENDS/SETITEMS/ADDITEMS.
const BATCH: usize = 1000;
const UNSET: u32 = u32::MAX;

/// Pickles a snapshot (protocol 4, framed, memo-shared).
pub fn write(s: &Snapshot) -> Vec<u8> {
    let mut p = Pickler {
        out: Vec::with_capacity(1 << 16),
        frame_start: 0,
        memo_len: 0,
        strings: HashMap::new(),
        frames: vec![UNSET; s.stacks.frame_count()],
        stacks: vec![UNSET; s.stacks.stack_count()],
        shared: HashMap::new(),
        snapshot: s,
    };
    p.out.extend_from_slice(&[op::PROTO, 4]);
    p.open_frame();
    p.snapshot();
    p.out.push(op::STOP);
    p.close_frame();
    p.out
}

struct Pickler<'s> {
    out: Vec<u8>,
    /// Index of the current frame's FRAME opcode.
    frame_start: usize,
    memo_len: u32,
    strings: HashMap<&'s str, u32>,
    /// FrameId / StackId -> memo index once written.
    frames: Vec<u32>,
    stacks: Vec<u32>,
    /// `Value` containers by `Arc` address -> memo index.
    shared: HashMap<*const (), u32>,
    snapshot: &'s Snapshot,
}

impl<'s> Pickler<'s> {
    fn open_frame(&mut self) {
        self.frame_start = self.out.len();
        self.out.push(op::FRAME);
        self.out.extend_from_slice(&[0; 8]);
    }

    fn close_frame(&mut self) {
        let len = (self.out.len() - self.frame_start - 9) as u64;
        self.out[self.frame_start + 1..self.frame_start + 9].copy_from_slice(&len.to_le_bytes());
    }

    /// At an object boundary: closes the frame once it is big enough and opens the next.
    fn commit(&mut self) {
        if self.out.len() - self.frame_start - 9 >= FRAME_TARGET {
            self.close_frame();
            self.open_frame();
        }
    }

    fn memoize(&mut self) -> u32 {
        self.out.push(op::MEMOIZE);
        self.memo_len += 1;
        self.memo_len - 1
    }

    fn get(&mut self, index: u32) {
        if index < 256 {
            self.out.extend_from_slice(&[op::BINGET, index as u8]);
        } else {
            self.out.push(op::LONG_BINGET);
            self.out.extend_from_slice(&index.to_le_bytes());
        }
    }

    fn str(&mut self, s: &'s str) {
        if let Some(&i) = self.strings.get(s) {
            return self.get(i);
        }
        let n = s.len();
        if n < 256 {
            self.out.extend_from_slice(&[op::SHORT_BINUNICODE, n as u8]);
        } else if let Ok(n32) = u32::try_from(n) {
            self.out.push(op::BINUNICODE);
            self.out.extend_from_slice(&n32.to_le_bytes());
        } else {
            self.out.push(op::BINUNICODE8);
            self.out.extend_from_slice(&(n as u64).to_le_bytes());
        }
        self.out.extend_from_slice(s.as_bytes());
        let i = self.memoize();
        self.strings.insert(s, i);
    }

    fn int(&mut self, v: i128) {
        if (0..=0xff).contains(&v) {
            self.out.extend_from_slice(&[op::BININT1, v as u8]);
        } else if (0..=0xffff).contains(&v) {
            self.out.push(op::BININT2);
            self.out.extend_from_slice(&(v as u16).to_le_bytes());
        } else if (-0x8000_0000..=0x7fff_ffff).contains(&v) {
            self.out.push(op::BININT);
            self.out.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            // pickle.encode_long: (bit_length >> 3) + 1 bytes, one fewer for negative numbers
            // whose top byte would be a redundant 0xff.
            let bits = 128 - v.unsigned_abs().leading_zeros() as usize;
            let mut n = (bits >> 3) + 1;
            let bytes = v.to_le_bytes();
            if v < 0 && n > 1 && bytes[n - 1] == 0xff && bytes[n - 2] & 0x80 != 0 {
                n -= 1;
            }
            self.long(&bytes[..n]);
        }
    }

    fn long(&mut self, bytes: &[u8]) {
        if bytes.len() < 256 {
            self.out.extend_from_slice(&[op::LONG1, bytes.len() as u8]);
        } else {
            self.out.push(op::LONG4);
            self.out
                .extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        }
        self.out.extend_from_slice(bytes);
    }

    fn bool(&mut self, b: bool) {
        self.out.push(if b { op::NEWTRUE } else { op::NEWFALSE });
    }

    /// Writes `n` items with `item(i)`, batched as CPython batches list appends.
    fn appends(&mut self, n: usize, mut item: impl FnMut(&mut Self, usize)) {
        let mut i = 0;
        while i < n {
            let end = (i + BATCH).min(n);
            if end - i == 1 {
                item(self, i);
                self.out.push(op::APPEND);
            } else {
                self.out.push(op::MARK);
                for j in i..end {
                    item(self, j);
                    self.commit();
                }
                self.out.push(op::APPENDS);
            }
            i = end;
        }
    }

    // ---- generic values ----

    fn shared_get(&mut self, ptr: *const ()) -> bool {
        match self.shared.get(&ptr) {
            Some(&i) => {
                self.get(i);
                true
            }
            None => false,
        }
    }

    fn shared_put(&mut self, ptr: *const ()) {
        let i = self.memoize();
        self.shared.insert(ptr, i);
    }

    fn value(&mut self, v: &'s Value) {
        match v {
            Value::None => self.out.push(op::NONE),
            Value::Bool(b) => self.bool(*b),
            Value::Int(i) => self.int(i128::from(*i)),
            Value::BigInt(b) => self.long(b),
            Value::Float(f) => {
                self.out.push(op::BINFLOAT);
                self.out.extend_from_slice(&f.to_be_bytes());
            }
            Value::Str(s) => self.str(s),
            Value::Bytes(b) => {
                let ptr = Arc::as_ptr(b) as *const ();
                if self.shared_get(ptr) {
                    return;
                }
                let n = b.len();
                if n < 256 {
                    self.out.extend_from_slice(&[op::SHORT_BINBYTES, n as u8]);
                } else if let Ok(n32) = u32::try_from(n) {
                    self.out.push(op::BINBYTES);
                    self.out.extend_from_slice(&n32.to_le_bytes());
                } else {
                    self.out.push(op::BINBYTES8);
                    self.out.extend_from_slice(&(n as u64).to_le_bytes());
                }
                self.out.extend_from_slice(b);
                self.shared_put(ptr);
            }
            Value::List(items) => {
                let ptr = Arc::as_ptr(items) as *const ();
                if self.shared_get(ptr) {
                    return;
                }
                self.out.push(op::EMPTY_LIST);
                self.shared_put(ptr);
                self.appends(items.len(), |p, i| p.value(&items[i]));
            }
            Value::Tuple(items) => {
                if items.is_empty() {
                    return self.out.push(op::EMPTY_TUPLE);
                }
                let ptr = Arc::as_ptr(items) as *const ();
                if self.shared_get(ptr) {
                    return;
                }
                if items.len() <= 3 {
                    for item in items.iter() {
                        self.value(item);
                    }
                    self.out.push(op::TUPLE1 + items.len() as u8 - 1);
                } else {
                    self.out.push(op::MARK);
                    for item in items.iter() {
                        self.value(item);
                    }
                    self.out.push(op::TUPLE);
                }
                self.shared_put(ptr);
            }
            Value::Dict(pairs) => {
                let ptr = Arc::as_ptr(pairs) as *const ();
                if self.shared_get(ptr) {
                    return;
                }
                self.out.push(op::EMPTY_DICT);
                self.shared_put(ptr);
                for chunk in pairs.chunks(BATCH) {
                    if chunk.len() > 1 {
                        self.out.push(op::MARK);
                    }
                    for (k, v) in chunk {
                        self.value(k);
                        self.value(v);
                        self.commit();
                    }
                    self.out.push(if chunk.len() > 1 {
                        op::SETITEMS
                    } else {
                        op::SETITEM
                    });
                }
            }
            Value::Set(items) => {
                let ptr = Arc::as_ptr(items) as *const ();
                if self.shared_get(ptr) {
                    return;
                }
                self.out.push(op::EMPTY_SET);
                self.shared_put(ptr);
                for chunk in items.chunks(BATCH) {
                    self.out.push(op::MARK);
                    for item in chunk {
                        self.value(item);
                    }
                    self.out.push(op::ADDITEMS);
                }
            }
            Value::FrozenSet(items) => {
                let ptr = Arc::as_ptr(items) as *const ();
                if self.shared_get(ptr) {
                    return;
                }
                self.out.push(op::MARK);
                for item in items.iter() {
                    self.value(item);
                }
                self.out.push(op::FROZENSET);
                self.shared_put(ptr);
            }
        }
    }

    // ---- the typed model ----

    /// A dict written as EMPTY_DICT MARK key value ... SETITEMS; `body` writes the pairs and
    /// returns how many it wrote.
    fn dict(&mut self, body: impl FnOnce(&mut Self) -> usize) {
        self.out.push(op::EMPTY_DICT);
        self.out.push(op::MARK);
        let mark_at = self.out.len() - 1;
        let n = body(self);
        match n {
            // An empty MARK ... SETITEMS is valid, but CPython writes nothing; neither do we.
            0 => {
                self.out.remove(mark_at);
            }
            _ => self.out.push(op::SETITEMS),
        }
    }

    fn key(&mut self, k: &'static str, n: &mut usize) {
        self.str(k);
        *n += 1;
    }

    fn opt_uint(&mut self, k: &'static str, v: Option<u64>, n: &mut usize) {
        if let Some(v) = v {
            self.key(k, n);
            self.int(i128::from(v));
        }
    }

    fn opt_int(&mut self, k: &'static str, v: Option<i64>, n: &mut usize) {
        if let Some(v) = v {
            self.key(k, n);
            self.int(i128::from(v));
        }
    }

    fn extra(&mut self, extra: &'s [(Arc<str>, Value)], n: &mut usize) {
        for (k, v) in extra {
            self.str(k);
            self.value(v);
            *n += 1;
        }
    }

    fn snapshot(&mut self) {
        let s = self.snapshot;
        if s.form == Form::SegmentList {
            return self.segments(&s.segments);
        }
        self.dict(|p| {
            let mut n = 0;
            p.key("segments", &mut n);
            p.segments(&s.segments);
            if let Some(traces) = &s.device_traces {
                p.key("device_traces", &mut n);
                p.out.push(op::EMPTY_LIST);
                p.appends(traces.len(), |p, d| {
                    let entries = &traces[d];
                    p.out.push(op::EMPTY_LIST);
                    p.appends(entries.len(), |p, i| p.entry(&entries[i]));
                });
            }
            if let Some(settings) = &s.allocator_settings {
                p.key("allocator_settings", &mut n);
                p.dict(|p| {
                    let mut m = 0;
                    p.extra(&settings.entries, &mut m);
                    m
                });
            }
            if let Some(a) = &s.external_annotations {
                p.key("external_annotations", &mut n);
                p.value(a);
            }
            if let Some(segments) = &s.host_segments {
                p.key("host_segments", &mut n);
                p.segments(segments);
            }
            if let Some(entries) = &s.host_traces {
                p.key("host_traces", &mut n);
                p.out.push(op::EMPTY_LIST);
                p.appends(entries.len(), |p, i| p.entry(&entries[i]));
            }
            p.extra(&s.extra, &mut n);
            n
        });
    }

    fn segments(&mut self, segments: &'s [Segment]) {
        self.out.push(op::EMPTY_LIST);
        self.appends(segments.len(), |p, i| p.segment(&segments[i]));
    }

    fn segment(&mut self, s: &'s Segment) {
        self.dict(|p| {
            let mut n = 0;
            p.opt_int("device", s.device, &mut n);
            p.opt_uint("address", Some(s.address), &mut n);
            p.opt_uint("total_size", Some(s.total_size), &mut n);
            p.opt_uint("allocated_size", s.allocated_size, &mut n);
            p.opt_uint("active_size", s.active_size, &mut n);
            p.opt_uint("requested_size", s.requested_size, &mut n);
            p.opt_int("stream", s.stream, &mut n);
            if let Some(t) = s.segment_type {
                p.key("segment_type", &mut n);
                p.str(t.as_str());
            }
            if let Some((a, b)) = s.segment_pool_id {
                p.key("segment_pool_id", &mut n);
                p.int(i128::from(a));
                p.int(i128::from(b));
                p.out.push(op::TUPLE2);
                p.memoize();
            }
            if let Some(e) = s.is_expandable {
                p.key("is_expandable", &mut n);
                p.bool(e);
            }
            if let Some(f) = s.frames {
                p.key("frames", &mut n);
                p.stack(f);
            }
            p.key("blocks", &mut n);
            p.out.push(op::EMPTY_LIST);
            p.appends(s.blocks.len(), |p, i| p.block(&s.blocks[i]));
            p.extra(&s.extra, &mut n);
            n
        });
    }

    fn block(&mut self, b: &'s Block) {
        self.dict(|p| {
            let mut n = 0;
            p.opt_uint("address", b.address, &mut n);
            p.opt_uint("size", Some(b.size), &mut n);
            p.opt_uint("requested_size", b.requested_size, &mut n);
            p.key("state", &mut n);
            p.str(b.state.as_str());
            // A legacy block's frames were read from its history (see the reader's schema):
            // written back only if the file had them as a key of their own.
            let from_history = b.frames.is_some()
                && b.history_entries()
                    .last()
                    .is_some_and(|e| e.frames == b.frames);
            if let Some(f) = b.frames.filter(|_| !from_history) {
                p.key("frames", &mut n);
                p.stack(f);
            }
            match &b.history {
                Some(History::Entries(h)) => {
                    p.key("history", &mut n);
                    p.out.push(op::EMPTY_LIST);
                    p.appends(h.len(), |p, i| p.history_entry(&h[i]));
                }
                Some(History::Other(v)) => {
                    p.key("history", &mut n);
                    p.value(v);
                }
                None => {}
            }
            p.extra(&b.extra, &mut n);
            n
        });
    }

    fn entry(&mut self, e: &'s TraceEntry) {
        self.dict(|p| {
            let mut n = 0;
            p.key("action", &mut n);
            p.str(e.action_name());
            p.opt_uint("addr", e.addr(), &mut n);
            p.opt_uint("device_free", e.device_free(), &mut n);
            p.opt_uint("size", e.size(), &mut n);
            p.opt_int("stream", e.stream(), &mut n);
            p.opt_int("time_us", e.time_us(), &mut n);
            if let Some(c) = e.compile_context() {
                p.key("compile_context", &mut n);
                p.str(c);
            }
            if let Some(m) = e.user_metadata() {
                p.key("user_metadata", &mut n);
                p.value(m);
            }
            if let Some(f) = e.frames() {
                p.key("frames", &mut n);
                p.stack(f);
            }
            p.extra(e.extra(), &mut n);
            n
        });
    }

    fn history_entry(&mut self, e: &'s HistoryEntry) {
        self.dict(|p| {
            let mut n = 0;
            p.opt_uint("addr", e.addr, &mut n);
            p.opt_uint("real_size", e.real_size, &mut n);
            if let Some(f) = e.frames {
                p.key("frames", &mut n);
                p.stack(f);
            }
            p.extra(&e.extra, &mut n);
            n
        });
    }

    fn stack(&mut self, id: StackId) {
        let memo = self.stacks[id.0 as usize];
        if memo != UNSET {
            return self.get(memo);
        }
        self.out.push(op::EMPTY_LIST);
        let i = self.memoize();
        self.stacks[id.0 as usize] = i;
        let frames = self.snapshot.stacks.stack(id);
        self.appends(frames.len(), |p, j| p.frame(frames[j]));
    }

    fn frame(&mut self, id: FrameId) {
        let memo = self.frames[id.0 as usize];
        if memo != UNSET {
            return self.get(memo);
        }
        self.out.push(op::EMPTY_DICT);
        let i = self.memoize();
        self.frames[id.0 as usize] = i;
        let f: &'s Frame = self.snapshot.stacks.frame(id);
        self.out.push(op::MARK);
        self.str("name");
        self.str(&f.name);
        self.str("filename");
        self.str(&f.filename);
        self.str("line");
        self.int(i128::from(f.line));
        let mut n = 3;
        self.extra(&f.extra, &mut n);
        self.out.push(op::SETITEMS);
    }
}
