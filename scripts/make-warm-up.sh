#!/usr/bin/env bash
# Regenerates app/assets/warm-up.pickle, the input the viewer's worker parses and indexes while
# the user picks a file (app/src/worker/warm_up.rs), so that V8 has optimised the code a real
# file runs before one arrives. A `capture` run of the varying-seqlen scenario, cut to its first
# 3,000 trace entries and pickled again by CPython: PyTorch's files are CPython pickles, whose
# opcodes (every container memoised, LONG_BINGET past 256 memo entries) differ from those
# memsnap's own writer emits, and a warm-up on the writer's opcodes left the first real file's
# parse at twice its warm time. Only its shape matters: it is never shown.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
cargo run --quiet -p memsnap-capture --bin capture -- \
    --scenario varying-seqlen --seed 0 --quiet -o "$tmp"
python3 - "$tmp" app/assets/warm-up.pickle <<'PY'
import pickle, sys
with open(sys.argv[1], "rb") as f:
    snap = pickle.load(f)
snap["device_traces"] = [t[:3000] for t in snap["device_traces"]]
with open(sys.argv[2], "wb") as f:
    pickle.dump(snap, f, protocol=4)
PY
echo "wrote app/assets/warm-up.pickle ($(wc -c < app/assets/warm-up.pickle) bytes)"
