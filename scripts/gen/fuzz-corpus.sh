#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ (git-ignored) with seeds: the committed fuzz/seeds/, the malformed
# table's inputs, the capture scenarios, and the real fixtures up to 256 KiB (copied at run time,
# never committed; larger ones only slow each fuzz iteration down).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
fixtures="${MEMSNAP_REAL_FIXTURES:-$root/../shared/fixtures/real}"

snap="$root/fuzz/corpus/read_snapshot"
scen="$root/fuzz/corpus/scenario"
mkdir -p "$snap" "$scen"

cp -f "$root"/fuzz/seeds/read_snapshot/* "$snap"/ 2>/dev/null || true
cp -f "$root"/tests/malformed/*.pickle "$snap"/ 2>/dev/null || true
if [ -d "$fixtures" ]; then
    find "$fixtures" -maxdepth 1 -type f \( -name '*.pickle' -o -name '*.pkl' \) -size -257k \
        -exec cp -f {} "$snap"/ \;
else
    echo "WARNING: real fixtures not found at $fixtures, seeding read_snapshot without them" >&2
fi

# replay_state takes snapshots too: the same seeds.
replay="$root/fuzz/corpus/replay_state"
mkdir -p "$replay"
cp -f "$snap"/* "$replay"/

cp -f "$root"/fuzz/seeds/scenario/* "$scen"/ 2>/dev/null || true
cp -f "$root"/capture/scenarios/*.toml "$scen"/

echo "read_snapshot: $(ls "$snap" | wc -l) seeds; replay_state: $(ls "$replay" | wc -l); scenario: $(ls "$scen" | wc -l)"
