//! MemoryViz.js, PyTorch's own viewer (pytorch.org/memory_viz), measured in the page bench's
//! browser beside memsnap (issue 15): the same files through its own file input, with the same
//! clock (from the input's change event to the animation frame after the first complete view)
//! and the same memory figure (its JS heap; it has no wasm and no worker).
//!
//! It is in no package: scripts/bench/fetch-peers.sh prepares target/peers/memoryviz/ from a copy the
//! user names (`MEMSNAP_MEMORYVIZ_JS`), with d3 from the npm registry. Without it the bench
//! says so and measures memsnap alone.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use serde_json::{json, Value};

/// target/peers/memoryviz/, when scripts/bench/fetch-peers.sh has prepared it.
pub fn peer_dir(workspace: &Path) -> Option<PathBuf> {
    let dir = workspace.join("target/peers/memoryviz");
    if dir.join("index.html").is_file() && dir.join("MemoryViz.js").is_file() {
        return Some(dir);
    }
    eprintln!(
        "page_bench: MemoryViz.js is not set up in {}, so it is not measured; to measure it: \
         MEMSNAP_MEMORYVIZ_JS=<a copy of torch/utils/viz/MemoryViz.js> scripts/bench/fetch-peers.sh",
        dir.display()
    );
    None
}

/// Which copy of MemoryViz.js (its sha256) and which d3 scripts/bench/fetch-peers.sh set up.
pub fn source(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("SOURCE"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown (no SOURCE file)".to_string())
}

/// Records, in the page, the time of each file input's change event (a capturing listener,
/// before the viewer's own), the animation frame after the pick's view is in the document (a
/// view is complete when it has added its plot's polygons: MemoryViz.js builds a view in one
/// task, after reading the file), and any uncaught error. Its `console.log` of the whole
/// snapshot is made a no-op: under WebDriver the browser's inspector is attached and would
/// build a preview of it, which a user's browser without DevTools open does not.
const HOOKS: &str = r#"
console.log = () => {};
const mv = window.__mv = {t0: null, t1: null, err: null, before: 0, waiting: false};
const polygons = () => document.getElementsByTagName('polygon').length;
window.addEventListener('change', (e) => {
  if (e.target.type !== 'file') return;
  mv.t0 = performance.now(); mv.t1 = null; mv.err = null; mv.before = polygons(); mv.waiting = false;
}, true);
window.addEventListener('error', (e) => { mv.err = String(e.message || e.error); });
window.addEventListener('unhandledrejection', (e) => { mv.err = String(e.reason); });
new MutationObserver(() => {
  if (mv.t0 === null || mv.t1 !== null || mv.waiting || polygons() <= mv.before) return;
  mv.waiting = true;
  requestAnimationFrame(() => { mv.t1 = performance.now(); });
}).observe(document.body, {childList: true, subtree: true});
"#;

/// The pick's milliseconds to its first complete view, or what went wrong.
async fn wait_view(c: &Client, timeout: Duration) -> Result<f64, String> {
    let start = Instant::now();
    loop {
        let v = c
            .execute("const m = window.__mv; return [m.t0, m.t1, m.err];", vec![])
            .await
            .map_err(|e| format!("the tab stopped answering: {e}"))?;
        if let Some(err) = v[2].as_str() {
            return Err(err.to_string());
        }
        if let (Some(t0), Some(t1)) = (v[0].as_f64(), v[1].as_f64()) {
            return Ok(t1 - t0);
        }
        if start.elapsed() > timeout {
            return Err(format!("no view after {timeout:?}"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn js_heap(c: &Client) -> u64 {
    c.execute("return performance.memory.usedJSHeapSize;", vec![])
        .await
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0) as u64
}

/// Opens `path` in MemoryViz.js (served at `url`) `runs` times in one fresh page, as the bench
/// opens it in memsnap: the first open is the page's first, the later ones warm. Its JS heap is
/// read after the first open (it keeps every file it opened, so later opens add to it), and
/// again after a forced garbage collection. The caller takes the later opens' median.
pub async fn bench_file(
    c: &Client,
    url: &str,
    path: &Path,
    runs: usize,
    timeout: Duration,
) -> Value {
    if let Err(e) = c.goto(url).await {
        return json!({ "outcome": "failed", "message": format!("opening its page: {e}") });
    }
    // Its input, once its module (and d3, through the import map) has loaded; a set-up that
    // does not load is this file's failure, not the whole bench's.
    let input = match c
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("input[type=file]"))
        .await
    {
        Ok(input) => input,
        Err(e) => {
            let message = format!("its page showed no file input within 30 s: {e}");
            return json!({ "outcome": "failed", "message": message });
        }
    };
    if let Err(e) = c.execute(HOOKS, vec![]).await {
        return json!({ "outcome": "failed", "message": format!("installing the clock: {e}") });
    }
    // As for memsnap: a person takes longer than this to pick a file.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let absolute =
        std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut rec = json!({});
    let mut paints = Vec::new();
    for run in 0..runs {
        if let Err(e) = input.send_keys(&absolute.to_string_lossy()).await {
            rec["outcome"] = json!("failed");
            rec["message"] = json!(format!("picking the file: {e}"));
            return rec;
        }
        match wait_view(c, timeout).await {
            Ok(ms) => paints.push(ms),
            Err(message) => {
                rec["outcome"] = json!("failed");
                rec["message"] = json!(message);
                break;
            }
        }
        if run == 0 {
            rec["outcome"] = json!("opened");
            rec["js_heap"] = json!(js_heap(c).await);
            if super::cdp::collect_garbage(c).await.is_ok() {
                rec["js_heap_settled"] = json!(js_heap(c).await);
                // The file's bytes and anything else held in ArrayBuffers, as memsnap's are
                // counted.
                if let Some(h) = super::cdp::heap_usage(c).await {
                    rec["backing"] = json!(h.backing);
                }
            }
        }
    }
    rec["first_paint_runs_ms"] = json!(paints);
    if let Some(first) = paints.first() {
        rec["load_to_first_paint_ms"] = json!(first);
    }
    rec
}
