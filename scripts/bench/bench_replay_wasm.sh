#!/usr/bin/env bash
# Replay rate, wasm vs native, on the same generated 1M-entry trace (the replay bench's
# workload): builds core/examples/replay_rate (native) and core/examples/replay_wasm
# (wasm32-unknown-unknown, run by node), runs each best-of-RUNS, prints one JSON object:
#
#   scripts/bench/bench_replay_wasm.sh [RUNS]      (default 7; needs node)
#
# {"native": {...}, "wasm": {...}, "ratio_cpu": native/wasm, "ratio_wall": ...}: entries/s by
# thread CPU time natively, by process CPU time in node, and by wall time for both.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
runs="${1:-7}"
command -v node >/dev/null || { echo "bench_replay_wasm: node is not installed" >&2; exit 1; }
cargo build --release -q -p memsnap-core --example replay_rate
cargo build --release -q -p memsnap-core --example replay_wasm --target wasm32-unknown-unknown
native="$("$CARGO_TARGET_DIR/release/examples/replay_rate" "$runs")"
wasm="$(node scripts/bench/bench_replay_wasm.mjs \
    "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/examples/replay_wasm.wasm" "$runs")"
python3 - "$native" "$wasm" <<'PY'
import json, sys
native, wasm = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if native["entries"] != wasm["entries"]:
    sys.exit(f"bench_replay_wasm: traces differ: {native['entries']} native, {wasm['entries']} wasm entries")
ratio = lambda k: round(native[k] / wasm[k], 2)
print(json.dumps({"native": native, "wasm": wasm,
                  "ratio_cpu": ratio("cpu_entries_per_s"), "ratio_wall": ratio("wall_entries_per_s")}))
PY
