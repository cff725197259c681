"""The phases `memsnap phases --json FILE` must find, computed by CPython from `pickle.load`.

Definitions as in core/src/analysis/phases.rs: a device's START/END marks in time order (stable);
a START opens a phase inside the innermost open one; an END closes the innermost open phase of
its name and every phase opened inside it; an END with none open is a phase from the trace's
start; a phase holds the trace entries with start_us <= time_us <= end_us. Counts per phase:
`alloc` entries and the bytes they asked for; frees are `free_requested` entries, and
`free_completed` entries of an address with no request pending.
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
            out[str(device)] = r
    json.dump(out, sys.stdout)


main()
