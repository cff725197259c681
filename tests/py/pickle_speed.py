"""CPython `pickle.loads` throughput per file, for comparison with memsnap's reader.

Usage: python3 pickle_speed.py FILE...  -> one line per file: `<name> <MB/s>` (best of 5 runs
of at least 0.2 s of this thread's CPU time each, so that other jobs on the machine do not
skew it; MB = 10^6 bytes of pickle, as the Rust side counts).
"""
import pickle
import sys
import time


def best_rate(data):
    best = 0.0
    for _ in range(5):
        n, start = 0, time.thread_time()
        while True:
            pickle.loads(data)
            n += 1
            elapsed = time.thread_time() - start
            if elapsed >= 0.2:
                break
        best = max(best, n * len(data) / elapsed / 1e6)
    return best


if __name__ == "__main__":
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            data = f.read()
        print(path.rsplit("/", 1)[-1], f"{best_rate(data):.1f}")
