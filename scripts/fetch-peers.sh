#!/usr/bin/env bash
# Fetches the benchmark peers into target/peers/ (never committed), once:
#   target/peers/_memory_viz.py   torch/cuda/_memory_viz.py from the torch wheel on PyPI.
# The wheel is cached in target/peers/wheel/ so a rerun downloads nothing. _memory_viz.py is
# pure Python and the same file in every platform's wheel, so the small macOS arm64 wheel
# (~80 MB) is fetched rather than the ~900 MB Linux one; TORCH_WHEEL_PLATFORM=any fetches
# the default wheel for this machine instead. Only that one file is unpacked.
# It imports no torch at module level, and its `stats`/`trace` paths use only pickle and the
# standard library, so it runs with plain python3 (checked by running it below).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peers="$root/target/peers"
mkdir -p "$peers/wheel"

if ! ls "$peers"/wheel/torch-*.whl >/dev/null 2>&1; then
    platform="${TORCH_WHEEL_PLATFORM:-macosx_11_0_arm64}"
    echo "fetch-peers: downloading the torch wheel ($platform) into $peers/wheel"
    if [[ "$platform" == any ]]; then
        python3 -m pip download --no-deps torch -d "$peers/wheel"
    else
        pyver="$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
        python3 -m pip download --no-deps --only-binary=:all: --platform "$platform" \
            --python-version "$pyver" torch -d "$peers/wheel"
    fi
fi
wheel="$(ls "$peers"/wheel/torch-*.whl | head -n 1)"
if [[ ! -s "$peers/_memory_viz.py" || "$wheel" -nt "$peers/_memory_viz.py" ]]; then
    python3 - "$wheel" "$peers/_memory_viz.py" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    data = z.read("torch/cuda/_memory_viz.py")
with open(sys.argv[2], "wb") as f:
    f.write(data)
PY
    echo "fetch-peers: $peers/_memory_viz.py from $(basename "$wheel")"
fi
# Runs without torch installed (fails here, not in the middle of the benchmark, if not).
python3 "$peers/_memory_viz.py" --help >/dev/null
