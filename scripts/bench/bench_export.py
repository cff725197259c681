#!/usr/bin/env python3
"""Export and query a 1,024-rank job: `memsnap export --parquet` throughput, Parquet size vs
pickle size, and the three queries of docs/parquet-schema.md in DuckDB and PySpark.

Not run in CI (minutes, and a loaded machine skews it). Needs a release build of memsnap
(`cargo build --release -p memsnap-capture --bins`), the real fixtures
(/work/shared/fixtures/real or $MEMSNAP_REAL_FIXTURES), python3 with `duckdb`, and for the
Spark part `pyspark` (pip) with a JDK (Debian: default-jre-headless); without them that part
is skipped with a message.

    python3 scripts/bench/bench_export.py [--ranks 1024] [--work DIR] [--jobs 1,2] [--repeat N]
        [--tmpfs DIR] [--keep]

The rank files are hard links to the real fixtures in turn (rank i = fixture i mod 16), plus
every 64th rank made by `capture` on a small device so that some ranks ran out of memory; the
links cost no disk, and the files are read from the page cache after the first pass, so the
figure is conversion speed, not disk speed.

Each export is followed by the file system's floor under it, measured in the same run: the same
directories and files (the export's own bytes, read back first), each written beside its name
and renamed into place with as many threads, no conversion. Creating 16 directories and files a
rank is the export's bound where the disk makes each new one slow. Then the same export into a
memory file system (`--tmpfs`, /dev/shm by default), where that floor is near nothing.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "parquet-schema.md"


def fixtures():
    d = Path(os.environ.get("MEMSNAP_REAL_FIXTURES", ROOT.parent / "shared/fixtures/real"))
    if not d.is_dir():
        d = Path("/work/shared/fixtures/real")
    files = sorted(p for p in d.iterdir() if p.suffix in (".pickle", ".pkl"))
    if not files:
        sys.exit(f"no fixtures in {d}")
    return files


def make_ranks(dir, n, bin_dir):
    dir.mkdir(parents=True)
    real = fixtures()
    for i in range(n):
        out = dir / f"rank{i}.pickle"
        if i % 64 == 63:
            subprocess.run(
                [bin_dir / "capture", "-q", "--scenario", "varying-seqlen", "--seed", str(i),
                 "--capacity", "6GB", "-o", out],
                check=True,
            )
        else:
            try:
                os.link(real[i % len(real)], out)
            except OSError:  # another file system
                shutil.copyfile(real[i % len(real)], out)


def size_of(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def sql_blocks():
    doc = DOC.read_text(encoding="utf-8")
    return {b.splitlines()[0].strip(): b for b in re.findall(r"```sql\n(.*?)```", doc, re.S)}


def pyspark_block():
    doc = DOC.read_text(encoding="utf-8")
    for b in re.findall(r"```python\n(.*?)```", doc, re.S):
        if b.startswith("# pyspark"):
            return b
    sys.exit("no pyspark block in docs/parquet-schema.md")


def timed(f, runs=3):
    """(rows of the first run, its seconds, the best of `runs` more)."""
    t = time.perf_counter()
    rows = len(f())
    first = time.perf_counter() - t
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return rows, first, min(times)


def duckdb_queries(dataset):
    try:
        import duckdb
    except ImportError:
        print("duckdb: not installed (python3 -m pip install duckdb), skipped")
        return
    sql = sql_blocks()
    con = duckdb.connect()
    views = sql["-- views"].replace("'memsnap-out/", f"'{dataset}/")
    for stmt in views.split(";"):
        if stmt.strip():
            con.execute(stmt)
    threads = con.execute("SELECT current_setting('threads')").fetchone()[0]
    print(f"duckdb {duckdb.__version__}, {threads} threads: first run, then best of 3 more")
    for first, body in sql.items():
        if first.startswith("-- query: "):
            rows, cold, warm = timed(lambda: con.execute(body).fetchall())
            name = first[len("-- query: "):]
            print(f"  {name:<20} {cold * 1000:8.1f} ms  {warm * 1000:8.1f} ms  ({rows} rows)")


def spark_queries(dataset):
    try:
        import pyspark  # noqa: F401
    except ImportError:
        print("pyspark: not installed (python3 -m pip install pyspark, plus a JDK), skipped")
        return
    if shutil.which("java") is None:
        print("pyspark: no java on PATH (apt-get install default-jre-headless), skipped")
        return
    code = pyspark_block().replace('DATASET = "memsnap-out"', f'DATASET = "{dataset}"')
    # Local mode on every core; the block's own .show() calls are replaced by timed collects.
    code = code.replace('SparkSession.builder.appName("memsnap")',
                        'SparkSession.builder.master("local[*]").appName("memsnap")'
                        '.config("spark.ui.enabled", "false")'
                        '.config("spark.ui.showConsoleProgress", "false")')
    code = code.split("for df in (")[0]
    scope = {}
    t = time.perf_counter()
    exec(code, scope)
    setup = time.perf_counter() - t
    import pyspark
    print(f"pyspark {pyspark.__version__} local[*], session + reading the schemas {setup:.1f} s; "
          "first run, then best of 3 more:")
    scope["spark"].sparkContext.setLogLevel("ERROR")
    for name in ("ranks_by_peak", "top_frames_at_peak", "oom_ranks"):
        rows, cold, warm = timed(scope[name].collect)
        print(f"  {name:<20} {cold * 1000:8.1f} ms  {warm * 1000:8.1f} ms  ({rows} rows)")
    scope["spark"].stop()


def timed_export(bin_dir, snaps, out, jobs):
    """Seconds of one `memsnap export` of `snaps` into a fresh `out`."""
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    subprocess.run([bin_dir / "memsnap", "export", snaps, "--parquet", out, "-j", str(jobs), "-q"],
                   check=True)
    return time.perf_counter() - t


def tree(out):
    """The export's files under `out`, as (path relative to it, bytes)."""
    return [(p.relative_to(out), p.read_bytes()) for p in sorted(out.rglob("*.parquet"))]


