#!/usr/bin/env bash
# Installs what building and testing memsnap needs, skipping what is already there:
#   - the wasm32-unknown-unknown target (rustup)
#   - trunk 0.21 (cargo install; 0.22 needs a newer rustc than 1.95... and prebuilt downloads
#     are not used so this works with only crates.io reachable)
#   - wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock (they must match)
#   - inferno (cargo install), which renders `memsnap flame` output in a test
#   - Debian's chromium and chromium-driver, for the page tests (apt-get, as root)
# Safe to run again; prints one line per tool.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }

if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "wasm32-unknown-unknown target: present"
else
    say "adding the wasm32-unknown-unknown target"
    rustup target add wasm32-unknown-unknown
fi

export PATH="$HOME/.cargo/bin:$PATH"

if trunk --version 2>/dev/null | grep -q '^trunk 0\.21\.'; then
    say "trunk: $(trunk --version)"
else
    say "installing trunk 0.21 (cargo install, several minutes)"
    cargo install --locked trunk --version '~0.21'
fi

# The CLI must be the exact version the app links (wasm-bindgen checks this at build time).
bindgen=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$bindgen" ]; then
    echo "[setup] error: no wasm-bindgen in Cargo.lock" >&2
    exit 1
fi
if wasm-bindgen --version 2>/dev/null | grep -q "^wasm-bindgen $bindgen\$"; then
    say "wasm-bindgen-cli: $bindgen present"
else
    say "installing wasm-bindgen-cli $bindgen (cargo install, a few minutes)"
    # Its lockfile can name a dependency version a registry mirror lacks (webpki-roots 1.0.11
    # here); then resolve afresh, still at the exact CLI version.
    cargo install --locked wasm-bindgen-cli --version "=$bindgen" ||
        cargo install wasm-bindgen-cli --version "=$bindgen"
fi

# inferno renders `memsnap flame`'s folded stacks in tests/tests/cli_analyses.rs (a real
# consumer of the format, not a parser of our own).
if command -v inferno-flamegraph >/dev/null; then
    say "inferno: present"
else
    say "installing inferno (cargo install, about two minutes)"
    cargo install --locked inferno
fi

if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then
    say "chromium: $(chromium --version 2>/dev/null | head -n1); chromedriver present"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing chromium and chromium-driver (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
else
    say "WARNING: chromium/chromedriver missing and not root: the page tests will be skipped"
fi

# DuckDB reads `memsnap export --parquet` datasets back in capture/tests/export_parquet.rs.
if python3 -c 'import duckdb' 2>/dev/null; then
    say "python duckdb: $(python3 -c 'import duckdb; print(duckdb.__version__)')"
elif command -v python3 >/dev/null; then
    say "installing the duckdb python package (pip)"
    python3 -m pip install --quiet duckdb ||
        python3 -m pip install --quiet --break-system-packages duckdb ||
        say "WARNING: pip could not install duckdb: the DuckDB checks of the export test will be skipped"
else
    say "WARNING: python3 missing: the DuckDB checks of the export test will be skipped"
fi

# The Python package's tests (tests/python/) build the wheel with maturin and run a notebook
# headless with nbclient (ipykernel is its kernel).
for pkg in maturin nbclient nbformat ipykernel; do
    mod=$pkg
    if python3 -c "import $mod" 2>/dev/null; then
        say "python $pkg: present"
    else
        say "installing the $pkg python package (pip)"
        python3 -m pip install --quiet "$pkg" ||
            python3 -m pip install --quiet --break-system-packages "$pkg" ||
            say "WARNING: pip could not install $pkg: the Python package tests will be skipped"
    fi
done
say "done"
