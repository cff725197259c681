"""Prints a legacy (torch <= 2.0) snapshot's block histories as CPython's pickle.load reads
them: a JSON list per segment, a list per block of its history entries, each
[addr, real_size, [[filename, line, name], ...]]. Usage: python3 legacy_history.py FILE."""
import json
import pickle
import sys

with open(sys.argv[1], "rb") as f:
    data = pickle.load(f)
segments = data["segments"] if isinstance(data, dict) else data
out = [
    [
        [
            [e.get("addr"), e.get("real_size"),
             [[f["filename"], f["line"], f["name"]] for f in e.get("frames", [])]]
            for e in b.get("history", [])
        ]
        for b in seg["blocks"]
    ]
    for seg in segments
]
json.dump(out, sys.stdout)