def make_tree(dest, layout, jobs):
    """Writes `layout` under `dest` as the export does: a directory per table and rank, each
    file written beside its name and renamed into place, ranks shared among `jobs` threads."""
    for table in {rel.parts[0] for rel, _ in layout}:
        (dest / table).mkdir(parents=True)

    def write(items):
        for rel, data in items:
            path = dest / rel
            path.parent.mkdir(exist_ok=True)
            tmp = path.with_suffix(".parquet.tmp")
            tmp.write_bytes(data)
            tmp.rename(path)

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(write, [layout[i::jobs] for i in range(jobs)]))


def memory_dir(base):
    """A fresh directory on the memory file system `base`, or None where there is none."""
    try:
        with open("/proc/mounts") as f:
            mounts = {line.split()[1]: line.split()[2] for line in f}
    except OSError:
        return None
    if mounts.get(str(base)) != "tmpfs":
        print(f"{base} is not a tmpfs: the export into memory is skipped")
        return None
    return Path(tempfile.mkdtemp(prefix="memsnap-bench-export-", dir=base))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--jobs", default="1,2", help="export -j values to time, comma-separated")
    ap.add_argument("--repeat", type=int, default=1, help="rounds of the -j values, in turn")
    ap.add_argument("--tmpfs", type=Path, default=Path("/dev/shm"),
                    help="a memory file system to export into as well (skipped if absent)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()
    bin_dir = ROOT / "target" / "release"
    if not (bin_dir / "memsnap").exists():
        sys.exit("build first: cargo build --release -p memsnap-capture --bins")
    work = a.work or Path(tempfile.mkdtemp(prefix="memsnap-bench-export-"))
    snaps = work / "snapshots"
    if not snaps.exists():
        make_ranks(snaps, a.ranks, bin_dir)
    pickle_bytes = size_of(snaps)
    print(f"{a.ranks} rank files, {pickle_bytes / 1e6:.0f} MB of pickles, {os.cpu_count()} cores")
    out = work / "parquet"
    # One untimed pass puts the files in the page cache.
    subprocess.run([bin_dir / "memsnap", "stats", snaps / "rank0.pickle"], check=True,
                   stdout=subprocess.DEVNULL)
    for f in snaps.iterdir():
        f.read_bytes()
    mem = memory_dir(a.tmpfs)
    for _ in range(a.repeat):
        for jobs in a.jobs.split(","):
            jobs = int(jobs)
            disk = timed_export(bin_dir, snaps, out, jobs)
            # The same directories and files, bytes and renames, with no conversion: the file
            # system's own floor under the export, on the same disk, with as many threads.
            layout = tree(out)
            copy = work / "floor"
            shutil.rmtree(copy, ignore_errors=True)
            t = time.perf_counter()
            make_tree(copy, layout, jobs)
            floor = time.perf_counter() - t
            shutil.rmtree(copy)
            line = (f"export -j {jobs}: {disk:.1f} s, {pickle_bytes / 1e6 / disk:.1f} MB/s of "
                    f"pickles; the file system alone ({len(layout)} files, each in a directory of its own, "
                    f"{sum(len(b) for _, b in layout) / 1e6:.0f} MB, {jobs} threads): "
                    f"{floor:.1f} s")
            if mem:
                m = timed_export(bin_dir, snaps, mem / "parquet", jobs)
                shutil.rmtree(mem / "parquet")
                line += f"; into {mem} (memory): {m:.1f} s, {pickle_bytes / 1e6 / m:.1f} MB/s"
            print(line, flush=True)
    if mem:
        shutil.rmtree(mem, ignore_errors=True)
    parquet_bytes = size_of(out)
    print(f"Parquet {parquet_bytes / 1e6:.0f} MB = {parquet_bytes / pickle_bytes:.2f} x the pickles")
    duckdb_queries(out)
    spark_queries(out)
    if not a.keep and a.work is None:
        shutil.rmtree(work)
    else:
        print(f"kept {work}")


main()
