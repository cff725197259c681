#!/usr/bin/env bash
# Everything CI checks, in order: setup, format, lints (native and wasm), the API docs, the site
# build, the Python wheel and its tests, then all tests, the headless-Chromium page tests included
# (run against the dist/ built here).
# Usage: scripts/test.sh        (from anywhere; honours CARGO_TARGET_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$HOME/.cargo/bin:$PATH"
started=$(date +%s)
# The run builds each crate once: rustc's incremental caches (1.6 GB on a fresh clone) would
# only be read by a later build, so they are off unless the caller asks for them.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

step() { printf '\n==> [%ss] %s\n' "$(( $(date +%s) - started ))" "$*"; }

step "setup: scripts/setup.sh"
scripts/setup.sh

step "format: cargo fmt --all --check"
cargo fmt --all --check

step "lint: cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

# The page and worker code only exists for wasm32, so lint it there too.
step "lint (wasm): cargo clippy -p memsnap-app --target wasm32-unknown-unknown -- -D warnings"
cargo clippy -p memsnap-app --target wasm32-unknown-unknown -- -D warnings

# Broken or private intra-doc links fail here, not in a reader's browser.
step "docs: cargo doc --workspace --no-deps (RUSTDOCFLAGS=-D warnings)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

step "site: trunk build --release --offline (into dist/)"
trunk build --release --offline

# The wheel as a user installs it: built from this checkout (the dev profile shares the build
# above), into a venv of its own; system packages stay visible for nbclient and ipykernel.
step "python: scripts/wheel.sh --dev, installed into a fresh target/py-venv"
scripts/wheel.sh --dev
python3 -m venv --clear --system-site-packages target/py-venv
target/py-venv/bin/python -m pip install --quiet --no-index --no-deps target/wheels/memsnap-*.whl

step "python: the package's tests (tests/python/) from that venv"
target/py-venv/bin/python -m unittest discover -s tests/python -v

# The CLI and page tests run `memsnap` and `capture`. Asked for them alone (`cargo build -p
# memsnap-capture`), cargo resolves other features (getrandom, bitflags, either ...: what the
# workspace's dev-dependencies turn on) and builds arrow, parquet, core and capture a second
# time. So they are built here with everything else and named to the tests.
step "tests: cargo test --workspace --no-run (memsnap and capture built with the workspace's features)"
cargo test --workspace --no-run
bin="$(cd "${CARGO_TARGET_DIR:-$root/target}" && pwd)/debug"

step "tests: cargo test --workspace (page tests use MEMSNAP_DIST=$root/dist)"
MEMSNAP_DIST="$root/dist" MEMSNAP_VENV_PYTHON="$root/target/py-venv/bin/python" \
    MEMSNAP_BIN="$bin/memsnap" CAPTURE_BIN="$bin/capture" \
    cargo test --workspace

step "all checks passed in $(( $(date +%s) - started ))s; screenshots in target/screenshots/"
