#!/usr/bin/env bash
# Builds the viewer and serves it on http://127.0.0.1:${PORT:-8080}/ with the bundled example.
# Usage: scripts/serve.sh    (Ctrl-C stops it)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
scripts/setup.sh
port=${PORT:-8080}
echo
echo "memsnap: building, then serving. Open:"
echo "    http://127.0.0.1:$port/?url=example.pickle    (the bundled example)"
echo "    http://127.0.0.1:$port/                       (pick or drop your own snapshot)"
echo
exec trunk serve --release --offline --port "$port"
