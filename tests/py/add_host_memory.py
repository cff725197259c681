"""Builds a snapshot with pinned host memory from a real one (no real fixture has any).

Usage: python3 add_host_memory.py REAL OUT [N_SEGMENTS]. Copies the N_SEGMENTS (default 3)
segments of REAL that device 0's trace touches most, and the trace entries that touch them, into `host_segments` and
`host_traces` (one list, as PyTorch's host allocator writes it), moved to a host-like address
range (0x7f00_0000_0000 and up, where Linux maps pinned pages) and with `device` 0, as the host
allocator reports it. The copies are deep, so no dict is shared with `segments` or
`device_traces`. The file is BUILT from a real one, not recorded by PyTorch.
"""
import copy
import pickle
import sys

HOST_BASE = 0x7F00_0000_0000


def main(src, out, n):
    with open(src, "rb") as f:
        snap = pickle.load(f)
    device0 = (snap.get("device_traces") or [[]])[0]

    def touches(s):
        a, b = s["address"], s["address"] + s["total_size"]
        return sum(1 for e in device0 if "addr" in e and a <= e["addr"] < b)

    on0 = [s for s in snap["segments"] if s.get("device", 0) == 0]
    chosen = sorted(on0, key=touches, reverse=True)[:n]
    segments = copy.deepcopy(sorted(chosen, key=lambda s: s["address"]))
    ranges = [(s["address"], s["address"] + s["total_size"]) for s in segments]
    # One shift for all, so the segments keep their order and gaps.
    shift = HOST_BASE - min(a for a, _ in ranges)

    def inside(addr):
        return any(a <= addr < b for a, b in ranges)

    trace = [
        copy.deepcopy(e)
        for e in device0
        if "addr" in e and inside(e["addr"])
    ]
    for s in segments:
        s["address"] += shift
        s["device"] = 0
        for b in s["blocks"]:
            if "address" in b:
                b["address"] += shift
    for e in trace:
        e["addr"] += shift
    snap["host_segments"] = segments
    snap["host_traces"] = trace
    with open(out, "wb") as f:
        pickle.dump(snap, f, protocol=4)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
