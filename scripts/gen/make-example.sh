#!/usr/bin/env bash
# Regenerates app/assets/example.pickle, the snapshot the viewer's "Open the example" button
# opens, with `capture` and the built-in `oom` scenario (capture/scenarios/oom.toml): a job
# whose batches alternate between 1.5 GB and 1.8 GB until one fails with 8 GB reserved and no
# 2 GB hole, so the page opens on the OOM panel, the holes at the failure, and the replays
# that show expandable segments avoiding it. The run is deterministic (seed 0), so the
# file only changes when the scenario or the allocator model does; capture's test
# example_asset.rs fails when the committed file is stale.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo run --quiet -p memsnap-capture --bin capture -- \
    --scenario oom --seed 0 --quiet -o app/assets/example.pickle
echo "wrote app/assets/example.pickle ($(wc -c < app/assets/example.pickle) bytes)"
