//! Unit tests of the pickle machine and the schema pass on hand-made pickles.

use std::sync::Arc;

use super::super::model::{Action, BlockState, Form, History, HistoryEntry, Snapshot};
use super::super::opcodes as op;
use super::super::value::Value;
use super::super::write::write;
use super::{read_with, read_with_progress, Frames, ReadError, Streaming};

/// `super::read`, checked against the same input read as it streams in ([`Streaming`], one
/// byte at a time for small inputs): every test here also tests that the streamed read gives
/// the same snapshot, or the same error, as the whole one.
fn read(bytes: &[u8]) -> Result<Snapshot, ReadError> {
    let whole = super::read(bytes);
    if Streaming::suits(bytes) {
        let step = if bytes.len() <= 1 << 16 { 1 } else { 997 };
        match (&whole, streamed(bytes, step)) {
            (Ok(a), Ok(b)) => assert!(write(a) == write(&b), "streamed read differs"),
            (Err(a), Err(b)) => assert_eq!(a, &b, "streamed read fails otherwise"),
            (a, b) => panic!("whole read {a:?}, streamed read {b:?}"),
        }
    }
    whole
}

/// Reads `bytes` through [`Streaming`], `step` bytes more each time.
fn streamed(bytes: &[u8], step: usize) -> Result<Snapshot, ReadError> {
    let mut s = Streaming::new(bytes.len())?;
    let mut end = 0;
    loop {
        end = (end + step).min(bytes.len());
        if let Some(snapshot) = s.advance(&bytes[..end], &mut |_| {})? {
            assert_eq!(end, bytes.len(), "a snapshot before the input's end");
            return Ok(snapshot);
        }
        assert!(end < bytes.len(), "no snapshot at the input's end");
    }
}

/// Builds pickles opcode by opcode.
#[derive(Default)]
struct P(Vec<u8>);

impl P {
    fn proto(v: u8) -> P {
        P(vec![op::PROTO, v])
    }
    fn op(mut self, o: u8) -> P {
        self.0.push(o);
        self
    }
    fn raw(mut self, b: &[u8]) -> P {
        self.0.extend_from_slice(b);
        self
    }
    fn s(self, s: &str) -> P {
        let n = s.len() as u8;
        self.op(op::SHORT_BINUNICODE).raw(&[n]).raw(s.as_bytes())
    }
    fn k(self, v: u8) -> P {
        self.op(op::BININT1).raw(&[v])
    }
    fn stop(self) -> Vec<u8> {
        self.op(op::STOP).0
    }
    /// `{"segments": [], <key>: ` ... then the caller's value, then `}` and STOP.
    fn with_extra(key: &str) -> P {
        P::proto(4)
            .op(op::EMPTY_DICT)
            .s("segments")
            .op(op::EMPTY_LIST)
            .op(op::SETITEM)
            .s(key)
    }
    fn end_extra(self) -> Vec<u8> {
        self.op(op::SETITEM).stop()
    }
}

fn extra_value(bytes: &[u8]) -> Value {
    let s = read(bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.extra.len(), 1);
    s.extra[0].1.clone()
}

