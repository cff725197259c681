#!/usr/bin/env bash
# Everything CI checks, in order: setup, format, lints (native and wasm), the API docs, the site
# build, then all tests, the headless-Chromium page tests included (run against the dist/ built here).
# Usage: scripts/test.sh        (from anywhere; honours CARGO_TARGET_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$HOME/.cargo/bin:$PATH"
started=$(date +%s)

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

step "tests: cargo test --workspace (page tests use MEMSNAP_DIST=$root/dist)"
MEMSNAP_DIST="$root/dist" cargo test --workspace

step "all checks passed in $(( $(date +%s) - started ))s; screenshots in target/screenshots/"
