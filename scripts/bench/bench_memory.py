#!/usr/bin/env python3
"""Peak memory of reading each file: memsnap's reader vs CPython's pickle.load, same files.

Each side runs in a child process that reads the file once; its peak resident set size comes
from the kernel (ru_maxrss of the child, in KiB on Linux), so both include the file's bytes.
Prints JSON: [{"file", "bytes", "memsnap_rss", "pickle_rss"}] with sizes in bytes; files after
`--no-pickle` get memsnap's figure only (pickle.load of a 1 GB snapshot needs ~10 GB and minutes).

    bench_memory.py READ_LOOP FILE... [--no-pickle FILE...]   (READ_LOOP: target/release/examples/read_loop)
"""

import json
import os
import subprocess
import sys

PICKLE_CHILD = (
    "import pickle, sys\n"
    "with open(sys.argv[1], 'rb') as f:\n"
    "    pickle.load(f)\n"
)


def peak_rss(cmd):
    """Runs cmd in a fresh child and returns its peak RSS in bytes."""
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        raise SystemExit(f"bench_memory: {' '.join(cmd)} failed ({status})")
    return usage.ru_maxrss * 1024


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    read_loop = sys.argv[1]
    out = []
    with_pickle = True
    for f in sys.argv[2:]:
        if f == "--no-pickle":
            with_pickle = False
            continue
        r = {"file": os.path.basename(f), "bytes": os.path.getsize(f), "memsnap_rss": peak_rss([read_loop, f, "1"])}
        line = f"bench_memory: {r['file']}: memsnap {r['memsnap_rss'] / r['bytes']:.2f}x the file"
        if with_pickle:
            r["pickle_rss"] = peak_rss([sys.executable, "-c", PICKLE_CHILD, f])
            line += f", pickle.load {r['pickle_rss'] / r['bytes']:.2f}x"
        out.append(r)
        print(line, file=sys.stderr)
    json.dump(out, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
