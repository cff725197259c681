#!/usr/bin/env python3
"""Times whole commands run in turn, run by run (A B C A B C ...), and writes hyperfine's JSON.

hyperfine runs all of one command's runs, then the next command's. On a shared machine whose
speed drifts for minutes at a time (2x was seen on the 2-core CI machine), two commands timed
that way can land in different phases and their ratio moves with it; run in turn, each run of
one has the others' conditions. Per command: the median wall-clock time, and the medians of
user and system CPU time from the child's rusage (`user` + `system` is what bench_report.py
reads, as it reads hyperfine's).

    interleaved.py --runs 20 --json OUT.json -n memsnap "memsnap stats F" -n peer "python3 ..."
"""

import argparse
import json
import resource
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv):
    """(wall, user, system) seconds of one run; the command's output is discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
        sys.exit(f"interleaved: {shlex.join(argv)} exited {done.returncode}: {' '.join(tail)}")
    return wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=2, help="rounds run first and not counted")
    ap.add_argument("--json", required=True, help="where to write hyperfine-style results")
    ap.add_argument("-n", "--name", action="append", required=True)
    ap.add_argument("commands", nargs="+")
    args = ap.parse_intermixed_args()
    if len(args.name) != len(args.commands):
        ap.error("give one -n NAME per command")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    argvs = [shlex.split(c) for c in args.commands]
    runs = [[] for _ in argvs]
    for round_ in range(args.warmup + args.runs):
        for i, argv in enumerate(argvs):
            r = run_once(argv)
            if round_ >= args.warmup:
                runs[i].append(r)
    results = []
    for name, command, rs in zip(args.name, args.commands, runs):
        walls = [w for w, _, _ in rs]
        results.append({
            "command": name,
            "cmdline": command,
            "median": statistics.median(walls),
            "mean": statistics.fmean(walls),
            "min": min(walls),
            "max": max(walls),
            "user": statistics.median(u for _, u, _ in rs),
            "system": statistics.median(s for _, _, s in rs),
            "times": walls,
        })
    with open(args.json, "w") as f:
        json.dump({"interleaved": True, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
