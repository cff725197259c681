#!/usr/bin/env bash
# Makes the large benchmark snapshots in target/bench-data/ (never committed), unless present:
#   large-100mb.pickle  1.0M trace entries, context="alloc" sharing (~113 MB)
#   large-500mb.pickle  3.1M trace entries, context="all" sharing   (~500 MB)
#   large-1gb.pickle    6.4M trace entries, context="all" sharing   (~1 GB; only with BENCH_HUGE=1)
# Each is read back with CPython's pickle.load and its counts checked (scripts/gen_large.py).
# FORCE=1 regenerates.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/target/bench-data"
mkdir -p "$out"

make() { # name entries context
    local file="$out/$1.pickle"
    if [[ -s "$file" && -z "${FORCE:-}" ]]; then
        echo "gen-large: $file exists (FORCE=1 to remake)"
        return
    fi
    echo "gen-large: writing $file ($2 entries, context=$3)"
    python3 "$root/scripts/gen_large.py" "$file" --entries "$2" --context "$3" --seed 1
}

make large-100mb 1000000 alloc
make large-500mb 3100000 all
# ~1 GB, only on request: it takes ~15 min and ~10 GB of memory to write and check.
[[ -z "${BENCH_HUGE:-}" ]] || make large-1gb 6400000 all
