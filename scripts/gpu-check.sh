#!/usr/bin/env bash
# GPU check of `capture --cuda` (needs an NVIDIA GPU and driver; takes well under 5 minutes).
#
# Runs every built-in scenario on the real device, writes each snapshot and its summary to
# $OUT (default target/gpu-check), checks that each opens with `memsnap stats --json`, that
# the snapshots carry device data (stream 0 segments, expandable ranges from cuMemMap), and
# that expandable segments really cut reserved memory on `churn` (reserved with and without
# --set expandable_segments=true). Exits non-zero on any failure; prints a table at the end.
#
# Binaries: $BIN_DIR/capture and $BIN_DIR/memsnap when BIN_DIR is set, else built here with
# cargo. A device machine with no network cannot build: build and strip on a CPU machine,
#   cargo build -p memsnap-capture --bins
#   mkdir -p gpu-bin && cp "$CARGO_TARGET_DIR"/debug/{capture,memsnap} gpu-bin/ && strip gpu-bin/*
# then run there: BIN_DIR=gpu-bin bash scripts/gpu-check.sh   (gpu-bin/ travels as an
# untracked folder, about 12 MB stripped).
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-target/gpu-check}
DEVICE=${DEVICE:-0}
mkdir -p "$OUT"
if [ -n "${BIN_DIR:-}" ]; then
    CAPTURE="$BIN_DIR/capture"
    MEMSNAP="$BIN_DIR/memsnap"
else
    TARGET=${CARGO_TARGET_DIR:-target}
    cargo build --quiet -p memsnap-capture --bins || { echo "gpu-check: build failed"; exit 1; }
    CAPTURE="$TARGET/debug/capture"
    MEMSNAP="$TARGET/debug/memsnap"
fi
for b in "$CAPTURE" "$MEMSNAP"; do
    [ -x "$b" ] || { echo "gpu-check: $b not found"; exit 1; }
done
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Runs one capture; $1 = label, rest = capture arguments. Leaves $OUT/$1.pickle,
# $OUT/$1.summary.txt (capture's stderr) and $OUT/$1.stats.json.
run() {
    local label=$1
    shift
    local start=$SECONDS
    if ! timeout 120 "$CAPTURE" --cuda --device "$DEVICE" "$@" -o "$OUT/$label.pickle" \
        2>"$OUT/$label.summary.txt"; then
        fail "$label: capture exited non-zero: $(tail -3 "$OUT/$label.summary.txt")"
        return 1
    fi
    if ! "$MEMSNAP" stats --json "$OUT/$label.pickle" >"$OUT/$label.stats.json" 2>"$OUT/$label.stats.err"; then
        fail "$label: memsnap stats could not read it: $(cat "$OUT/$label.stats.err")"
        return 1
    fi
    echo "ok   $label ($((SECONDS - start)) s)"
}

json() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$2)" "$1"; }

for s in churn varying-seqlen fixed-shape multi-stream pinning kv-cache example; do
    run "$s" --scenario "$s"
done
run churn-expandable --scenario churn --set expandable_segments=true

# Expandable segments must cut churn's reserved memory (simulated: 30 GiB vs 3 GiB).
if [ -s "$OUT/churn.stats.json" ] && [ -s "$OUT/churn-expandable.stats.json" ]; then
    plain=$(json "$OUT/churn.stats.json" "['reserved_bytes']")
    exp=$(json "$OUT/churn-expandable.stats.json" "['reserved_bytes']")
    echo "churn reserved: $plain bytes plain, $exp bytes with expandable segments"
    if [ "$exp" -le 0 ] || [ $((plain / exp)) -lt 4 ]; then
        fail "expandable segments did not cut churn's reserved memory 4x ($plain vs $exp)"
    fi
    # The expandable run really mapped memory (segment_map entries, expandable segments).
    maps=$(json "$OUT/churn-expandable.stats.json" ".get('actions', {}).get('segment_map', 0)")
    [ "$maps" -gt 0 ] || fail "churn-expandable has no segment_map entries"
    python3 - "$OUT/churn-expandable.pickle" <<'PY' || fail "churn-expandable segments are not expandable"
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
assert d["segments"] and all(s["is_expandable"] for s in d["segments"]), "not expandable"
PY
fi

# multi-stream: the side streams are real CUstreams (raw pointers, not the simulation's ids).
if [ -s "$OUT/multi-stream.pickle" ]; then
    python3 - "$OUT/multi-stream.pickle" <<'PY' || fail "multi-stream: streams look simulated"
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
streams = {e["stream"] for e in d["device_traces"][0] if e["action"] == "alloc"}
assert 0 in streams and len(streams) >= 2, streams
sim_base = 0x55D04A000000
assert all(s == 0 or not (sim_base <= s < sim_base + 0x100000) for s in streams), streams
print("multi-stream streams:", sorted(hex(s) for s in streams))
PY
fi

# memsnap.torch.record (the Python package): an OOM forced under the context manager must
# dump the snapshot, print `memsnap oom`'s explanation to stderr, and `memsnap oom` must explain
# the file. Needs torch with CUDA on this machine and the wheel: WHEEL=path/to/memsnap-*.whl
# (scripts/wheel.sh builds it), installed here into a venv that sees the system's torch.
if [ -n "${WHEEL:-}" ] && python3 -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
    python3 -m venv --clear --system-site-packages "$OUT/venv" &&
        "$OUT/venv/bin/python" -m pip install --quiet --no-index --no-deps "$WHEEL" ||
        fail "record: could not install $WHEEL"
    if timeout 180 "$OUT/venv/bin/python" - "$OUT/record-oom.pickle" "$DEVICE" \
        >"$OUT/record.summary.txt" 2>"$OUT/record.stderr" <<'PY'; then
import sys, torch, memsnap.torch
path, dev = sys.argv[1], int(sys.argv[2])
torch.cuda.set_device(dev)
free, total = torch.cuda.mem_get_info()
keep = []
try:
    with memsnap.torch.record(path, max_entries=10_000) as rec:
        keep.append(torch.empty(64 << 20, dtype=torch.uint8, device="cuda"))
        keep.append(torch.empty(total * 2, dtype=torch.uint8, device="cuda"))  # cannot fit
except torch.cuda.OutOfMemoryError:
    pass
assert rec.oom_dumped, "the OOM observer did not dump"
print("record: dumped", path, "explanation lines:", len(rec.explanation.splitlines()))
PY
        grep -q "memsnap: out of memory on cuda:" "$OUT/record.stderr" ||
            fail "record: no explanation on stderr: $(tail -3 "$OUT/record.stderr")"
        if "$MEMSNAP" oom --json "$OUT/record-oom.pickle" >"$OUT/record-oom.json" 2>&1 &&
            [ "$(json "$OUT/record-oom.json" "[0]['requested'] > 0")" = True ]; then
            echo "ok   record (OOM dumped and explained)"
        else
            fail "record: memsnap oom could not explain $OUT/record-oom.pickle: $(head -c 300 "$OUT/record-oom.json")"
        fi
    else
        fail "record: the forced OOM run failed: $(tail -5 "$OUT/record.stderr")"
    fi
else
    echo "SKIP record: needs WHEEL=memsnap-*.whl and torch with CUDA on this machine"
fi

{
    echo "gpu-check on device $DEVICE, $(date -u)"
    for f in "$OUT"/*.summary.txt; do
        echo "== $(basename "$f" .summary.txt)"
        cat "$f"
    done
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
if [ "$failures" -gt 0 ]; then
    echo "gpu-check: $failures failure(s)"
    exit 1
fi
echo "gpu-check: all passed (snapshots in $OUT)"