fn err(bytes: &[u8]) -> ReadError {
    match read(bytes) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

fn list(items: Vec<Value>) -> Value {
    Value::List(Arc::new(items))
}

#[test]
fn integers_of_every_width() {
    let cases: Vec<(Vec<u8>, Value)> = vec![
        (vec![op::BININT1, 255], Value::Int(255)),
        (vec![op::BININT2, 0x34, 0x12], Value::Int(0x1234)),
        (vec![op::BININT, 0xff, 0xff, 0xff, 0xff], Value::Int(-1)),
        (vec![op::LONG1, 0], Value::Int(0)),
        (vec![op::LONG1, 1, 0x80], Value::Int(-128)),
        (
            vec![op::LONG1, 6, 0, 0, 0, 0, 0x7f, 0],
            Value::Int(0x7f_0000_0000),
        ),
        (
            vec![op::LONG1, 9, 0, 0, 0, 0, 0, 0, 0, 0x80, 0],
            Value::BigInt(Arc::from(&[0u8, 0, 0, 0, 0, 0, 0, 0x80, 0][..])),
        ),
        (
            // 9 bytes that still fit i64 (redundant sign byte).
            vec![
                op::LONG1,
                9,
                0xfe,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
            ],
            Value::Int(-2),
        ),
        (vec![op::LONG4, 2, 0, 0, 0, 0x00, 0x01], Value::Int(256)),
        (
            // 2^64 with redundant zero bytes: kept in minimal form, equal to the 9-byte one.
            vec![op::LONG1, 12, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0],
            Value::BigInt(Arc::from(&[0u8, 0, 0, 0, 0, 0, 0, 0, 1][..])),
        ),
        (b"I42\n".to_vec(), Value::Int(42)),
        (b"I01\n".to_vec(), Value::Bool(true)),
        (b"L-5L\n".to_vec(), Value::Int(-5)),
        (vec![op::NEWTRUE], Value::Bool(true)),
        (vec![op::NEWFALSE], Value::Bool(false)),
        (vec![op::NONE], Value::None),
    ];
    for (ops, want) in cases {
        let v = extra_value(&P::with_extra("x").raw(&ops).end_extra());
        assert_eq!(v, want, "{ops:?}");
        assert_eq!(v.type_name(), want.type_name(), "{ops:?}");
    }
}

#[test]
fn strings_bytes_and_floats() {
    let mut unicode8 = vec![op::BINUNICODE8];
    unicode8.extend_from_slice(&3u64.to_le_bytes());
    unicode8.extend_from_slice(b"abc");
    let mut bytes8 = vec![op::BINBYTES8];
    bytes8.extend_from_slice(&2u64.to_le_bytes());
    bytes8.extend_from_slice(b"\x00\x01");
    let str_of = |s: &str| Value::Str(Arc::from(s));
    let cases: Vec<(Vec<u8>, Value)> = vec![
        (b"X\x02\x00\x00\x00\xc3\xa9".to_vec(), str_of("é")),
        (unicode8, str_of("abc")),
        (b"U\x02hi".to_vec(), str_of("hi")),
        (b"T\x02\x00\x00\x00hi".to_vec(), str_of("hi")),
        (b"S'a\\nb'\n".to_vec(), str_of("a\nb")),
        (b"Vcaf\xe9\\u20ac\n".to_vec(), str_of("café€")),
        (b"C\x02ab".to_vec(), Value::Bytes(Arc::from(&b"ab"[..]))),
        (
            b"B\x01\x00\x00\x00z".to_vec(),
            Value::Bytes(Arc::from(&b"z"[..])),
        ),
        (bytes8, Value::Bytes(Arc::from(&b"\x00\x01"[..]))),
        (
            [&[op::BINFLOAT][..], &1.5f64.to_be_bytes()].concat(),
            Value::Float(1.5),
        ),
        (b"F-0.25\n".to_vec(), Value::Float(-0.25)),
    ];
    for (ops, want) in cases {
        let v = extra_value(&P::with_extra("x").raw(&ops).end_extra());
        assert_eq!(v, want, "{ops:?}");
        assert_eq!(v.type_name(), want.type_name(), "{ops:?}");
    }
}

#[test]
fn containers_and_stack_opcodes() {
    let i = Value::Int;
    // [(1,), (1, 2), (1, 2, 3), (1, 2, 3, 4), {1: 2, 3: 4}, {5}, frozenset({6}), [7, 8]]
    let bytes = P::with_extra("x")
        .op(op::EMPTY_LIST)
        .op(op::MARK)
        .k(1)
        .op(op::TUPLE1)
        .k(1)
        .k(2)
        .op(op::TUPLE2)
        .k(1)
        .k(2)
        .k(3)
        .op(op::TUPLE3)
        .op(op::MARK)
        .k(1)
        .k(2)
        .k(3)
        .k(4)
        .op(op::TUPLE)
        .op(op::MARK)
        .k(1)
        .k(2)
        .k(3)
        .k(4)
        .op(op::DICT)
        .op(op::EMPTY_SET)
        .op(op::MARK)
        .k(5)
        .k(5)
        .op(op::ADDITEMS)
        .op(op::MARK)
        .k(6)
        .op(op::FROZENSET)
        .op(op::MARK)
        .k(7)
        .k(8)
        .op(op::LIST)
        .op(op::APPENDS)
        // DUP then POP leaves the list; MARK junk POP_MARK leaves nothing behind.
        .op(op::DUP)
        .op(op::POP)
        .op(op::MARK)
        .k(9)
        .k(9)
        .op(op::POP_MARK)
        .end_extra();
    let tuple = |v: Vec<Value>| Value::Tuple(Arc::new(v));
    let want = list(vec![
        tuple(vec![i(1)]),
        tuple(vec![i(1), i(2)]),
        tuple(vec![i(1), i(2), i(3)]),
        tuple(vec![i(1), i(2), i(3), i(4)]),
        Value::Dict(Arc::new(vec![(i(1), i(2)), (i(3), i(4))])),
        Value::Set(Arc::new(vec![i(5)])),
        Value::FrozenSet(Arc::new(vec![i(6)])),
        list(vec![i(7), i(8)]),
    ]);
    assert_eq!(extra_value(&bytes), want);
}

#[test]
fn protocol_0_text_opcodes() {
    // pickle.dumps({'segments': [], 'x': [1, 'a', 1.5, None]}, protocol=0), by hand.
    let bytes = b"(dp0\nVsegments\np1\n(lp2\nsVx\np3\n(lp4\nI1\naVa\np5\naF1.5\naNas.";
    let v = extra_value(bytes);
    assert_eq!(
        v,
        list(vec![
            Value::Int(1),
            Value::from("a"),
            Value::Float(1.5),
            Value::None
        ])
    );
    // GET of a PUT key: the same key string object twice.
    let bytes = b"(dp0\nVsegments\np1\n(lp2\nsVx\np3\ng3\ns.";
    assert_eq!(extra_value(bytes), Value::from("x"));
}

#[test]
fn memo_gets_share_instead_of_copying() {
    // x = [l, l, l] where l = [1, 2] is stored once: one Arc, three references.
    let bytes = P::with_extra("x")
        .op(op::EMPTY_LIST)
        .op(op::MARK)
        .op(op::EMPTY_LIST)
        .op(op::BINPUT)
        .raw(&[7])
        .op(op::MARK)
        .k(1)
        .k(2)
        .op(op::APPENDS)
        .op(op::BINGET)
        .raw(&[7])
        .op(op::LONG_BINPUT)
        .raw(&[0, 1, 0, 0])
        .op(op::LONG_BINGET)
        .raw(&[0, 1, 0, 0])
        .op(op::APPENDS)
        .end_extra();
    let v = extra_value(&bytes);
    let items = v.as_seq().expect("list");
    assert_eq!(items.len(), 3);
    match (&items[0], &items[1], &items[2]) {
        (Value::List(a), Value::List(b), Value::List(c)) => {
            assert!(Arc::ptr_eq(a, b) && Arc::ptr_eq(b, c));
        }
        other => panic!("{other:?}"),
    }
}

/// A snapshot whose two blocks and trace entry share one frame list, and whose second list
/// shares a frame dict with the first: PyTorch's memo pattern.
fn shared_frames_pickle() -> Vec<u8> {
    let frame = |p: P, name: &str| {
        p.op(op::EMPTY_DICT)
            .op(op::MEMOIZE)
            .op(op::MARK)
            .s("filename")
            .s("a.py")
            .s("line")
            .k(3)
            .s("name")
            .s(name)
            .op(op::SETITEMS)
    };
    // memo: 0 = frames list, 1 = frame f, 2 = frame g (in list 2)
    let p = P::proto(4)
        .op(op::FRAME)
        .raw(&[0; 8])
        .op(op::EMPTY_DICT)
        .s("segments")
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("address")
        .k(0)
        .s("total_size")
        .op(op::BININT2)
        .raw(&[0, 2])
        .s("blocks")
        .op(op::EMPTY_LIST)
        .op(op::MARK)
        // block 0: frames = new list [f]
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("size")
        .op(op::BININT2)
        .raw(&[0, 1])
        .s("state")
        .s("active_allocated")
        .s("frames")
        .op(op::EMPTY_LIST)
        .op(op::MEMOIZE);
    let p = frame(p, "f").op(op::APPEND).op(op::SETITEMS);
    // block 1: frames = memo 0 (the same list)
    let p = p
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("size")
        .op(op::BININT2)
        .raw(&[0, 1])
        .s("state")
        .s("active_awaiting_free")
        .s("frames")
        .op(op::BINGET)
        .raw(&[0])
        .op(op::SETITEMS)
        .op(op::APPENDS)
        .op(op::SETITEMS)
        .op(op::APPEND)
        .op(op::SETITEM)
        .s("device_traces")
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("action")
        .s("alloc")
        .s("addr")
        .k(0)
        .s("size")
        .k(200)
        .s("frames")
        .op(op::EMPTY_LIST)
        .op(op::MARK);
    let p = frame(p, "g").op(op::BINGET).raw(&[1]).op(op::APPENDS);
    let p = p
        .op(op::SETITEMS)
        .op(op::APPEND)
        .op(op::APPEND)
        .op(op::SETITEM);
    let mut bytes = p.stop();
    let frame_len = (bytes.len() - 11) as u64;
    bytes[3..11].copy_from_slice(&frame_len.to_le_bytes());
    bytes
}

#[test]
fn shared_frames_intern_once() {
    let s = read(&shared_frames_pickle()).unwrap_or_else(|e| panic!("{e}"));
    let blocks = &s.segments[0].blocks;
    assert_eq!(
        blocks[0].frames, blocks[1].frames,
        "same list node, same StackId"
    );
    assert_eq!(blocks[1].state, BlockState::ActivePendingFree);
    let entry = &s.trace(0)[0];
    assert_eq!(entry.action(), Action::Alloc);
    let (b, e) = (
        blocks[0].frames.expect("frames"),
        entry.frames().expect("frames"),
    );
    assert_ne!(b, e, "a different list");
    assert_eq!(s.stacks.stack_count(), 2);
    assert_eq!(s.stacks.frame_count(), 2, "frame f is shared by both lists");
    assert_eq!(s.stacks.stack(e)[1], s.stacks.stack(b)[0]);
    let f = s.stacks.frame(s.stacks.stack(b)[0]);
    let g = s.stacks.frame(s.stacks.stack(e)[0]);
    assert!(
        Arc::ptr_eq(&f.filename, &g.filename),
        "frame strings shared"
    );
    // And the writer keeps the sharing: reading its output gives the same interning.
    let again = read(&write(&s)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.stacks.stack_count(), 2);
    assert_eq!(again.stacks.frame_count(), 2);
    let b2 = &again.segments[0].blocks;
    assert_eq!(b2[0].frames, b2[1].frames);
}

#[test]
fn equal_frames_and_stacks_are_one_whatever_the_file_shares() {
    // Three blocks whose stacks are equal frame for frame but share no frame dict, as torch
    // 2.0 pickles each block's `history`; a fourth's frame has an FX key and stays its own.
    let mut s = read(&shared_frames_pickle()).unwrap_or_else(|e| panic!("{e}"));
    let frame = |name: &str| crate::snapshot::Frame {
        filename: Arc::from("a.py"),
        line: 3,
        name: Arc::from(name),
        extra: Vec::new(),
    };
    let long = "x".repeat(300);
    let mut stacks = Vec::new();
    for _ in 0..3 {
        let a = s.stacks.push_frame(frame("f"));
        let b = s.stacks.push_frame(frame(&long));
        stacks.push(s.stacks.push_stack(Box::new([a, b])));
    }
    let mut fx = frame("f");
    fx.extra
        .push((Arc::from("fx_node_op"), Value::from("call_function")));
    let fx = s.stacks.push_frame(fx);
    stacks.push(s.stacks.push_stack(Box::new([fx])));
    let template = s.segments[0].blocks[0].clone();
    s.segments[0].blocks = stacks
        .iter()
        .map(|&id| {
            let mut b = template.clone();
            b.frames = Some(id);
            b
        })
        .collect();
    let r = read(&write(&s)).unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<_> = r.segments[0].blocks.iter().map(|b| b.frames).collect();
    assert_eq!(ids[0], ids[1], "equal stacks are one stack");
    assert_eq!(ids[1], ids[2]);
    let (plain, with_fx) = (ids[0].expect("stack"), ids[3].expect("stack"));
    let f = r.stacks.stack(plain)[0];
    assert_ne!(
        r.stacks.stack(with_fx)[0],
        f,
        "a frame with other keys is not merged"
    );
    assert_eq!(&*r.stacks.frame(r.stacks.stack(plain)[1]).name, long);
    // The trace's frame list [g, f] holds the same frame f (a.py:3:f), from another dict.
    let e = r.trace(0)[0].frames().expect("frames");
    assert!(r.stacks.stack(e).contains(&f));
    // Reading memsnap's own output again changes nothing.
    let again = read(&write(&r)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (again.stacks.stack_count(), again.stacks.frame_count()),
        (r.stacks.stack_count(), r.stacks.frame_count())
    );
}

/// A bare segment list (torch <= 2.0's form) of one inactive block with `history` written by
/// `history`.
fn legacy_block(history: impl FnOnce(P) -> P) -> Vec<u8> {
    let p = P::proto(2)
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("address")
        .k(0)
        .s("total_size")
        .k(100)
        .s("blocks")
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("size")
        .k(100)
        .s("state")
        .s("inactive")
        .s("history");
    history(p)
        .op(op::SETITEMS)
        .op(op::APPEND)
        .op(op::SETITEMS)
        .op(op::APPEND)
        .stop()
}

#[test]
fn bare_segment_list_and_legacy_history() {
    let s = read(&legacy_block(|p| p.op(op::EMPTY_LIST))).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.form, Form::SegmentList);
    assert!(s.device_traces.is_none());
    let b = &s.segments[0].blocks[0];
    assert_eq!(b.history, Some(History::Entries(vec![])));
    assert!(b.frames.is_none());
    let again = read(&write(&s)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.form, Form::SegmentList);
    assert_eq!(
        again.segments[0].blocks[0].history,
        Some(History::Entries(vec![]))
    );

    // One entry with `addr` written by `addr`, an int `real_size` and a key the model does
    // not name.
    let one_entry = |addr: fn(P) -> P| {
        legacy_block(move |p| {
            addr(
                p.op(op::EMPTY_LIST)
                    .op(op::EMPTY_DICT)
                    .op(op::MARK)
                    .s("addr"),
            )
            .s("real_size")
            .k(60)
            .s("note")
            .s("kept")
            .op(op::SETITEMS)
            .op(op::APPEND)
        })
    };
    // A str `addr` is not torch's shape: the history is kept as generic data, and written back.
    let s = read(&one_entry(|p| p.s("x"))).unwrap_or_else(|e| panic!("{e}"));
    let other = s.segments[0].blocks[0].history.clone();
    let Some(History::Other(v)) = &other else {
        panic!("{other:?}")
    };
    assert_eq!(v.as_seq().map(<[Value]>::len), Some(1));
    let again = read(&write(&s)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.segments[0].blocks[0].history, other);

    // torch's shape: typed, the unnamed key kept, and written back as it was.
    let typed = one_entry(|p| p.k(0));
    let s = read(&typed).unwrap_or_else(|e| panic!("{e}"));
    let want = Some(History::Entries(vec![HistoryEntry {
        addr: Some(0),
        real_size: Some(60),
        frames: None,
        extra: vec![(Arc::from("note"), Value::from("kept"))],
    }]));
    assert_eq!(s.segments[0].blocks[0].history, want);
    let again = read(&write(&s)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.segments[0].blocks[0].history, want);
}

