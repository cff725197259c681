"""DuckDB's view of a `memsnap export --parquet` dataset, as JSON for export_parquet.rs.

Usage: parquet_check.py DATASET_DIR SCHEMA_DOC

Runs the DuckDB queries of docs/parquet-schema.md (the `-- views` block with its path replaced,
then every `-- query: NAME` block) and prints
  {"ranks": [[rank, device, file, segments, blocks, trace_entries, reserved_bytes,
              allocated_bytes, peak_allocated_bytes, peak_allocated_entry, ooms], ...],
   "live_at_peak": [[rank, device, bytes], ...],
   "queries": {NAME: rows as lists}}
Exit status 3 when the duckdb module is missing (the test then skips loudly).
"""

import json
import re
import sys

try:
    import duckdb
except ImportError:
    sys.exit(3)


def blocks(doc):
    """The ```sql blocks of the page, by their first comment line."""
    out = {}
    for body in re.findall(r"```sql\n(.*?)```", doc, re.S):
        first = body.splitlines()[0].strip()
        out[first] = body
    return out


def main():
    dataset, doc_path = sys.argv[1], sys.argv[2]
    sql = blocks(open(doc_path, encoding="utf-8").read())
    con = duckdb.connect()
    views = sql["-- views"].replace("'memsnap-out/", "'" + dataset.rstrip("/") + "/")
    for stmt in views.split(";"):
        if stmt.strip():
            con.execute(stmt)
    ranks = con.execute(
        "SELECT rank, device, file, segments, blocks, trace_entries, reserved_bytes, "
        "allocated_bytes, peak_allocated_bytes, peak_allocated_entry, ooms "
        "FROM ranks ORDER BY rank, device"
    ).fetchall()
    # The timeline's allocated bytes after the peak entry, summed from the allocations table.
    live = con.execute(
        "SELECT r.rank, r.device, coalesce(sum(a.size), 0) FROM ranks r "
        "LEFT JOIN allocations a ON a.rank = r.rank AND a.device = r.device "
        "AND coalesce(a.alloc_entry, 0) <= r.peak_allocated_entry "
        "AND r.peak_allocated_entry < a.live_until_entry "
        "WHERE r.peak_allocated_entry IS NOT NULL GROUP BY r.rank, r.device ORDER BY 1, 2"
    ).fetchall()
    queries = {}
    for first, body in sql.items():
        if first.startswith("-- query: "):
            queries[first[len("-- query: "):]] = [list(r) for r in con.execute(body).fetchall()]
    print(json.dumps({
        "ranks": [list(r) for r in ranks],
        "live_at_peak": [list(r) for r in live],
        "queries": queries,
    }))


main()
