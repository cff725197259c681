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
root="$(cd "$(dirname "$0")/../.." && pwd)"
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

# MemoryViz.js, the viewer at pytorch.org/memory_viz, for the page bench
# (tests/src/web/memoryviz.rs). It is in no package, so it is not fetched: set
# MEMSNAP_MEMORYVIZ_JS to a copy of torch/utils/viz/MemoryViz.js from PyTorch's repository (a
# version that imports d3 7). Its d3 comes from the npm registry (`npm pack`, the version its
# import asks for) and the page maps its CDN imports onto that copy with an import map, so
# MemoryViz.js runs unchanged and nothing is fetched at bench time. Written to
# target/peers/memoryviz/.
if [[ -n "${MEMSNAP_MEMORYVIZ_JS:-}" ]]; then
    mv_src="$MEMSNAP_MEMORYVIZ_JS"
    mv_dir="$peers/memoryviz"
    [[ -s "$mv_src" ]] || { echo "fetch-peers: MEMSNAP_MEMORYVIZ_JS=$mv_src: no such file" >&2; exit 1; }
    command -v npm >/dev/null && command -v node >/dev/null \
        || { echo "fetch-peers: MemoryViz.js needs node and npm (for d3)" >&2; exit 1; }
    # Newer versions import a module of their own from beside them.
    mapfile -t locals < <(grep -oE "from ['\"]\./[^'\"]+['\"]" "$mv_src" | sed -E "s/^from ['\"]\.\///; s/['\"]$//" | sort -u)
    sources=("$mv_src")
    for local in "${locals[@]}"; do
        [[ -s "$(dirname "$mv_src")/$local" ]] \
            || { echo "fetch-peers: $mv_src imports ./$local; put it beside it" >&2; exit 1; }
        sources+=("$(dirname "$mv_src")/$local")
    done
    # Their imports: every one must be a d3 7 module from a CDN (d3 5's versions read `d3.event`,
    # which d3 7 no longer has, so they would fail on the first hover, not at load).
    mapfile -t urls < <(grep -ohE "from ['\"]https?://[^'\"]+['\"]" "${sources[@]}" | sed -E "s/^from ['\"]//; s/['\"]$//" | sort -u)
    [[ ${#urls[@]} -gt 0 ]] || { echo "fetch-peers: $mv_src imports nothing from a CDN: not MemoryViz.js?" >&2; exit 1; }
    d3_version=""
    for u in "${urls[@]}"; do
        case "$u" in
            */d3@7*) d3_version="$(sed -E 's#.*/d3@([0-9.]+).*#\1#' <<<"$u")" ;;
            */d3-axis@3*|*/d3-scale@4*|*/d3-zoom@3*|*/d3-brush@3*|*/d3-scale-chromatic@3*) ;;
            *) echo "fetch-peers: $mv_src imports $u; the bench runs versions that import d3 7 only" >&2; exit 1 ;;
        esac
    done
    [[ -n "$d3_version" ]] || { echo "fetch-peers: $mv_src does not import d3 7 itself" >&2; exit 1; }
    mkdir -p "$mv_dir"
    if [[ ! -s "$mv_dir/d3.min.js" || "$(cat "$mv_dir/d3.version" 2>/dev/null)" != "$d3_version" ]]; then
        tmp="$(mktemp -d)"
        (cd "$tmp" && npm pack --silent "d3@$d3_version" >/dev/null && tar xzf d3-*.tgz)
        cp "$tmp/package/dist/d3.min.js" "$mv_dir/d3.min.js"
        (cd "$tmp" && node -p 'require("./package/package.json").version') > "$mv_dir/d3.version.full"
        echo "$d3_version" > "$mv_dir/d3.version"
        rm -rf "$tmp"
        echo "fetch-peers: d3 $(cat "$mv_dir/d3.version.full") into $mv_dir"
    fi
    # d3's UMD bundle sets globalThis.d3; this module re-exports its names for the imports.
    cp "$mv_dir/d3.min.js" "$mv_dir/d3.cjs"
    names="$(node -e 'console.log(Object.keys(require(process.argv[1])).join(", "))' "$mv_dir/d3.cjs")"
    rm "$mv_dir/d3.cjs"
    printf 'import "./d3.min.js";\nexport const { %s } = globalThis.d3;\n' "$names" > "$mv_dir/d3.mjs"
    cp "$mv_src" "$mv_dir/MemoryViz.js"
    for local in "${locals[@]}"; do
        cp "$(dirname "$mv_src")/$local" "$mv_dir/$local"
    done
    map="$(for u in "${urls[@]}"; do printf '"%s": "./d3.mjs",' "$u"; done)"
    cat > "$mv_dir/index.html" <<HTML
<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>MemoryViz.js (peer)</title>
<script type="importmap">{"imports": {${map%,}}}</script>
</head>
<body><script type="module" src="./MemoryViz.js"></script></body>
</html>
HTML
    # Which copy was measured, for the bench's report.
    echo "MemoryViz.js sha256 $(sha256sum "$mv_src" | cut -d' ' -f1), d3 $(cat "$mv_dir/d3.version.full")" > "$mv_dir/SOURCE"
    echo "fetch-peers: $(cat "$mv_dir/SOURCE"), in $mv_dir"
fi