#[test]
fn a_history_shared_by_memo_references_counts_each_entry() {
    // One block dict (memo 0) three times in `blocks`, its history one entry dict (memo 1)
    // 300 times: 900 typed entries from about 700 bytes.
    let mut p = P::proto(2)
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("address")
        .k(0)
        .s("total_size")
        .k(100)
        .s("blocks")
        .op(op::EMPTY_LIST)
        .op(op::MARK)
        .op(op::EMPTY_DICT)
        .op(op::BINPUT)
        .raw(&[0])
        .op(op::MARK)
        .s("size")
        .k(100)
        .s("state")
        .s("inactive")
        .s("history")
        .op(op::EMPTY_LIST)
        .op(op::MARK)
        .op(op::EMPTY_DICT)
        .op(op::BINPUT)
        .raw(&[1])
        .op(op::MARK)
        .s("addr")
        .k(0)
        .op(op::SETITEMS);
    for _ in 1..300 {
        p = p.op(op::BINGET).raw(&[1]);
    }
    let bytes = p
        .op(op::APPENDS)
        .op(op::SETITEMS)
        .op(op::BINGET)
        .raw(&[0])
        .op(op::BINGET)
        .raw(&[0])
        .op(op::APPENDS)
        .op(op::SETITEMS)
        .op(op::APPEND)
        .stop();
    assert!(bytes.len() < 900, "{} bytes", bytes.len());
    let e = err(&bytes);
    assert!(e.message.contains("history entries"), "{e}");
    assert!(e.message.contains("pickle bomb"), "{e}");
}

