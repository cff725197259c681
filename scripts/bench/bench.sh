#!/usr/bin/env bash
# One command for every memsnap benchmark against its peers; writes target/bench/report.md.
#
#   scripts/bench/bench.sh            everything (~15-25 min on 2 cores)
#   BENCH_QUICK=1 scripts/bench/bench.sh   real fixtures + the 100 MB file only, shorter criterion runs
#   BENCH_NO_PAGE=1                  skips the page step (headless Chromium)
#   BENCH_HUGE=1                     also makes and opens a ~1 GB file (slow to generate)
#
# Steps: make the large files (scripts/gen/gen-large.sh), fetch the peers (scripts/bench/fetch-peers.sh),
# build `memsnap` (release), time CPython's pickle.loads on each file's bytes
# (scripts/bench/bench_pickle.py), time whole commands run in turn (`memsnap stats|trace` vs
# `python3 _memory_viz.py stats|trace`, scripts/bench/interleaved.py), peak memory of one read vs pickle.load's
# (scripts/bench/bench_memory.py), run the criterion benches (read, analyses, replay),
# the replay in wasm vs native (scripts/bench/bench_replay_wasm.sh, node),
# then the page in headless Chromium (tests/tests/page_bench.rs, release: the worker's pipeline
# vs the same native, first paint, zoom/pan, memory, the largest file that opens), then
# tabulate (scripts/bench/bench_report.py).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
out="$root/target/bench"
fixtures="${MEMSNAP_REAL_FIXTURES:-$root/../shared/fixtures/real}"
quick="${BENCH_QUICK:-}"
mkdir -p "$out"
rm -f "$out"/commands-*.json "$out"/skipped.txt "$out"/page.json "$out"/memory.json

scripts/gen/gen-large.sh
scripts/bench/fetch-peers.sh
cargo build --release -q -p memsnap-capture --bin memsnap
memsnap="$CARGO_TARGET_DIR/release/memsnap"
viz="$root/target/peers/_memory_viz.py"
# The interpreter itself, not a launcher in front of it: pyenv's `python3` is a bash shim that
# added ~95 ms to every peer run here (`python3 -c pass` 162 ms against 66 ms), which would
# flatter memsnap's ratio.
python="$(python3 -c 'import sys; print(sys.executable)')"

real=()
if [[ -d "$fixtures" ]]; then
    real=("$fixtures"/*.pickle "$fixtures"/*.pkl)
else
    echo "WARNING: real fixtures not found at $fixtures, skipping them" >&2
fi
large=("$root/target/bench-data/large-100mb.pickle")
[[ -n "$quick" ]] || large+=("$root/target/bench-data/large-500mb.pickle")

echo "bench: CPython pickle.loads"
python3 scripts/bench/bench_pickle.py "${real[@]}" > "$out/pickle-real.json"
python3 scripts/bench/bench_pickle.py --min-runs 2 --min-time 0 "${large[@]}" > "$out/pickle-large.json"

# Whole commands: `stats` on every real fixture (issue 32 holds it to 10x the peer on each),
# `trace` on the three largest, both on the large files.
mapfile -t biggest < <(ls -S "${real[@]}" 2>/dev/null | head -n 3)
for f in "${real[@]}" "${large[@]}"; do
    name="$(basename "$f")"
    size="$(stat -c %s "$f")"
    runs=(--warmup 2 --runs 20)
    ((size > 50000000)) && runs=(--warmup 0 --runs "${BENCH_LARGE_RUNS:-2}")
    for what in stats trace; do
        [[ $what == trace && " ${biggest[*]} ${large[*]} " != *" $f "* ]] && continue
        ours="$memsnap $what $f"
        peer="$python $viz $what $f"
        if ! $peer >/dev/null 2>"$out/peer-error.txt"; then
            echo "$name $what: _memory_viz.py fails: $(tail -n 1 "$out/peer-error.txt")" >> "$out/skipped.txt"
            continue
        fi
        echo "bench: $what $name"
        # In turn, run by run: this machine's speed drifts (docs/performance.md).
        python3 scripts/bench/interleaved.py "${runs[@]}" --json "$out/commands-$what-$name.json" \
            -n memsnap "$ours" -n _memory_viz "$peer"
    done
done

echo "bench: peak memory of a read, memsnap vs CPython pickle.load"
cargo build --release -q -p memsnap-core --example read_loop
huge=()
[[ -n "${BENCH_HUGE:-}" ]] && huge=(--no-pickle "$root/target/bench-data/large-1gb.pickle")
python3 scripts/bench/bench_memory.py "$CARGO_TARGET_DIR/release/examples/read_loop" "${biggest[@]}" "${large[@]}" \
    "${huge[@]}" > "$out/memory.json"

echo "bench: criterion (read, analyses, replay)"
crit=()
[[ -n "$quick" ]] && crit=(--warm-up-time 1 --measurement-time 2)
cargo bench -q -p memsnap-core --bench read --bench analyses --bench replay -- "${crit[@]}" \
    > "$out/criterion.txt" 2>&1 || { tail -n 20 "$out/criterion.txt"; exit 1; }

echo "bench: replay wasm vs native (node)"
rm -f "$out/replay-wasm.json"
scripts/bench/bench_replay_wasm.sh > "$out/replay-wasm.json"

if [[ -z "${BENCH_NO_PAGE:-}" ]]; then
    echo "bench: page (headless Chromium; site built into target/bench/dist)"
    trunk build --release --offline --dist "$out/dist" > "$out/trunk.txt" 2>&1 || { tail -n 20 "$out/trunk.txt"; exit 1; }
    MEMSNAP_DIST="$out/dist" MEMSNAP_BENCH_PAGE_OUT="$out/page.json" \
        cargo test --release -q -p memsnap-tests --test page_bench -- --ignored --nocapture \
        > "$out/page.txt" 2>&1 || { tail -n 20 "$out/page.txt"; exit 1; }
fi

python3 scripts/bench/bench_report.py --out "$out/report.md" --criterion "$CARGO_TARGET_DIR/criterion" \
    --replay-wasm "$out/replay-wasm.json" \
    --pickle "$out/pickle-real.json" "$out/pickle-large.json" --commands "$out"/commands-*.json \
    --skipped "$out/skipped.txt" --page "$out/page.json" --memory "$out/memory.json"
echo "bench: wrote $out/report.md"
