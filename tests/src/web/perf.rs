//! Reading the page's own measurements (app/src/perf.rs) for the page benchmark
//! (tests/tests/page_bench.rs): the worker's timings and memory in the hidden `perf` element,
//! `performance` measures, the page's wasm memory and JS heap, and scripted zoom and pan.

use std::time::{Duration, Instant};

use fantoccini::Client;
use serde_json::{json, Value};

use super::page::{self, testid};

/// What the worker reported for the file it opened last.
#[derive(Debug, Clone, Copy)]
pub struct WorkerFigures {
    pub read_ms: f64,
    pub parse_ms: f64,
    pub index_ms: f64,
    pub worker_memory: u64,
}

/// How an open ended.
#[derive(Debug)]
pub enum Outcome {
    Opened(WorkerFigures),
    Refused(String),
    /// The tab or the worker died, or nothing came within the time allowed (the message says).
    Crashed(String),
}

async fn num(c: &Client, name: &str) -> Result<f64, String> {
    let v = page::attr(c, "perf", name).await?;
    v.parse().map_err(|e| format!("perf {name}={v:?}: {e}"))
}

/// How many opens the worker has answered (`memsnap:request:OpenFile` measures): a pick
/// answered shows as one more, even when it opens the same file again.
pub async fn opens_answered(c: &Client) -> u64 {
    c.execute(
        "return performance.getEntriesByName('memsnap:request:OpenFile').length;",
        vec![],
    )
    .await
    .ok()
    .and_then(|v| v.as_u64())
    .unwrap_or(0)
}

