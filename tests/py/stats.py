"""What `memsnap stats --json FILE` must print, computed by CPython from `pickle.load`.

Plain data only: the snapshot files hold dicts, lists, str, int, float, bool, tuples. The
definitions match core/src/analysis/summary.rs (see its doc comments) field by field.
Usage: python3 stats.py FILE  -> one JSON object on stdout.
"""
import gzip
import json
import pickle
import sys


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return pickle.loads(data)


def requested_of(b):
    if "requested_size" in b:
        return b["requested_size"]
    h = b.get("history")
    if isinstance(h, list) and h and isinstance(h[0], dict):
        r = h[0].get("real_size")
        if isinstance(r, int) and not isinstance(r, bool) and r >= 0:
            return r
    return b["size"]


def summary(snap):
    if isinstance(snap, list):
        snap = {"segments": snap}
    segments = snap["segments"]
    traces = snap.get("device_traces")
    blocks = [b for s in segments for b in s["blocks"]]
    active = [b for b in blocks if b["state"] != "inactive"]
    allocated = [b for b in blocks if b["state"] == "active_allocated"]
    free = [b["size"] for b in blocks if b["state"] == "inactive"]
    devices = {s.get("device", 0) for s in segments}
    actions = {}
    sizes = {b["size"] for b in allocated}
    for d, trace in enumerate(traces or []):
        if trace:
            devices.add(d)
        for e in trace:
            actions[e["action"]] = actions.get(e["action"], 0) + 1
            if e["action"] == "alloc" and "size" in e:
                sizes.add(e["size"])
    pools = {}
    for s in segments:
        key = (s.get("device", 0), tuple(s.get("segment_pool_id") or (0, 0)))
        p = pools.setdefault(key, [0, 0, 0])
        p[0] += 1
        p[1] += s["total_size"]
        p[2] += sum(b["size"] for b in s["blocks"] if b["state"] == "active_allocated")
    return {
        "host": host_summary(snap),
        "pools": [
            {"device": d, "pool_id": list(pid), "segments": n, "reserved_bytes": r, "allocated_bytes": a}
            for (d, pid), (n, r, a) in sorted(pools.items())
        ],
        "segments": len(segments),
        "blocks": len(blocks),
        "devices": sorted(devices),
        "trace_entries": [len(t) for t in traces or []],
        "actions": actions,
        "reserved_bytes": sum(s["total_size"] for s in segments),
        "allocated_bytes": sum(b["size"] for b in allocated),
        "active_bytes": sum(b["size"] for b in active),
        "requested_bytes": sum(requested_of(b) for b in active),
        "largest_free_block_bytes": max(free, default=0),
        "total_free_bytes": sum(free),
        "distinct_alloc_sizes": len(sizes),
    }


def host_summary(snap):
    """Pinned host memory, counted apart from the devices; None when the file has none."""
    if "host_segments" not in snap and "host_traces" not in snap:
        return None
    segments = snap.get("host_segments") or []
    trace = snap.get("host_traces") or []
    blocks = [b for s in segments for b in s["blocks"]]
    active = [b for b in blocks if b["state"] != "inactive"]
    free = [b["size"] for b in blocks if b["state"] == "inactive"]
    actions = {}
    for e in trace:
        actions[e["action"]] = actions.get(e["action"], 0) + 1
    return {
        "segments": len(segments),
        "blocks": len(blocks),
        "trace_entries": len(trace),
        "actions": actions,
        "reserved_bytes": sum(s["total_size"] for s in segments),
        "allocated_bytes": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
        "active_bytes": sum(b["size"] for b in active),
        "requested_bytes": sum(requested_of(b) for b in active),
        "largest_free_block_bytes": max(free, default=0),
        "total_free_bytes": sum(free),
    }


if __name__ == "__main__":
    json.dump(summary(load(sys.argv[1])), sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
