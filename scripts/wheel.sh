#!/usr/bin/env bash
# Builds the Python wheel (python/: PyO3 module + the `memsnap` package) into target/wheels/,
# with the viewer Trunk built (dist/) inside it for `memsnap html` and `memsnap.show`.
#   scripts/wheel.sh            release build (what you would pip install)
#   scripts/wheel.sh --dev      the test run's: the dev profile, sharing the workspace's build
# Needs maturin (pip install maturin) and a built dist/ (trunk build --release --offline).
set -euo pipefail
cd "$(dirname "$0")/.."
profile=(--release)
if [ "${1:-}" = "--dev" ]; then
    profile=(--profile dev)
fi
if [ ! -f dist/index.html ]; then
    echo "[wheel] error: dist/ has no viewer build: run trunk build --release --offline first" >&2
    exit 1
fi
rm -rf python/memsnap/viewer
mkdir -p python/memsnap/viewer
# Only what the report inlines or a server serves: not the example snapshot.
find dist -maxdepth 1 -type f ! -name '*.pickle' ! -name '*.gz' -exec cp {} python/memsnap/viewer/ \;
rm -f target/wheels/memsnap-*.whl
python3 -m maturin build "${profile[@]}" --strip --quiet -m python/Cargo.toml -o target/wheels
ls target/wheels/memsnap-*.whl
