#!/usr/bin/env python3
"""The Python package against its peers, on the same files, in one run (docs/performance.md):

1. Report size: `memsnap html FILE` against torch's `_memory_viz.py trace_plot FILE` (the file
   PyTorch users attach to bug reports; it loads MemoryViz.js from a CDN, so it is not offline).
2. Call time: the module (`memsnap.load(f).stats()` / `.diagnose()`, in process) against the
   `memsnap` command doing the same (`memsnap stats|diagnose f --json`, a process each), and
   CPython's own `pickle.load` of the file as the floor.

Usage (from a venv holding the wheel, release build: scripts/wheel.sh):
    python scripts/bench/bench_python.py --viz target/peers/_memory_viz.py FILE...
scripts/bench/fetch-peers.sh fetches _memory_viz.py from the torch wheel. Times are medians of
--runs wall-clock runs; MB = 10^6 bytes.
"""

import argparse
import gzip
import os
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import memsnap


def median_time(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--viz", required=True, help="torch's _memory_viz.py")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    cli = shutil.which("memsnap") or str(Path(sys.executable).with_name("memsnap"))
    tmp = Path(tempfile.mkdtemp())

    print("| file | snapshot | gzipped | `memsnap html` | `trace_plot` | html / trace_plot | html / (gz + viewer) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    viewer = sum(p.stat().st_size for p in memsnap.VIEWER_DIR.iterdir()
                 if p.suffix in (".wasm", ".js", ".css"))
    for f in a.files:
        raw = Path(f).read_bytes()
        gz = len(raw) if raw[:2] == b"\x1f\x8b" else len(gzip.compress(raw, 6))
        ours = tmp / "r.html"
        memsnap.html(f, ours)
        peer = tmp / "p.html"
        out = subprocess.run([sys.executable, a.viz, "trace_plot", f, "-o", str(peer)],
                             capture_output=True, text=True)
        p = peer.stat().st_size if out.returncode == 0 and peer.exists() else None
        o = ours.stat().st_size
        peer_s = f"{p / 1e6:.2f} MB" if p else f"fails: {out.stderr.strip().splitlines()[-1][:60]}"
        ratio = f"{o / p:.2f}×" if p else "–"
        print(f"| {Path(f).name} | {len(raw) / 1e6:.2f} MB | {gz / 1e6:.3f} MB | {o / 1e6:.2f} MB "
              f"| {peer_s} | {ratio} | {o / (gz + viewer):.3f} |")
        peer.unlink(missing_ok=True)
    print(f"\nviewer as built: {viewer / 1e6:.2f} MB\n")

    print("| file | `pickle.load` | module load+stats | `memsnap stats --json` | module load+diagnose | `memsnap diagnose --json` | diagnose on a loaded snapshot |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for f in a.files:
        def pl():
            with open(f, "rb") as fh:
                pickle.load(fh)
        t_pickle = median_time(pl, a.runs)
        t_mstats = median_time(lambda: memsnap.load(f).stats(), a.runs)
        t_cstats = median_time(lambda: subprocess.run([cli, "stats", f, "--json"], check=True,
                                                      stdout=subprocess.DEVNULL), a.runs)
        t_mdiag = median_time(lambda: memsnap.load(f).diagnose(), a.runs)
        t_cdiag = median_time(lambda: subprocess.run([cli, "diagnose", f, "--json"], check=True,
                                                     stdout=subprocess.DEVNULL), a.runs)
        loaded = memsnap.load(f)
        t_ldiag = median_time(loaded.diagnose, a.runs)
        ms = lambda t: f"{t * 1e3:.1f} ms"
        print(f"| {Path(f).name} | {ms(t_pickle)} | {ms(t_mstats)} | {ms(t_cstats)} "
              f"({t_cstats / t_mstats:.2f}× the module) | {ms(t_mdiag)} | {ms(t_cdiag)} "
              f"({t_cdiag / t_mdiag:.2f}×) | {ms(t_ldiag)} |")
    shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
