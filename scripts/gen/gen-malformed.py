#!/usr/bin/env python3
"""Writes tests/malformed/: small hostile or inconsistent snapshot files and cases.tsv, the table
of what reading each must give. core/tests/malformed.rs and tests/tests/cli_malformed.rs run it.

cases.tsv columns: file, outcome, key words.
  outcome `error`: read fails; every key word (separated by `|`) is in the message.
  outcome `warn`:  read succeeds; validate() warns, every key word is in some warning.
  outcome `ok`:    read succeeds with no warning (key words unused, `-`).

Run from anywhere: python3 scripts/gen/gen-malformed.py (deterministic; rerun after changing it).
"""

import gzip
import os
import pickle
import struct
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "malformed")
CASES = []

# Crashes found by `cargo fuzz run read_snapshot`, fixed in the reader, kept as regressions.
FUZZ_FOUND = [
    # A frame list node referenced where a frame dict belongs reused the list's StackId as a
    # FrameId: index out of bounds in write(). Fixed by checking the node type first.
    ("fuzz-crash-frame-list-as-frame.pickle.gz", "error", ["blocks[3].frames[9]: expected dict, got list"]),
]


def emit(name, data, outcome, words):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    CASES.append((name, outcome, "|".join(words) if words else "-"))


SEG = 0x7F0000000000
FRAMES = [{"filename": "train.py", "line": 12, "name": "forward"}]


def block(addr, size, state="inactive", requested=None):
    return {
        "address": addr,
        "size": size,
        "requested_size": size if requested is None else requested,
        "state": state,
        "frames": FRAMES if state != "inactive" else [],
    }


def segment(addr, total, blocks):
    alloc = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    active = sum(b["size"] for b in blocks if b["state"] != "inactive")
    req = sum(b["requested_size"] for b in blocks if b["state"] != "inactive")
    return {
        "device": 0,
        "address": addr,
        "total_size": total,
        "allocated_size": alloc,
        "active_size": active,
        "requested_size": req,
        "stream": 0,
        "segment_type": "small",
        "segment_pool_id": (0, 0),
        "is_expandable": False,
        "frames": FRAMES,
        "blocks": blocks,
    }


def entry(action, addr, size):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": 1, "frames": FRAMES}


def snapshot(segments=None, trace=None):
    if segments is None:
        segments = [
            segment(
                SEG,
                2 << 20,
                [block(SEG, 512, "active_allocated", 100), block(SEG + 512, (2 << 20) - 512)],
            )
        ]
    if trace is None:
        trace = [entry("segment_alloc", SEG, 2 << 20), entry("alloc", SEG, 100)]
    return {
        "segments": segments,
        "device_traces": [trace],
        "allocator_settings": {"max_split_size": -1, "expandable_segments": False},
    }


def dumps(obj, protocol=4):
    return pickle.dumps(obj, protocol=protocol)


def with_field(path, value):
    """A valid snapshot with one field replaced (path: keys and indices from the top)."""
    s = snapshot()
    node = s
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return dumps(s)


# Raw opcodes, for what pickle.dumps cannot write.
PROTO2 = b"\x80\x02"
PROTO4 = b"\x80\x04"