#[test]
fn every_code_opcode_is_refused_by_name() {
    let refused: &[(u8, &str)] = &[
        (op::GLOBAL, "GLOBAL"),
        (op::STACK_GLOBAL, "STACK_GLOBAL"),
        (op::REDUCE, "REDUCE"),
        (op::BUILD, "BUILD"),
        (op::INST, "INST"),
        (op::OBJ, "OBJ"),
        (op::NEWOBJ, "NEWOBJ"),
        (op::NEWOBJ_EX, "NEWOBJ_EX"),
        (op::EXT1, "EXT1"),
        (op::EXT2, "EXT2"),
        (op::EXT4, "EXT4"),
        (op::PERSID, "PERSID"),
        (op::BINPERSID, "BINPERSID"),
        (op::BYTEARRAY8, "BYTEARRAY8"),
        (op::NEXT_BUFFER, "NEXT_BUFFER"),
        (op::READONLY_BUFFER, "READONLY_BUFFER"),
    ];
    for &(code, name) in refused {
        let e = err(&P::proto(5).op(op::NONE).op(code).raw(b"x\ny\n").stop());
        assert_eq!(e.offset, Some(3), "{name}");
        assert!(
            e.message
                .starts_with(&format!("opcode {name} (0x{code:02x})")),
            "{e}"
        );
        assert!(
            e.message.contains("refused: memsnap reads plain data only"),
            "{e}"
        );
    }
    let e = err(b"cos\nsystem\n(S'ls'\ntR.");
    assert_eq!(
        e.to_string(),
        "at byte 0: opcode GLOBAL (0x63) 'os system' refused: memsnap reads plain data only; \
         this pickle asks to import/call code"
    );
}

#[test]
fn malformed_pickles_get_clear_errors() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![], "empty input"),
        (
            vec![op::PROTO, 6, op::NONE, op::STOP],
            "unsupported pickle protocol 6",
        ),
        (vec![op::PROTO, 4, op::APPEND, op::STOP], "stack underflow"),
        (
            vec![op::PROTO, 4, op::EMPTY_LIST, op::MARK, op::APPEND, op::STOP],
            "above the open MARK",
        ),
        (
            vec![op::PROTO, 4, op::EMPTY_LIST, op::APPENDS, op::STOP],
            "needs a MARK",
        ),
        (
            vec![op::PROTO, 4, op::MARK, op::NONE, op::STOP],
            "MARK(s) still open at STOP",
        ),
        (
            vec![op::PROTO, 4, op::BINGET, 3, op::STOP],
            "memo key 3 was never stored",
        ),
        (vec![op::PROTO, 4, op::MEMOIZE], "stack underflow"),
        (vec![op::PROTO, 4, op::NONE], "without a STOP opcode"),
        (vec![op::PROTO, 4, 0xff], "unknown opcode 0xff"),
        (
            vec![
                op::PROTO,
                4,
                op::EMPTY_DICT,
                op::MARK,
                op::NONE,
                op::SETITEMS,
                op::STOP,
            ],
            "odd number",
        ),
        (
            vec![
                op::PROTO,
                4,
                op::EMPTY_DICT,
                op::EMPTY_LIST,
                op::NONE,
                op::SETITEM,
                op::STOP,
            ],
            "unhashable list",
        ),
        (
            vec![
                op::PROTO,
                4,
                op::NONE,
                op::MARK,
                op::NONE,
                op::APPENDS,
                op::STOP,
            ],
            "expects a list to add to but finds a None",
        ),
        (
            vec![op::PROTO, 4, op::NONE, op::STOP, b'x'],
            "trailing data after the STOP",
        ),
        (
            vec![op::PROTO, 4, op::LONG4, 0xff, 0xff, 0xff, 0xff],
            "negative byte count",
        ),
        (
            b"\x80\x04X\x00\x00\x00\x80abc.".to_vec(),
            "length prefix says 2147483648 bytes follow but only 4 remain",
        ),
        (b"\x80\x04\x8c\x02\xed\xa0.".to_vec(), "not valid UTF-8"),
        (
            b"\x80\x04\x95\x00\x10\x00\x00\x00\x00\x00\x00N.".to_vec(),
            "frame of 4096 bytes but only 2 remain",
        ),
        (b"S'abc\n.".to_vec(), "must be quoted"),
        (b"Iabc\n.".to_vec(), "not a decimal integer"),
        (b"I12".to_vec(), "no terminating newline"),
        (b"U\x01\xff.".to_vec(), "not ASCII"),
        (
            vec![op::PROTO, 4, op::NONE, op::STOP],
            "top level: expected a snapshot dict (or a list of segments), got None",
        ),
    ];
    for (bytes, want) in cases {
        let e = err(&bytes);
        assert!(
            e.to_string().contains(want),
            "{bytes:?}: {e} (wanted {want:?})"
        );
    }
    // NUL padding after STOP (as _memory_viz pads before base64) is fine.
    let mut padded = P::with_extra("x").k(1).end_extra();
    padded.extend_from_slice(&[0, 0]);
    assert!(read(&padded).is_ok());
}

#[test]
fn schema_errors_name_the_path_and_types() {
    let seg = |blocks: P| {
        blocks
            .op(op::SETITEMS)
            .op(op::APPEND)
            .op(op::SETITEM)
            .stop()
    };
    let head = || {
        P::proto(4)
            .op(op::EMPTY_DICT)
            .s("segments")
            .op(op::EMPTY_LIST)
            .op(op::EMPTY_DICT)
            .op(op::MARK)
            .s("address")
            .k(0)
            .s("total_size")
            .k(0)
            .s("blocks")
    };
    let bad_size = seg(head()
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("size")
        .s("12")
        .s("state")
        .s("inactive")
        .op(op::SETITEMS)
        .op(op::APPEND));
    assert!(err(&bad_size)
        .message
        .ends_with("segments[0].blocks[0].size: expected int, got str"));
    let bad_state = seg(head()
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("size")
        .k(1)
        .s("state")
        .s("held")
        .op(op::SETITEMS)
        .op(op::APPEND));
    assert!(err(&bad_state)
        .message
        .contains("segments[0].blocks[0].state: unknown block state 'held'"));
    let negative = seg(head()
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("size")
        .op(op::BININT)
        .raw(&[0xff; 4])
        .s("state")
        .s("inactive")
        .op(op::SETITEMS)
        .op(op::APPEND));
    assert!(err(&negative)
        .message
        .contains("segments[0].blocks[0].size: expected a non-negative int, got -1"));
    let missing = seg(head()
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("size")
        .k(1)
        .op(op::SETITEMS)
        .op(op::APPEND));
    assert!(err(&missing)
        .message
        .contains("segments[0].blocks[0]: missing key 'state'"));
}

