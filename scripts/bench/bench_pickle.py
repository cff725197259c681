#!/usr/bin/env python3
"""CPython's pickle.loads timed on each file's bytes (read once, outside the timing), as a
benchmark peer. Prints JSON: {name: {"bytes": n, "seconds": [run, ...]}}. Seconds are this
thread's CPU time (`time.thread_time`), as the Rust benches measure theirs: the machines are
shared, and waiting for a core is neither side's cost.

Runs until `--min-time` seconds have passed and at least `--min-runs` runs are done (at most
`--max-runs`). The garbage collector stays on, as it is for every user of pickle.load.
"""

import argparse
import json
import os
import pickle
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--min-time", type=float, default=1.0)
    ap.add_argument("--min-runs", type=int, default=3)
    ap.add_argument("--max-runs", type=int, default=50)
    args = ap.parse_args()
    out = {}
    for path in args.files:
        with open(path, "rb") as f:
            data = f.read()
        runs, spent = [], 0.0
        while len(runs) < args.max_runs and (len(runs) < args.min_runs or spent < args.min_time):
            t = time.thread_time()
            obj = pickle.loads(data)
            dt = time.thread_time() - t
            del obj
            runs.append(dt)
            spent += dt
        out[os.path.basename(path)] = {"bytes": len(data), "seconds": runs}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
