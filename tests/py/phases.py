"""The phases `memsnap phases --json FILE` must find, computed by CPython from `pickle.load`.

Definitions as in core/src/analysis/phases.rs: a device's START/END marks in time order (stable);
a START opens a phase inside the innermost open one; an END closes the innermost open phase of
its name and every phase opened inside it; an END with none open is a phase from the trace's
start; a phase holds the trace entries with start_us <= time_us <= end_us. Counts per phase:
`alloc` entries and the bytes they asked for; frees are `free_requested` entries, and
`free_completed` entries of an address with no request pending.

The per-phase memory figures follow core/src/analysis/timeline.rs and intervals.rs, written
again here from their doc comments: allocated after entry i starts at the bytes of allocations
made before the trace and moves by each allocation's block size at its `alloc` and at its end
(the free request, or the completion when none was requested, or a reuse of its address); a
block's size is the dump's for one still live at the dump, the whole segment for one that
follows the `segment_alloc` of its own address and would not split it, and round_size(size)
otherwise (512-byte steps; the files checked set no roundup_power2_divisions). Reserved walks
back from the dump's segment total undoing segment_alloc/map and segment_free/unmap.
Usage: python3 phases.py FILE  -> JSON {device: {"phases": [...], counts...}} on stdout.
"""
import bisect
import json
import sys

# The same reading of the file (pickle, gzipped or not) as the stats reference.
from stats import load


def entry_times(trace):
    # Entries without a time sort with the one before them: give them its time.
    out, last = [], None
    for e in trace:
        t = e.get("time_us")
        if isinstance(t, int):
            last = t
        out.append(last if last is not None else float("-inf"))
    return out


def device_phases(annotations, device, trace):
    marks, unreadable = [], 0
    for a in annotations:
        d = a.get("device")
        if isinstance(d, int) and d != device:
            continue
        stage, name, t = a.get("stage"), a.get("name"), a.get("time_us")
        if stage in ("START", "END") and isinstance(name, str) and isinstance(t, int):
            marks.append((stage, name, t))
        else:
            unreadable += 1
    if not marks:
        return None
    if not any(isinstance(e.get("time_us"), int) for e in trace):
        return None
    out_of_order = sum(1 for x, y in zip(marks, marks[1:]) if y[2] < x[2])
    marks.sort(key=lambda m: m[2])
    times = entry_times(trace)
    n = len(trace)
    first_at = lambda t: bisect.bisect_left(times, t)
    end_at = lambda t: bisect.bisect_right(times, t)
    phases, from_start, open_ = [], [], []
    for stage, name, t in marks:
        if stage == "START":
            phases.append(dict(name=name, start_us=t, end_us=None, depth=len(open_),
                               parent=open_[-1] if open_ else None, first=first_at(t), end=n))
            open_.append(len(phases) - 1)
            continue
        at = next((k for k in range(len(open_) - 1, -1, -1) if phases[open_[k]]["name"] == name), None)
        if at is None:
            from_start.append(dict(name=name, start_us=None, end_us=t, depth=0, parent=None,
                                   first=0, end=end_at(t)))
            continue
        for i in open_[at:]:
            phases[i]["end_us"] = t
            phases[i]["end"] = max(end_at(t), phases[i]["first"])
        del open_[at:]
    for p in phases:
        if p["parent"] is not None:
            p["parent"] += len(from_start)
    result = from_start + phases
    # Which entries are allocs and frees, by the definitions above.
    kind, pending = [], set()
    for e in trace:
        a = e.get("action")
        if a == "alloc":
            kind.append(("alloc", e.get("size", 0)))
        elif a == "free_requested":
            pending.add(e.get("addr"))
            kind.append(("free", 0))
        elif a == "free_completed":
            if e.get("addr") in pending:
                pending.discard(e.get("addr"))
                kind.append((None, 0))
            else:
                kind.append(("free", 0))
        else:
            kind.append((None, 0))
    for p in result:
        ks = kind[p["first"]:p["end"]]
        p["allocs"] = sum(1 for k, _ in ks if k == "alloc")
        p["requested_bytes"] = sum(s for k, s in ks if k == "alloc")
        p["frees"] = sum(1 for k, _ in ks if k == "free")
    return dict(phases=result, unmatched_ends=len(from_start), unclosed=len(open_),
                out_of_order=out_of_order, unreadable=unreadable)


MB = 1 << 20
SMALL = MB  # kSmallSize
MIN_BLOCK = 512