#[test]
fn recursion_and_depth_are_bounded() {
    // x = []; x.append(x)
    let cyclic = P::with_extra("x")
        .op(op::EMPTY_LIST)
        .op(op::MEMOIZE)
        .op(op::BINGET)
        .raw(&[0])
        .op(op::APPEND)
        .end_extra();
    assert!(err(&cyclic).message.contains("contains itself"));
    let mut deep = P::with_extra("x");
    for _ in 0..1000 {
        deep = deep.op(op::EMPTY_LIST);
    }
    for _ in 0..999 {
        deep = deep.op(op::APPEND);
    }
    assert!(err(&deep.end_extra()).message.contains("nests deeper than"));
}

#[test]
fn memo_bombs_stay_linear() {
    // l0 = [1]; l(i+1) = [li, li, li, li]: 4^30 leaves if copied; as nodes, 30 lists.
    let mut p = P::with_extra("x")
        .op(op::EMPTY_LIST)
        .k(1)
        .op(op::APPEND)
        .op(op::MEMOIZE)
        .op(op::POP);
    for i in 0..30u32 {
        p = p.op(op::EMPTY_LIST).op(op::MARK);
        for _ in 0..4 {
            p = p.op(op::LONG_BINGET).raw(&i.to_le_bytes());
        }
        p = p.op(op::APPENDS).op(op::MEMOIZE).op(op::POP);
    }
    let v = extra_value(&p.op(op::LONG_BINGET).raw(&30u32.to_le_bytes()).end_extra());
    let mut depth = 0;
    let mut cur = &v;
    while let Some(items) = cur.as_seq() {
        depth += 1;
        cur = &items[0];
    }
    assert_eq!(depth, 31);
    // Shared segments are bounded too: 10k references to one segment in a 60 kB file are fine
    // (each costs its bytes), but the typed model cannot exceed one item per input byte.
    let mut p = P::proto(4)
        .op(op::EMPTY_DICT)
        .s("segments")
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("address")
        .k(0)
        .s("total_size")
        .k(0)
        .s("blocks")
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("size")
        .k(1)
        .s("state")
        .s("inactive")
        .op(op::SETITEMS)
        .op(op::MEMOIZE)
        .op(op::APPEND)
        .op(op::MARK);
    for _ in 0..2000 {
        p = p.op(op::BINGET).raw(&[0]);
    }
    p = p
        .op(op::APPENDS)
        .op(op::SETITEMS)
        .op(op::MEMOIZE)
        .op(op::APPEND)
        .op(op::MARK);
    for _ in 0..2000 {
        p = p.op(op::BINGET).raw(&[1]);
    }
    let bomb = p.op(op::APPENDS).op(op::SETITEM).stop();
    assert!(err(&bomb).message.contains("pickle bomb"));
}

#[test]
fn gzip_is_inflated_with_a_bound() {
    let gz = gzipped(&shared_frames_pickle());
    let s = read(&gz).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.segments[0].blocks.len(), 2);
    let e = super::gzip::inflate(&gz, 10, &mut |_| {}).expect_err("bounded");
    assert!(e.message.contains("inflates to more than 10 bytes"), "{e}");
    let e = err(&gz[..gz.len() - 12]);
    assert!(e.message.contains("corrupt or truncated"), "{e}");
}

fn gzipped(plain: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(plain).expect("gzip");
    enc.finish().expect("gzip")
}

