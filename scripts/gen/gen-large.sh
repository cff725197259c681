#!/usr/bin/env bash
# Makes the large benchmark snapshots in target/bench-data/ (never committed), unless present:
#   large-100mb.pickle  1.0M trace entries, context="alloc" sharing (~113 MB)
#   large-500mb.pickle  3.1M trace entries, context="all" sharing   (~500 MB)
#   large-1gb.pickle    ~6.7M trace entries, fresh frame lists of shared frames, as the 500 MB one
#                       (~1 GB; only with BENCH_HUGE=1)
# The first two are read back with CPython's pickle.load and their counts checked
# (scripts/gen/gen_large.py); the 1 GB one is streamed by scripts/gen/gen-huge-snapshot.py (seconds, constant
# memory; gen_large.py needed ~15 min and ~10 GB for it).
# FORCE=1 regenerates.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/target/bench-data"
mkdir -p "$out"

make() { # name entries context
    local file="$out/$1.pickle"
    if [[ -s "$file" && -z "${FORCE:-}" ]]; then
        echo "gen-large: $file exists (FORCE=1 to remake)"
        return
    fi
    echo "gen-large: writing $file ($2 entries, context=$3)"
    python3 "$root/scripts/gen/gen_large.py" "$file" --entries "$2" --context "$3" --seed 1
}

make large-100mb 1000000 alloc
make large-500mb 3100000 all
if [[ -n "${BENCH_HUGE:-}" ]]; then
    if [[ -s "$out/large-1gb.pickle" && -z "${FORCE:-}" ]]; then
        echo "gen-large: $out/large-1gb.pickle exists (FORCE=1 to remake)"
    else
        echo "gen-large: writing $out/large-1gb.pickle (streamed)"
        python3 "$root/scripts/gen/gen-huge-snapshot.py" "$out/large-1gb.pickle" --mb 1024
    fi
fi