def round_size(n):
    return MIN_BLOCK if n < MIN_BLOCK else -(-n // MIN_BLOCK) * MIN_BLOCK


def splits(block, rounded):
    rest = max(block - rounded, 0)
    return rest >= MIN_BLOCK if rounded <= SMALL else rest > SMALL


def device_segments(snap, device):
    return [s for s in snap.get("segments") or [] if s.get("device", 0) == device]


def series(snap, device, trace):
    """(allocated after each entry, reserved after each entry, allocated and reserved before
    the first, allocations as [alloc index or None, end, size])."""
    n = len(trace)
    allocs, open_, pending = [], {}, set()
    for i, e in enumerate(trace):
        a, addr, size = e.get("action"), e.get("addr"), e.get("size", 0)
        if addr is None:
            continue
        if a == "alloc":
            if addr in open_:
                prev = allocs[open_.pop(addr)]
                if prev[1] == n:
                    prev[1] = i
            block = round_size(size)
            p = trace[i - 1] if i > 0 else {}
            if p.get("action") == "segment_alloc" and p.get("addr") == addr:
                seg = p.get("size", 0)
                if seg >= block and not splits(seg, block):
                    block = seg
            open_[addr] = len(allocs)
            allocs.append([i, n, block, False])
        elif a in ("free_requested", "free_completed"):
            if addr not in open_:
                open_[addr] = len(allocs)
                allocs.append([None, i, round_size(size), False])
            al = allocs[open_[addr]]
            if a == "free_completed":
                if not al[3]:
                    al[1] = min(al[1], i)
                del open_[addr]
            else:
                al[3] = True
                al[1] = min(al[1], i)
    dump_reserved = 0
    for seg in device_segments(snap, device):
        dump_reserved += seg["total_size"]
        addr = seg["address"]
        for b in seg.get("blocks", []):
            if b["state"] == "active_allocated":
                k = open_.get(addr)
                if k is not None and allocs[k][1] == n:
                    allocs[k][2] = b["size"]
                    del open_[addr]
                else:
                    allocs.append([None, n, b["size"], False])
            addr += b["size"]
    delta = [0] * (n + 1)
    start_allocated = 0
    for at, end, size, _ in allocs:
        if at is None:
            start_allocated += size
        else:
            delta[at] += size
        if end < n:
            delta[end] -= size
    allocated, cur = [], start_allocated
    for i in range(n):
        cur += delta[i]
        allocated.append(max(cur, 0))
    reserved, r = [0] * n, dump_reserved
    signs = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
    for i in range(n - 1, -1, -1):
        reserved[i] = max(r, 0)
        r -= signs.get(trace[i].get("action"), 0) * trace[i].get("size", 0)
    return allocated, reserved, start_allocated, max(r, 0), allocs


def figures(snap, device, trace, phases):
    """Each phase's peaks, block bytes allocated and freed, and net change (in place)."""
    allocated, reserved, start_a, start_r, allocs = series(snap, device, trace)
    made = [0] * (len(trace) + 1)
    freed = [0] * (len(trace) + 1)
    for at, end, size, _ in allocs:
        if at is not None:
            made[at] += size
        if end < len(trace):
            freed[end] += size
    for p in phases:
        a, b = p["first"], p["end"]
        before_a = allocated[a - 1] if a > 0 else start_a
        before_r = reserved[a - 1] if a > 0 else start_r
        if a < b:
            peak = max(allocated[a:b])
            p["peak_allocated"] = peak
            p["peak_index"] = a + allocated[a:b].index(peak)
            p["peak_reserved"] = max(reserved[a:b])
            after = allocated[b - 1]
        else:
            p["peak_allocated"], p["peak_index"], p["peak_reserved"] = before_a, None, before_r
            after = before_a
        p["allocated_bytes"] = sum(made[a:b])
        p["freed_bytes"] = sum(freed[a:b])
        p["net_bytes"] = after - before_a


def main():
    snap = load(sys.argv[1])
    if not isinstance(snap, dict):
        # A bare segment list (PyTorch's oldest form): no trace, no annotations.
        snap = {}
    annotations = snap.get("external_annotations") or []
    out = {}
    for device, trace in enumerate(snap.get("device_traces") or []):
        r = device_phases(annotations, device, trace)
        if r is not None:
            figures(snap, device, trace, r["phases"])
            out[str(device)] = r
    json.dump(out, sys.stdout)


main()
