#!/usr/bin/env bash
# Regenerates app/assets/example.pickle, the snapshot the viewer's "Open the example" button
# opens, with `capture` and the built-in `example` scenario (capture/scenarios/example.toml):
# a small training run on a simulated 24 GB device with changing sequence lengths, a pinning
# cache block in the middle of a segment, gradient buckets pending on a comm stream, and a
# trace whose frames name the scenario's steps. The run is deterministic (seed 0), so the
# file only changes when the scenario or the allocator model does; capture's test
# example_asset.rs fails when the committed file is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet -p memsnap-capture --bin capture -- \
    --scenario example --seed 0 --quiet -o app/assets/example.pickle
echo "wrote app/assets/example.pickle ($(wc -c < app/assets/example.pickle) bytes)"