/// The output is reserved at the trailer's size: exactly, for one member; a trailer that says
/// too little (the last of several members) or too much (a hostile file) changes only how
/// memory is reserved, never what is read.
#[test]
fn gzip_output_is_sized_by_its_trailer() {
    let plain = shared_frames_pickle();
    let one = super::gzip::inflate(&gzipped(&plain), u64::MAX, &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(one, plain);
    assert_eq!(
        one.capacity(),
        plain.len(),
        "reserved once, at the trailer's size"
    );

    let half = plain.len() / 2;
    let mut two = gzipped(&plain[..half]);
    two.extend(gzipped(&plain[half..]));
    let out = super::gzip::inflate(&two, u64::MAX, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, plain);
    assert_eq!(read(&two).map(|s| s.segments.len()).ok(), Some(1));

    // A trailer claiming 4 GiB: reserved no more than deflate could make of the file, then
    // refused by the decoder's own length check.
    let mut lying = gzipped(&plain);
    let n = lying.len();
    lying[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = err(&lying);
    assert!(e.message.contains("corrupt or truncated"), "{e}");
}

#[test]
fn progress_is_monotonic_and_ends_at_the_length() {
    let bytes = shared_frames_pickle();
    let mut seen = Vec::new();
    read_with_progress(&bytes, &mut |n| seen.push(n)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(seen.last(), Some(&(bytes.len() as u64)));
    assert!(seen.windows(2).all(|w| w[0] <= w[1]));
}

/// Everything the typed model holds survives write -> read.
#[test]
fn writer_round_trips_every_field() {
    let s = read(&shared_frames_pickle()).unwrap_or_else(|e| panic!("{e}"));
    let mut s: Snapshot = s;
    let mut seg = s.segments[0].clone();
    seg.device = Some(1);
    seg.address = u64::MAX - 4095;
    seg.stream = Some(-5);
    seg.segment_pool_id = Some((1, 0));
    seg.is_expandable = Some(true);
    seg.extra.push((
        Arc::from("future"),
        Value::FrozenSet(Arc::new(vec![Value::Int(1)])),
    ));
    s.segments.push(seg);
    let mut oom = s.trace(0)[0].clone();
    oom.set_action(Action::Oom);
    oom.set_addr(None);
    oom.set_device_free(Some(1 << 40));
    oom.set_compile_context(Some(Arc::from("ctx")));
    oom.set_user_metadata(Some(Value::from("meta")));
    oom.set_frames(None);
    let mut other = oom.clone();
    other.set_action(Action::Other(Arc::from("annotate")));
    other.set_time_us(Some(1_700_000_000_000_000));
    if let Some(t) = s.device_traces.as_mut() {
        t[0].push(oom);
        t.push(vec![other]);
    }
    let shared = Value::List(Arc::new(vec![
        Value::Float(f64::NAN),
        Value::Bytes(Arc::from(&b"\x00"[..])),
    ]));
    s.extra.push((Arc::from("a"), shared.clone()));
    s.extra.push((Arc::from("b"), shared));
    s.external_annotations = Some(list(vec![Value::Dict(Arc::new(vec![(
        Value::from("k"),
        Value::Int(-1 << 40),
    )]))]));
    let bytes = write(&s);
    let r = read(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let seg = &r.segments[1];
    assert_eq!(seg.address, u64::MAX - 4095);
    assert_eq!(
        (
            seg.device,
            seg.stream,
            seg.segment_pool_id,
            seg.is_expandable
        ),
        (Some(1), Some(-5), Some((1, 0)), Some(true))
    );
    assert_eq!(seg.extra, s.segments[1].extra);
    let t = r.trace(0);
    assert_eq!(t[1].action(), Action::Oom);
    assert_eq!((t[1].addr(), t[1].device_free()), (None, Some(1 << 40)));
    assert_eq!(t[1].compile_context().map(|s| &**s), Some("ctx"));
    assert_eq!(r.trace(1)[0].action().as_str(), "annotate");
    assert_eq!(r.trace(1)[0].time_us(), Some(1_700_000_000_000_000));
    assert_eq!(r.external_annotations, s.external_annotations);
    match (&r.extra[0].1, &r.extra[1].1) {
        (Value::List(a), Value::List(b)) => assert!(Arc::ptr_eq(a, b), "sharing kept"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn writer_picks_cpython_integer_opcodes() {
    let int_bytes = |v: i64| {
        let s = Snapshot {
            extra: vec![(Arc::from("x"), Value::Int(v))],
            ..Snapshot::default()
        };
        let b = write(&s);
        // ... 'x' MEMOIZE <int> SETITEMS: the int sits between the key's MEMOIZE and SETITEMS.
        let key = b
            .windows(3)
            .position(|w| w == [op::SHORT_BINUNICODE, 1, b'x'])
            .expect("key");
        let start = key + 4;
        let tail = &b[start..];
        let stop = tail
            .iter()
            .rposition(|&c| c == op::SETITEMS)
            .expect("setitems");
        tail[..stop].to_vec()
    };
    assert_eq!(int_bytes(0), vec![op::BININT1, 0]);
    assert_eq!(int_bytes(255), vec![op::BININT1, 255]);
    assert_eq!(int_bytes(256), vec![op::BININT2, 0, 1]);
    assert_eq!(int_bytes(65536), vec![op::BININT, 0, 0, 1, 0]);
    assert_eq!(int_bytes(-1), vec![op::BININT, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(int_bytes(1 << 31), vec![op::LONG1, 5, 0, 0, 0, 0x80, 0]);
    assert_eq!(
        int_bytes(-(1 << 31) - 1),
        vec![op::LONG1, 5, 0xff, 0xff, 0xff, 0x7f, 0xff]
    );
    assert_eq!(
        int_bytes(-(1 << 40)),
        vec![op::LONG1, 6, 0, 0, 0, 0, 0, 0xff]
    );
    assert_eq!(
        int_bytes(0x7f00_0000_0000),
        vec![op::LONG1, 6, 0, 0, 0, 0, 0, 0x7f]
    );
}

/// One trace entry dict, with a MARK and SETITEMS: action, addr, size, stream, time_us, then
/// `frames` (built by `frames`), then whatever `more` adds (key/value pushes).
/// A dict of no segments and `device_traces`, with device 0's list open under a MARK for its
/// entries (the caller closes the MARK, both lists, the dict's MARK and STOP).
fn device_0_open() -> P {
    P::proto(4)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("segments")
        .op(op::EMPTY_LIST)
        .s("device_traces")
        .op(op::EMPTY_LIST)
        .op(op::EMPTY_LIST)
        .op(op::MARK)
}

fn entry(
    p: P,
    action: &str,
    addr: u8,
    frames: impl FnOnce(P) -> P,
    more: impl FnOnce(P) -> P,
) -> P {
    let p = p.op(op::EMPTY_DICT).op(op::MEMOIZE).op(op::MARK);
    let p = p.s("action").s(action).s("addr").k(addr).s("size").k(64);
    let p = p.s("stream").k(0).s("time_us").k(7).s("frames");
    more(frames(p)).op(op::SETITEMS)
}

/// A snapshot with two device traces (one of two entries added by APPENDS, one of one entry
/// added by APPEND, as CPython pickles a list of one item). `root_by_dict` builds the top
/// level with MARK ... DICT instead of EMPTY_DICT ... SETITEMS, which the machine does not
/// recognise as a snapshot: its entries take the general path.
fn two_traces(root_by_dict: bool) -> Vec<u8> {
    two_traces_then(root_by_dict, |p| p)
}

/// [`two_traces`] with more pairs of the top-level dict after `device_traces` (`more`).
fn two_traces_then(root_by_dict: bool, more: impl FnOnce(P) -> P) -> Vec<u8> {
    let mut p = P::proto(4);
    p = if root_by_dict {
        p.op(op::MARK)
    } else {
        p.op(op::EMPTY_DICT).op(op::MEMOIZE).op(op::MARK)
    };
    p = p.s("segments").op(op::EMPTY_LIST).s("device_traces");
    p = p.op(op::EMPTY_LIST).op(op::MARK); // the outer list
    p = p.op(op::EMPTY_LIST).op(op::MARK); // device 0
    let frame_list = |p: P| {
        let p = p.op(op::EMPTY_LIST).op(op::MEMOIZE).op(op::MARK);
        let p = p.op(op::EMPTY_DICT).op(op::MARK).s("filename").s("a.py");
        let p = p.s("line").k(3).s("name").s("f").op(op::SETITEMS);
        p.op(op::APPENDS)
    };
    // memo: 0 root (when EMPTY_DICT), then entry dicts and the frame list are memoized.
    let base = if root_by_dict { 0 } else { 1 };
    p = entry(p, "alloc", 1, frame_list, |p| {
        p.s("compile_context").s("N/A").s("user_metadata").s("")
    });
    // Shares the first entry's frame list (memo base+1) and adds an unknown key.
    p = entry(
        p,
        "free_completed",
        2,
        |p| p.op(op::BINGET).raw(&[base + 1]),
        |p| p.s("pool_id").k(5).k(6).op(op::TUPLE2),
    );
    p = p.op(op::APPENDS);
    p = p.op(op::EMPTY_LIST); // device 1: one entry, APPEND
    p = entry(
        p,
        "oom",
        3,
        |p| p.op(op::EMPTY_LIST),
        |p| p.s("device_free").k(9),
    );
    p = more(p.op(op::APPEND).op(op::APPENDS));
    p = if root_by_dict {
        p.op(op::DICT)
    } else {
        p.op(op::SETITEMS)
    };
    p.stop()
}

#[test]
fn trace_entries_filled_while_parsing_equal_the_general_path() {
    let fast = two_traces(false);
    let general = two_traces(true);
    let sinks = |b: &[u8]| match super::pickle::parse(b, Frames::Keep, &mut |_| {}) {
        Ok((_, sinks)) => sinks.iter().map(|s| s.entries.len()).collect::<Vec<_>>(),
        Err(e) => panic!("{e}"),
    };
    assert_eq!(
        sinks(&fast),
        vec![2, 1],
        "the fast path fills one sink per device"
    );
    assert!(
        sinks(&general).is_empty(),
        "the DICT-built root takes the general path"
    );
    let (a, b) = (read(&fast).unwrap(), read(&general).unwrap());
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let t0 = a.trace(0);
    assert_eq!(t0.len(), 2);
    assert_eq!(t0[0].action(), Action::Alloc);
    assert_eq!(
        (t0[0].addr(), t0[0].size(), t0[0].stream()),
        (Some(1), Some(64), Some(0))
    );
    assert_eq!(t0[0].time_us(), Some(7));
    assert_eq!(t0[0].compile_context().map(|s| &**s), Some("N/A"));
    assert_eq!(
        t0[0].user_metadata().as_ref().and_then(|v| v.as_str()),
        Some("")
    );
    assert_eq!(
        t0[0].frames(),
        t0[1].frames(),
        "a memo-shared frame list is one stack"
    );
    let f = a.stacks.frames_of(t0[0].frames().unwrap()).next().unwrap();
    assert_eq!((&*f.filename, f.line, &*f.name), ("a.py", 3, "f"));
    assert_eq!(t0[1].action(), Action::FreeCompleted);
    assert_eq!(&*t0[1].extra()[0].0, "pool_id");
    let t1 = a.trace(1);
    assert_eq!(
        (t1[0].action().clone(), t1[0].device_free()),
        (Action::Oom, Some(9))
    );
    assert_eq!(a.stacks.stack(t1[0].frames().unwrap()).len(), 0);
}

fn skipping_frames(bytes: &[u8]) -> Result<Snapshot, ReadError> {
    read_with(bytes, Frames::Skip, &mut |_| {})
}

#[test]
fn a_read_skipping_frames_keeps_everything_but_the_stacks() {
    for root_by_dict in [false, true] {
        let bytes = two_traces(root_by_dict);
        let (full, skip) = (read(&bytes).unwrap(), skipping_frames(&bytes).unwrap());
        assert_eq!(skip.stacks.stack_count(), 0);
        assert_eq!(skip.stacks.frame_count(), 0);
        let (a, b) = (full.device_traces.unwrap(), skip.device_traces.unwrap());
        assert_eq!(a.len(), b.len());
        for (ta, tb) in a.iter().zip(&b) {
            assert_eq!(ta.len(), tb.len());
            for (ea, eb) in ta.iter().zip(tb) {
                assert!(ea.frames().is_some() && eb.frames().is_none());
                let mut ea = ea.clone();
                ea.set_frames(None);
                assert_eq!(
                    format!("{ea:?}"),
                    format!("{eb:?}"),
                    "root_by_dict {root_by_dict}"
                );
            }
        }
    }
    // On the fast path the frame lists' items never reach the arena's pool: of its items
    // (the trace lists', the pool_id tuple's and the one frame list's), the frame dict goes.
    let bytes = two_traces(false);
    let items = |frames| match super::pickle::parse(&bytes, frames, &mut |_| {}) {
        Ok((arena, _)) => arena.items.len(),
        Err(e) => panic!("{e}"),
    };
    assert_eq!((items(Frames::Keep), items(Frames::Skip)), (8, 7));
}

/// The skipping pass alone, without the full read it falls back to.
fn skip_pass(bytes: &[u8]) -> Result<Snapshot, ReadError> {
    super::read_inner(bytes, Frames::Skip, &mut |_| {})
}

#[test]
fn a_file_the_skipping_pass_refuses_reads_in_full() {
    // A top-level key whose value is the first entry's frame list (memo 2): the skipping pass
    // refuses it rather than give an empty list, and the read is the full one.
    let bytes = two_traces_then(false, |p| p.s("again").op(op::BINGET).raw(&[2]));
    let e = skip_pass(&bytes).unwrap_err();
    assert!(
        e.message
            .contains("frame list is referenced again elsewhere"),
        "{e}"
    );
    let full = read(&bytes).unwrap();
    assert!(matches!(&full.extra[0].1, Value::List(l) if l.len() == 1));
    let s = skipping_frames(&bytes).unwrap();
    assert!(
        write(&s) == write(&full),
        "the fallback is not the full read"
    );
}

#[test]
fn a_read_skipping_frames_refuses_the_frames_a_full_read_refuses() {
    // An entry's frames, written as `frames` in `entry`, then closing the file.
    let file = |frames: fn(P) -> P| {
        entry(device_0_open(), "alloc", 1, frames, |p| p)
            .op(op::APPENDS)
            .op(op::APPEND)
            .op(op::SETITEMS)
            .stop()
    };
    fn frame(p: P, line: fn(P) -> P) -> P {
        let p = p.op(op::EMPTY_DICT).op(op::MARK).s("filename").s("a.py");
        line(p.s("line")).s("name").s("f").op(op::SETITEMS)
    }
    type Part = fn(P) -> P;
    let cases: [(&str, Part); 5] = [
        ("frames an int", |p| p.k(5)),
        ("frames a dict", |p| p.op(op::EMPTY_DICT)),
        ("a frame that is an int", |p| {
            p.op(op::EMPTY_LIST).op(op::MARK).k(1).k(2).op(op::APPENDS)
        }),
        ("a frame's line a str", |p| {
            let p = p.op(op::EMPTY_LIST).op(op::MARK);
            frame(p, |p| p.s("3")).op(op::APPENDS)
        }),
        ("a frame without name", |p| {
            let p = p
                .op(op::EMPTY_LIST)
                .op(op::MARK)
                .op(op::EMPTY_DICT)
                .op(op::MARK);
            let p = p.s("filename").s("a.py").s("line").k(3).op(op::SETITEMS);
            p.op(op::APPENDS)
        }),
    ];
    for (what, frames) in cases {
        let bytes = file(frames);
        let full = read(&bytes).expect_err(what);
        assert!(
            skip_pass(&bytes).is_err(),
            "{what}: the skipping pass took it"
        );
        assert_eq!(skipping_frames(&bytes).expect_err(what), full, "{what}");
    }
    // The same file with a good frame reads in the skipping pass itself.
    let good = file(|p| {
        let p = p.op(op::EMPTY_LIST).op(op::MARK);
        frame(p, |p| p.k(3)).op(op::APPENDS)
    });
    let s = skip_pass(&good).unwrap();
    assert_eq!((s.trace(0).len(), s.stacks.frame_count()), (1, 0));
}

#[test]
fn a_skipping_read_checks_a_frame_list_an_entry_shares_with_another_key() {
    // {"segments": [], "shared": [<frame>], "device_traces": [[{..., "frames": <shared>}]]}:
    // real files share a block's frame list with its trace entry so, by memo reference.
    let file = |item: fn(P) -> P| {
        let p = P::proto(4).op(op::EMPTY_DICT).op(op::MARK);
        let p = p.s("segments").op(op::EMPTY_LIST).s("shared");
        let p = item(p.op(op::EMPTY_LIST).op(op::MEMOIZE).op(op::MARK)).op(op::APPENDS);
        let p = p
            .s("device_traces")
            .op(op::EMPTY_LIST)
            .op(op::EMPTY_LIST)
            .op(op::MARK);
        let p = entry(p, "alloc", 1, |p| p.op(op::BINGET).raw(&[0]), |p| p);
        p.op(op::APPENDS).op(op::APPEND).op(op::SETITEMS).stop()
    };
    let good = file(|p| {
        let p = p.op(op::EMPTY_DICT).op(op::MARK).s("filename").s("a.py");
        p.s("line").k(3).s("name").s("f").op(op::SETITEMS)
    });
    assert!(read(&good).unwrap().trace(0)[0].frames().is_some());
    let s = skip_pass(&good).unwrap();
    assert_eq!(s.stacks.stack_count(), 0);
    assert!(
        s.trace(0)[0].frames().is_none(),
        "a stack id without its stack"
    );
    let bad = file(|p| p.k(7));
    let full = read(&bad).unwrap_err();
    assert!(
        skip_pass(&bad).is_err(),
        "the skipping pass took a frame that is an int"
    );
    assert_eq!(skipping_frames(&bad).unwrap_err(), full);
}

#[test]
fn trace_entry_errors_name_the_entry_on_the_fast_path() {
    // A str address, on device 0's second entry.
    let p = entry(device_0_open(), "alloc", 1, |p| p.op(op::EMPTY_LIST), |p| p);
    let p = p
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("action")
        .s("alloc")
        .s("addr")
        .s("x");
    let bad = p
        .op(op::SETITEMS)
        .op(op::APPENDS)
        .op(op::APPEND)
        .op(op::SETITEMS)
        .stop();
    let e = err(&bad);
    assert!(
        e.message
            .contains("device_traces[0][1].addr: expected int, got str"),
        "{e}"
    );
    // No action.
    let p = P::proto(4)
        .op(op::EMPTY_DICT)
        .op(op::MARK)
        .s("segments")
        .op(op::EMPTY_LIST);
    let p = p.s("device_traces").op(op::EMPTY_LIST).op(op::EMPTY_LIST);
    let p = p
        .op(op::EMPTY_DICT)
        .s("addr")
        .k(1)
        .op(op::SETITEM)
        .op(op::APPEND);
    let e = err(&p.op(op::APPEND).op(op::SETITEMS).stop());
    assert!(
        e.message
            .contains("device_traces[0][0]: missing key 'action'"),
        "{e}"
    );
    // The same entry dict twice in the list (a memo get of it): two equal entries, as Python.
    let twice = |then: fn(P) -> P| {
        let p = device_0_open()
            .op(op::EMPTY_DICT)
            .op(op::BINPUT)
            .raw(&[0])
            .s("action")
            .s("alloc");
        let p = p.op(op::SETITEM).op(op::BINGET).raw(&[0]).op(op::APPENDS);
        then(p.op(op::APPEND)).op(op::SETITEMS).stop()
    };
    let s = read(&twice(|p| p)).unwrap();
    assert_eq!(s.trace(0).len(), 2);
    assert_eq!(s.trace(0)[1].action(), Action::Alloc);
    // ... but an entry also used as other data is refused with a message.
    let e = err(&twice(|p| p.s("other").op(op::BINGET).raw(&[0])));
    assert!(e.message.contains("referenced a second time"), "{e}");
}

#[test]
fn lists_sharing_equal_items_stay_apart_when_appended_to() {
    // A = [p, q]; B = [p, q] by memo gets (shares A's items); then B += [r] and A += [z].
    let p = P::with_extra("x")
        .op(op::EMPTY_LIST)
        .op(op::MEMOIZE)
        .op(op::MARK);
    let p = p
        .s("p")
        .op(op::MEMOIZE)
        .s("q")
        .op(op::MEMOIZE)
        .op(op::APPENDS);
    let p = p.op(op::EMPTY_LIST).op(op::MARK).op(op::BINGET).raw(&[1]);
    let p = p
        .op(op::BINGET)
        .raw(&[2])
        .op(op::APPENDS)
        .s("r")
        .op(op::APPEND);
    let p = p
        .op(op::BINGET)
        .raw(&[0])
        .s("z")
        .op(op::APPEND)
        .op(op::TUPLE3);
    let strs = |v: &[&str]| list(v.iter().map(|s| Value::from(*s)).collect());
    let want = Value::Tuple(Arc::new(vec![
        strs(&["p", "q", "z"]),
        strs(&["p", "q", "r"]),
        strs(&["p", "q", "z"]),
    ]));
    assert_eq!(extra_value(&p.end_extra()), want);
}

/// A streamed read refuses what is not one input arriving: nothing at all, more than the
/// size it was made for, or bytes that go back on what came before. Each says so.
#[test]
fn streaming_refuses_inputs_that_are_not_one_input_arriving() {
    fn refused<T>(what: &str, r: Result<T, ReadError>) -> ReadError {
        match r {
            Ok(_) => panic!("{what} is not refused"),
            Err(e) => e,
        }
    }
    let bytes = shared_frames_pickle();
    let e = refused("an empty input", Streaming::new(0));
    assert!(e.message.contains("empty input"), "{e}");
    let e = refused("a huge input", Streaming::new(usize::MAX));
    assert!(e.message.contains("larger than"), "{e}");

    let mut s = Streaming::new(bytes.len() - 1).unwrap_or_else(|e| panic!("{e}"));
    let e = refused("too many bytes", s.advance(&bytes, &mut |_| {}));
    assert!(e.message.contains("changed while being read"), "{e}");

    let mut s = Streaming::new(bytes.len()).unwrap_or_else(|e| panic!("{e}"));
    let half = &bytes[..bytes.len() / 2];
    assert!(matches!(s.advance(half, &mut |_| {}), Ok(None)));
    let e = refused(
        "fewer bytes than before",
        s.advance(&bytes[..3], &mut |_| {}),
    );
    assert!(e.message.contains("changed while being read"), "{e}");
}

/// A small input's node table is sized by the rate the input fills it, as a large one's is,
/// not by doubling from the first guess: 300 kB of appended one-byte ints (a node per 3 bytes,
/// 10 times the guess) ended with room for 150,000 nodes for its 100,001 while the only
/// checkpoint came after 1 MiB (now 125,000); room never used is memory a wasm instance keeps.
#[test]
fn a_small_dense_input_reserves_by_its_rate() {
    let n = 100_000;
    let mut p = P::proto(4).op(op::EMPTY_LIST);
    for i in 0..n {
        p = p.k((i % 200) as u8).op(op::APPEND);
    }
    let bytes = p.stop();
    let (arena, _) =
        super::pickle::parse(&bytes, Frames::Keep, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let (len, room) = (arena.nodes.len(), arena.nodes.capacity());
    assert!(len > n, "{len} nodes");
    assert!(room * 4 <= len * 5, "{room} nodes reserved for {len}");
}