def binunicode(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if not f.startswith("fuzz-"):
            os.remove(os.path.join(OUT, f))
    # Inputs the fuzzer found (kept as found, gzipped; not regenerated).
    for name, outcome, words in FUZZ_FOUND:
        CASES.append((name, outcome, "|".join(words)))

    base = dumps(snapshot())
    # Readable references: a consistent file in each protocol and in the segment-list form.
    for p in (0, 1, 2, 3, 4, 5):
        emit(f"valid-protocol-{p}.pickle", dumps(snapshot(), p), "ok", None)
    emit("valid-segment-list.pickle", dumps(snapshot()["segments"], 2), "ok", None)
    emit("valid-gzip.pickle", gzip.compress(base, mtime=0), "ok", None)

    # Truncated (core's test also cuts every valid file at every offset).
    emit("empty.pickle", b"", "error", ["empty input"])
    for cut in (1, 2, 11, len(base) // 2, len(base) - 1):
        emit(f"truncated-at-{cut}.pickle", base[:cut], "error", ["truncated"])
    emit("truncated-gzip.pickle", gzip.compress(base, mtime=0)[:-20], "error", ["gzip", "truncated"])

    # Wrong types in every kind of field.
    wrong = [
        ("size-as-str", ["segments", 0, "total_size"], "2097152", "segments[0].total_size: expected int, got str"),
        ("address-as-float", ["segments", 0, "address"], 1.5e14, "segments[0].address: expected int, got float"),
        ("block-size-as-none", ["segments", 0, "blocks", 0, "size"], None, "blocks[0].size: expected int, got None"),
        ("state-as-int", ["segments", 0, "blocks", 0, "state"], 1, "blocks[0].state: expected str, got int"),
        ("state-unknown", ["segments", 0, "blocks", 0, "state"], "allocated", "unknown block state 'allocated'"),
        ("frames-as-dict", ["segments", 0, "frames"], {"a": 1}, "segments[0].frames: expected list, got dict"),
        ("frame-line-as-str", ["segments", 0, "frames"], [{"filename": "a.py", "line": "12", "name": "f"}], "frames[0].line: expected int, got str"),
        ("blocks-as-tuple", ["segments", 0, "blocks"], (), "segments[0].blocks: expected list, got tuple"),
        ("segments-as-str", ["segments"], "none", "segments: expected list, got str"),
        ("traces-as-dict", ["device_traces"], {0: []}, "device_traces: expected list, got dict"),
        ("action-as-int", ["device_traces", 0, 1, "action"], 3, "device_traces[0][1].action: expected str, got int"),
        ("addr-as-bytes", ["device_traces", 0, 1, "addr"], b"\x00\x10", "device_traces[0][1].addr: expected int, got bytes"),
        ("stream-as-list", ["segments", 0, "stream"], [0], "segments[0].stream: expected int, got list"),
        ("expandable-as-int", ["segments", 0, "is_expandable"], 0, "segments[0].is_expandable: expected bool, got int"),
        ("pool-id-as-str", ["segments", 0, "segment_pool_id"], "0,0", "segment_pool_id: expected a tuple of 2 ints, got str"),  # a list reads (JSON)
        ("settings-as-list", ["allocator_settings"], [], "allocator_settings: expected dict, got list"),
        ("negative-size", ["segments", 0, "total_size"], -1, "total_size: expected a non-negative int, got -1"),
        ("negative-address", ["segments", 0, "blocks", 1, "address"], -(1 << 70), "address: expected a non-negative int"),
        ("overflowing-size", ["segments", 0, "blocks", 0, "size"], 1 << 64, "blocks[0].size: int does not fit in 64 bits"),
        ("overflowing-stream", ["segments", 0, "stream"], 1 << 63, "stream: int does not fit in 64 bits"),
    ]
    for name, path, value, message in wrong:
        emit(f"{name}.pickle", with_field(path, value), "error", [message])

    s = snapshot()
    del s["segments"][0]["total_size"]
    emit("missing-total-size.pickle", dumps(s), "error", ["segments[0]", "missing key 'total_size'"])
    s = snapshot()
    del s["segments"]
    emit("missing-segments.pickle", dumps(s), "error", ["missing key 'segments'"])
    emit("top-level-int.pickle", dumps(7), "error", ["expected a snapshot dict", "got int"])
    s = snapshot()
    s[1] = "x"
    emit("non-str-key.pickle", dumps(s), "error", ["dict key", "int, expected str"])

    # A frame dict also used as a frame list (and a frame list as a frame), via the memo: the
    # reader interns both by node and must not hand one's id out as the other's.
    f0 = {"filename": "a.py", "line": 1, "name": "f"}
    f1 = {"filename": "b.py", "line": 2, "name": "g"}
    s = snapshot(trace=[{"action": "alloc", "addr": SEG, "size": 8, "frames": [f0, f1]}, {"action": "alloc", "addr": SEG, "size": 8, "frames": f1}])
    emit("frame-dict-as-stack.pickle", dumps(s), "error", ["device_traces[0][1].frames: expected list, got dict"])
    stack = [f0]
    s = snapshot(trace=[{"action": "alloc", "addr": SEG, "size": 8, "frames": stack}, {"action": "alloc", "addr": SEG, "size": 8, "frames": [stack]}])
    emit("frame-list-as-frame.pickle", dumps(s), "error", ["device_traces[0][1].frames[0]: expected dict, got list"])

    # Inconsistent but readable: read, with warnings.
    half = 1 << 20
    cases = [
        ("block-outside-segment", [block(SEG, 2 << 20), block(SEG + (2 << 20), 512)], 2 << 20, ["outside its segment"]),
        ("blocks-overlap", [block(SEG, half + 512), block(SEG + half, half)], 2 << 20, ["overlap", "sum to"]),
        ("block-sizes-not-summing", [block(SEG, 512), block(SEG + 512, 512)], 2 << 20, ["sum to 1024 B but total_size is 2097152 B"]),
    ]
    for name, blocks, total, words in cases:
        emit(f"{name}.pickle", dumps(snapshot([segment(SEG, total, blocks)], [])), "warn", words)
    seg = segment(SEG, 2 << 20, [block(SEG, 2 << 20, "active_allocated")])
    seg["allocated_size"] = 4096
    emit("segment-counter-disagrees.pickle", dumps(snapshot([seg], [])), "warn", ["allocated_size is 4096 B"])
    two = [segment(SEG, 2 << 20, [block(SEG, 2 << 20)]), segment(SEG + half, 2 << 20, [block(SEG + half, 2 << 20)])]
    emit("segments-overlap.pickle", dumps(snapshot(two, [])), "warn", ["segments[0]", "segments[1]", "overlap"])
    far = 0x10000
    emit(
        "trace-frees-never-allocated.pickle",
        dumps(snapshot(trace=[entry("free_requested", far, 8), entry("free_completed", far, 8)])),
        "warn",
        ["device_traces[0][0]", "never allocated"],
    )
    emit(
        "trace-double-free.pickle",
        dumps(snapshot(trace=[entry("alloc", SEG, 8), entry("free_completed", SEG, 8), entry("free_completed", SEG, 8)])),
        "warn",
        ["device_traces[0][2]", "already freed"],
    )
    emit(
        "trace-double-alloc.pickle",
        dumps(snapshot(trace=[entry("alloc", SEG, 8), entry("alloc", SEG, 8)])),
        "warn",
        ["device_traces[0][1]", "already allocated"],
    )

    # Deep nesting: 100k nested lists, as an unknown key's value and as a segment's blocks.
    depth = 100_000
    nest = b"]" * depth + b"a" * (depth - 1)  # EMPTY_LIST x N, then APPEND x N-1
    deep = PROTO4 + b"}" + binunicode("deep") + nest + b"s."
    emit("deep-nesting-100k.pickle.gz", gzip.compress(deep, mtime=0), "error", ["nests deeper than"])
    marks = PROTO4 + b"(" * depth + b"N."
    emit("open-marks-100k.pickle.gz", gzip.compress(marks, mtime=0), "error", ["MARK"])

    # Memo bomb: list i+1 = [list i, list i], 60 levels = 2^60 leaves, kept as data (shared).
    bomb = bytearray(PROTO4 + b"}" + binunicode("bomb") + b"]" + b"K\x01a" + b"\x94")
    for i in range(60):
        # POP the previous level (it stays reachable through the memo), build the next.
        bomb += b"0" + b"]" + b"h" + bytes([i]) + b"a" + b"h" + bytes([i]) + b"a" + b"\x94"
    bomb += b"s" + binunicode("segments") + b"]s."
    emit("memo-bomb-2-pow-60.pickle", bytes(bomb), "ok", None)
    # Two equal 2^60-leaf tuples as keys of one dict, built apart: comparing them structurally
    # would never end, so container keys are not folded (Python never pickles repeated keys).
    t = bytearray(PROTO4 + b"}" + binunicode("segments") + b"]s" + binunicode("keys") + b"}")
    memo = 0
    for _chain in range(2):
        t += b"K\x01\x85\x940"  # (1,), memoized and popped
        prev = memo
        memo += 1
        for _ in range(60):
            t += b"h" + bytes([prev]) + b"h" + bytes([prev]) + b"\x86\x94" + b"0"
            prev = memo
            memo += 1
        t += b"h" + bytes([prev]) + b"K" + bytes([_chain]) + b"s"
    t += b"s."
    emit("memo-bomb-tuple-keys.pickle", bytes(t), "ok", None)
    # Memo bomb of typed items: 60 levels of nested lists cannot be typed, so the typed bomb is
    # 4000 devices sharing one 4000-entry trace: 16M entries from a 30 kB file.
    b = bytearray(PROTO4 + b"}" + binunicode("segments") + b"]s" + binunicode("device_traces"))
    b += b"]" + b"(" + b"}" + binunicode("action") + binunicode("alloc") + b"s" + b"\x94"
    b += b"h\x00" * 3999 + b"e" + b"\x94" + b"0"  # the trace list is memo 1, popped
    b += b"]" + b"(" + b"h\x01" * 4000 + b"e" + b"s."
    emit("memo-bomb-typed.pickle", bytes(b), "error", ["pickle bomb"])
    cyc = PROTO4 + b"}" + binunicode("segments") + b"]s" + binunicode("loop") + b"]\x94h\x00as."
    emit("cycle.pickle", cyc, "error", ["contains itself"])

    # Length prefixes far past the end of a short file.
    emit("length-2gb-binunicode.pickle", PROTO2 + b"X\xff\xff\xff\x7f" + b"abc", "error", ["2147483647 bytes follow", "remain"])
    emit("length-huge-binbytes8.pickle", PROTO4 + b"\x8e" + struct.pack("<Q", 1 << 62) + b"abc", "error", ["4611686018427387904 bytes follow"])
    emit("length-2gb-frame.pickle", PROTO4 + b"\x95" + struct.pack("<Q", 2 << 30) + b"}.", "error", ["frame of 2147483648 bytes", "truncated"])
    emit("length-negative-binstring.pickle", PROTO2 + b"T\xff\xff\xff\xff" + b"abc", "error", ["negative byte count"])

    # Code: every opcode that imports or calls is refused by name.
    code = [
        ("global", b"cos\nsystem\n(S'echo hi'\ntR.", ["GLOBAL", "'os system'", "refused"]),
        ("stack-global", PROTO4 + binunicode("os") + binunicode("system") + b"\x93.", ["STACK_GLOBAL", "refused"]),
        ("reduce", PROTO2 + b"N)R.", ["REDUCE", "refused"]),
        ("build", PROTO2 + b"}}b.", ["BUILD", "refused"]),
        ("inst", b"(ios\nsystem\n.", ["INST", "'os system'", "refused"]),
        ("obj", b"(N)o.", ["OBJ", "refused"]),
        ("newobj", PROTO2 + b"N)\x81.", ["NEWOBJ", "refused"]),
        ("newobj-ex", PROTO4 + b"N)}\x92.", ["NEWOBJ_EX", "refused"]),
        ("ext1", PROTO2 + b"\x82\x01.", ["EXT1", "refused"]),
        ("persid", b"Pfoo\n.", ["PERSID", "refused"]),
        ("bytearray8", b"\x80\x05\x96" + struct.pack("<Q", 1) + b"a.", ["BYTEARRAY8", "refused"]),
    ]
    for name, data, words in code:
        emit(f"code-{name}.pickle", data, "error", words)

    # Other corrupt pickles.
    emit("protocol-6.pickle", b"\x80\x06}.", "error", ["unsupported pickle protocol 6"])
    emit("unknown-opcode.pickle", PROTO2 + b"\xff", "error", ["unknown opcode 0xff"])
    emit("text-file.pickle", b"hello, this is not a pickle\n", "error", ["memo key", "never stored"])
    emit("trailing-data.pickle", base + b"garbage", "error", ["trailing data"])
    emit("stack-underflow.pickle", PROTO2 + b"a.", "error", ["stack underflow"])
    emit("two-items-at-stop.pickle", PROTO2 + b"}}.", "error", ["2 items at STOP"])
    emit("bad-utf8.pickle", PROTO2 + b"X\x02\x00\x00\x00\xff\xfe.", "error", ["not valid UTF-8"])
    emit("unhashable-key.pickle", PROTO2 + b"}]Ns.", "error", ["unhashable list"])

    with open(os.path.join(OUT, "cases.tsv"), "w") as f:
        f.write("# file\toutcome\tkey words (| separated). Generated by scripts/gen-malformed.py.\n")
        for c in CASES:
            f.write("\t".join(c) + "\n")
    total = sum(os.path.getsize(os.path.join(OUT, c[0])) for c in CASES)
    print(f"{len(CASES)} cases, {total} bytes, in {os.path.normpath(OUT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