/// Waits until the page shows `name` (of `size` bytes) open after more than `answered` opens,
/// or an error naming it.
pub async fn wait_open(
    c: &Client,
    name: &str,
    size: u64,
    answered: u64,
    timeout: Duration,
) -> Outcome {
    let start = Instant::now();
    loop {
        let opened = async {
            if opens_answered(c).await <= answered
                || page::text(c, "file-name").await? != name
                || page::attr(c, "perf", "data-size").await? != size.to_string()
            {
                return Err("not yet".to_string());
            }
            Ok(WorkerFigures {
                read_ms: num(c, "data-read-ms").await?,
                parse_ms: num(c, "data-parse-ms").await?,
                index_ms: num(c, "data-index-ms").await?,
                worker_memory: num(c, "data-worker-memory").await? as u64,
            })
        }
        .await;
        if let Ok(f) = opened {
            return Outcome::Opened(f);
        }
        match page::text(c, "load-error").await {
            Ok(e) if e.contains(name) && opens_answered(c).await > answered => {
                return Outcome::Refused(e)
            }
            Ok(e) if e.contains("worker") => return Outcome::Crashed(e),
            _ => {}
        }
        // A crashed tab answers every command with an error; the file name is a cheap probe.
        if let Err(e) = c.execute("return document.title", vec![]).await {
            return Outcome::Crashed(format!("the tab stopped answering: {e}"));
        }
        if start.elapsed() > timeout {
            return Outcome::Crashed(format!("nothing after {timeout:?}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Milliseconds of the last `memsnap:load-to-first-paint` measure (waits for it).
pub async fn load_to_first_paint(c: &Client, timeout: Duration) -> Option<f64> {
    let start = Instant::now();
    loop {
        let v = c
            .execute(
                "const m = performance.getEntriesByName('memsnap:load-to-first-paint'); \
                 return m.length ? m[m.length - 1].duration : null;",
                vec![],
            )
            .await
            .ok()?;
        if let Some(ms) = v.as_f64() {
            return Some(ms);
        }
        if start.elapsed() > timeout {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The worker requests answered since the last file was chosen, in order: `[kind, start ms
/// after the choice, ms to the answer]` (a profile of what stands before the first paint).
pub async fn requests_since_chosen(c: &Client) -> Value {
    c.execute(
        "const m = performance.getEntriesByName('memsnap:file-chosen');          const t0 = m.length ? m[m.length - 1].startTime : 0;          return performance.getEntriesByType('measure')            .filter(e => e.name.startsWith('memsnap:request:') && e.startTime >= t0)            .map(e => [e.name.slice(16), Math.round(e.startTime - t0), Math.round(e.duration)]);",
        vec![],
    )
    .await
    .unwrap_or(Value::Null)
}

/// How many `kind` requests the page sent since the last file was chosen (since it loaded,
/// for a `?url=` open): one count over `requests_since_chosen`.
pub async fn requests_of_kind_since_chosen(c: &Client, kind: &str) -> usize {
    let requests = requests_since_chosen(c).await;
    let Some(requests) = requests.as_array() else {
        panic!("the page's request measures did not read: {requests}");
    };
    requests.iter().filter(|e| e[0] == kind).count()
}

/// The page's rehearsal of its warm-up file (app/src/rehearsal.rs), once it has ended: its
/// duration in ms (the `memsnap:rehearsal` measure).
pub async fn rehearsal_ms(c: &Client) -> f64 {
    page::wait_until("the rehearsal to end", || async {
        let script = "const m = performance.getEntriesByName('memsnap:rehearsal'); \
                      return m.length ? m[0].duration : null;";
        match c.execute(script, vec![]).await.map_err(|e| e.to_string())? {
            Value::Number(n) => Ok(n.as_f64().unwrap_or(f64::NAN)),
            other => Err(format!("{other}")),
        }
    })
    .await
}

/// The page's wasm memory and used JS heap, in bytes.
pub async fn page_memory(c: &Client) -> (u64, u64) {
    let v = c
        .execute(
            "return [window.wasmBindings ? window.wasmBindings.memsnap_wasm_memory_bytes() : 0, \
             performance.memory ? performance.memory.usedJSHeapSize : 0];",
            vec![],
        )
        .await
        .unwrap_or(Value::Null);
    (
        v[0].as_f64().unwrap_or(0.0) as u64,
        v[1].as_f64().unwrap_or(0.0) as u64,
    )
}

/// Zooms (wheel) and pans (drag) the timeline, step by step, then in a burst of one event per
/// animation frame. Returns the script's JSON: per-step latency from the event to the canvas
/// showing the new range (`zoom_ms`, `pan_ms`), the canvas work per redraw (`draw_ms`), the
/// worker round trip per request (`request_ms`), and the frame intervals during the burst
/// (`burst_frame_ms`) with the time until the burst's last range is drawn (`burst_settle_ms`).
pub async fn zoom_and_pan(c: &Client, steps: u32) -> Value {
    let script = r#"
const [sel, rsel, steps, done] = arguments;
const cv = document.querySelector(sel), rf = document.querySelector(rsel);
cv.scrollIntoView({block: 'center'});
const want = () => rf.dataset.start + '-' + rf.dataset.end;
const box = () => cv.getBoundingClientRect();
const ev = (type, x, extra) => {
  const b = box();
  const init = Object.assign({clientX: b.left + x, clientY: b.top + 100, bubbles: true, cancelable: true}, extra);
  cv.dispatchEvent(type === 'wheel' ? new WheelEvent('wheel', init) : new MouseEvent(type, init));
};
// Resolves with ms from `act` until the canvas shows the range the filter then asks for.
const step = (act) => new Promise((resolve) => {
  const before = want();
  const t0 = performance.now();
  const mo = new MutationObserver(() => {
    const w = want();
    if (w !== before && cv.dataset.drawn === w) { mo.disconnect(); clearTimeout(t); resolve(performance.now() - t0); }
  });
  const t = setTimeout(() => { mo.disconnect(); resolve(null); }, 20000);
  mo.observe(cv, {attributes: true, attributeFilter: ['data-drawn']});
  act();
});
const durations = (name, since) => performance.getEntriesByName(name).filter(e => e.startTime >= since).map(e => e.duration);
(async () => {
  const t0 = performance.now();
  const zoom_ms = [], pan_ms = [];
  const x = box().width * 0.6;
  for (let i = 0; i < steps; i++) zoom_ms.push(await step(() => ev('wheel', x, {deltaY: -100})));
  ev('mousedown', x, {buttons: 1});
  for (let i = 1; i <= steps; i++) pan_ms.push(await step(() => ev('mousemove', x - 30 * i, {buttons: 1})));
  ev('mouseup', x - 30 * steps, {buttons: 0});
  for (let i = 0; i < steps; i++) zoom_ms.push(await step(() => ev('wheel', x, {deltaY: 100})));
  const draw_ms = durations('memsnap:timeline-draw', t0);
  const request_ms = durations('memsnap:request:Timeline', t0);
  // Burst: one wheel event per animation frame, as a fast trackpad sends them.
  const frames = [];
  let last = null;
  const b0 = performance.now();
  for (let i = 0; i < 2 * steps; i++) {
    const ts = await new Promise(r => requestAnimationFrame(r));
    if (last !== null) frames.push(ts - last);
    last = ts;
    ev('wheel', x, {deltaY: i < steps ? -100 : 100});
  }
  const settled = await new Promise((resolve) => {
    const check = () => cv.dataset.drawn === want();
    if (check()) return resolve(performance.now() - b0);
    const mo = new MutationObserver(() => { if (check()) { mo.disconnect(); resolve(performance.now() - b0); } });
    mo.observe(cv, {attributes: true, attributeFilter: ['data-drawn']});
    setTimeout(() => { mo.disconnect(); resolve(null); }, 20000);
  });
  // Steps that land while a background analysis runs: after each, a pause past the page's
  // idle delay (150 ms) sends the views' background requests for the new range (flame graph,
  // anomalies, ...), and the next wheel step comes while the worker is on one of them.
  // As many as the zoom steps above: with ten, the p95 was the single slowest step.
  const during_background_ms = [];
  for (let i = 0; i < steps; i++) {
    await new Promise(r => setTimeout(r, 170));
    during_background_ms.push(await step(() => ev('wheel', x, {deltaY: i % 2 ? 100 : -100})));
  }
  const requests = {};
  for (const e of performance.getEntriesByType('measure')) {
    if (e.startTime >= t0 && e.name.startsWith('memsnap:request:')) {
      const k = e.name.slice(16);
      (requests[k] = requests[k] || []).push(Math.round(e.duration * 10) / 10);
    }
  }
  done({requests, zoom_ms, pan_ms, draw_ms, request_ms, burst_frame_ms: frames, burst_settle_ms: settled, during_background_ms,
        burst_draw_ms: durations('memsnap:timeline-draw', b0), range: want()});
})();
"#;
    c.execute_async(
        script,
        vec![
            json!(testid("timeline")),
            json!(testid("range-filter")),
            json!(steps),
        ],
    )
    .await
    .unwrap_or_else(|e| json!({ "error": e.to_string() }))
}
