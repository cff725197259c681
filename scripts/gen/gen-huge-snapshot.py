#!/usr/bin/env python3
"""Writes a large, realistic, consistent snapshot pickle for memory/time measurements, streaming
(constant memory): one device, one big segment, a trace of alloc / free_requested /
free_completed triples whose entries share a few hundred frame lists by memo, as PyTorch's
pickles do (keys and action strings memoized once, LONG_BINGET thereafter, APPENDS in batches of
1000, protocol 4 framed). Not committed output: write it to /tmp.

    python3 scripts/gen/gen-huge-snapshot.py /tmp/huge.pickle --mb 1024
    /usr/bin/time -v target/release/memsnap stats /tmp/huge.pickle
"""

import argparse
import io
import random
import struct

SEG = 0x7F0000000000
SEG_SIZE = 1 << 40


class Writer:
    def __init__(self, out):
        self.out = out
        self.buf = io.BytesIO()
        self.memo = {}
        self.written = 0
        self.fresh = 0
        self.limit = 1 << 16

    def raw(self, b):
        self.buf.write(b)
        if self.buf.tell() >= self.limit:
            self.flush()

    def flush(self):
        data = self.buf.getvalue()
        if data:
            # FRAME opcode, as protocol 4 writers emit around every ~64 KiB.
            self.out.write(b"\x95" + struct.pack("<Q", len(data)) + data)
            self.written += 9 + len(data)
        self.buf = io.BytesIO()

    def memoize(self, key):
        self.memo[key] = len(self.memo)
        self.raw(b"\x94")

    def get(self, key):
        i = self.memo[key]
        self.raw(b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i))

    def str(self, s):
        if ("s", s) in self.memo:
            return self.get(("s", s))
        b = s.encode()
        self.raw(b"\x8c" + bytes([len(b)]) + b if len(b) < 256 else b"X" + struct.pack("<I", len(b)) + b)
        self.memoize(("s", s))

    def int(self, v):
        if 0 <= v < 256:
            self.raw(b"K" + bytes([v]))
        elif 0 <= v < 65536:
            self.raw(b"M" + struct.pack("<H", v))
        elif -(1 << 31) <= v < (1 << 31):
            self.raw(b"J" + struct.pack("<i", v))
        else:
            n = (v.bit_length() + 8) // 8
            self.raw(b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True))


def frames_list(w, key, frames, fresh):
    """A frame list: with `fresh`, a new list per entry holding memo references to shared frame
    dicts (what PyTorch's pickles hold: ~160 bytes an entry); otherwise written once and
    memo-referenced after (a denser stress case: ~45 bytes an entry)."""
    if not fresh and ("f", key) in w.memo:
        return w.get(("f", key))
    w.raw(b"]")
    if fresh:
        w.memoize(("fresh", w.fresh))
        w.fresh += 1
    else:
        w.memoize(("f", key))
    w.raw(b"(")
    for fn, line, name in frames:
        fkey = ("frame", fn, line, name)
        if fkey in w.memo:
            w.get(fkey)
            continue
        w.raw(b"}")
        w.memoize(fkey)
        w.raw(b"(")
        w.str("filename")
        w.str(fn)
        w.str("line")
        w.int(line)
        w.str("name")
        w.str(name)
        w.raw(b"u")
    w.raw(b"e")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--mb", type=int, default=1024, help="approximate size in MiB")
    ap.add_argument("--stacks", type=int, default=400, help="distinct frame lists")
    ap.add_argument("--shared-lists", action="store_true",
                    help="entries share whole frame lists by memo (denser: ~4x the entries per MB)")
    args = ap.parse_args()
    rng = random.Random(0)
    files = [f"/src/model/layer{i}.py" for i in range(40)]
    stacks = []
    for s in range(args.stacks):
        depth = rng.randint(8, 30)
        stacks.append([(rng.choice(files), rng.randint(1, 900), f"fn{rng.randint(0, 300)}") for _ in range(depth)])

    with open(args.out, "wb") as f:
        f.write(b"\x80\x04")
        w = Writer(f)
        w.raw(b"}")
        w.memoize(("top",))
        w.raw(b"(")
        w.str("segments")
        # One segment holding everything, one inactive block: consistent with any trace below.
        w.raw(b"](}(")
        for k, v in (("device", 0), ("address", SEG), ("total_size", SEG_SIZE), ("allocated_size", 0),
                     ("active_size", 0), ("requested_size", 0), ("stream", 0)):
            w.str(k)
            w.int(v)
        w.str("segment_type")
        w.str("large")
        w.str("blocks")
        w.raw(b"](}(")
        for k, v in (("address", SEG), ("size", SEG_SIZE), ("requested_size", 0)):
            w.str(k)
            w.int(v)
        w.str("state")
        w.str("inactive")
        w.raw(b"ueue")
        w.str("device_traces")
        w.raw(b"](]")
        target = args.mb << 20
        t = 1_700_000_000_000_000
        n = 0

        def batch(stack_ids):
            nonlocal t, n
            w.raw(b"(")
            for sid in stack_ids:
                addr = SEG + rng.randrange(0, SEG_SIZE >> 9) * 512
                size = rng.choice((512, 4096, 1 << 20, 3 << 20, 100 << 20)) + rng.randrange(0, 512)
                for action in ("alloc", "free_requested", "free_completed"):
                    t += rng.randint(1, 50)
                    w.raw(b"}(")
                    w.str("action")
                    w.str(action)
                    w.str("addr")
                    w.int(addr)
                    w.str("size")
                    w.int(size)
                    w.str("stream")
                    w.int(0)
                    w.str("time_us")
                    w.int(t)
                    w.str("frames")
                    frames_list(w, sid, stacks[sid], not args.shared_lists)
                    w.raw(b"u")
                    n += 1
            w.raw(b"e")

        # Warm-up batches reference every stack, so the memo is complete; after that batches
        # are position-independent bytes, and a pool of them is replayed to reach the size fast
        # (addresses repeat between batches, each as a whole alloc/free triple: still consistent).
        for first in range(0, args.stacks, 333):
            batch(range(first, min(first + 333, args.stacks)))
        pool = []
        w.limit = 1 << 20  # one batch of fresh lists is ~160 kB: frames up to 1 MiB
        for _ in range(64):
            w.flush()  # a batch then fits the buffer unflushed: slice it out
            mark = w.buf.tell()
            batch([rng.randrange(args.stacks) for _ in range(333)])
            pool.append(w.buf.getvalue()[mark:])
        per_batch = 3 * 333
        while w.written + w.buf.tell() < target:
            w.raw(pool[rng.randrange(len(pool))])
            n += per_batch
        w.raw(b"e")  # the device list
        w.raw(b"u.")
        w.flush()
    print(f"{args.out}: {w.written} bytes, {n} trace entries, {args.stacks} distinct stacks")


if __name__ == "__main__":
    main()
