//! The page benchmark (issue 6), run by scripts/bench/bench.sh in release: in headless Chromium, per
//! real fixture and large file, the worker's pipeline (read the File, parse, index for the
//! views) from the worker's own `performance.now()` figures, next to the same pipeline native
//! (`snapshot::read` + the worker's `file_summary`) timed here in the same run; load to first
//! paint (segment view and timeline); the page's and worker's wasm memories and JS heaps (the
//! worker's through a DevTools connection of its own, `web/workers.rs`); the
//! timeline's zoom and pan at 1M entries; this Chromium's bare read of each file in a fresh
//! worker (`web/read_floor.rs`), the floor under the worker's read; and which large files open,
//! are refused or crash.
//! Writes `target/bench/page.json` (or `$MEMSNAP_BENCH_PAGE_OUT`) for scripts/bench_report.py.
//!
//! `cargo test --release -p memsnap-tests --test page_bench -- --ignored --nocapture`
//! (MEMSNAP_DIST = the built site; BENCH_QUICK=1: fewer repeats).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::wd::TimeoutConfiguration;
use fantoccini::Client;
use memsnap_app::size_limit::MAX_FILE_BYTES;
use memsnap_app::viewmodel::{file_summary, Analyses};
use memsnap_tests::fixtures::{self, workspace_root};
use memsnap_tests::web::browser::Browser;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::memoryviz;
use memsnap_tests::web::perf::{self, Outcome};
use memsnap_tests::web::read_floor;
use memsnap_tests::web::server::StaticServer;
use memsnap_tests::web::workers;
use serde_json::{json, Value};

/// The large generated files (scripts/gen/gen-large.sh), in this order; absent ones are listed as
/// not generated.
const LARGE: [&str; 3] = ["large-100mb", "large-500mb", "large-1gb"];
/// Files this large are parsed while the browser reads them (`app/src/worker/streaming.rs`,
/// `SMALLEST`); smaller ones are read whole, then parsed.
const STREAMED_FROM: u64 = 2 << 20;
/// The file whose timeline is zoomed and panned (1.0M trace entries).
const ZOOM_FILE: &str = "large-100mb.pickle";
/// The largest file given to MemoryViz.js: the largest (109 MB). Larger ones can take
/// its tab down (it is reported to crash near 1 GB), and the bench's session with it.
const MEMORYVIZ_MAX_BYTES: u64 = 120_000_000;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The worker's pipeline natively, in this process: read + `file_summary` (timelines,
/// validation), as `app/src/worker/mod.rs` runs it. Median ms of `runs`.
fn native_ms(bytes: &[u8], name: &str, runs: usize) -> Option<f64> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut snap = memsnap_core::snapshot::read(bytes).ok()?;
        let mut cache = Analyses::for_open(&mut snap);
        let summary = file_summary(&snap, &mut cache, name, bytes.len() as u64, 0.0);
        std::hint::black_box(&summary);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Some(median(&mut times))
}

/// The worker's answers for the first paint and for one zoom step, natively: ms per request
/// kind on the zoomed file (a profile of where a zoom step's time goes in the worker).
fn native_requests(bytes: &[u8], name: &str) -> Value {
    use memsnap_app::protocol::analysis::{
        EntryRange, FlameMeasure, FlameRequest, TimelineRequest,
    };
    use memsnap_app::protocol::Request;
    let Ok(mut snap) = memsnap_core::snapshot::read(bytes) else {
        return Value::Null;
    };
    let mut cache = Analyses::for_open(&mut snap);
    let _ = file_summary(&snap, &mut cache, name, bytes.len() as u64, 0.0);
    let n = snap.trace(0).len() as u64;
    // One tenth of the trace around its middle, as after a few wheel steps.
    let zoomed = EntryRange {
        start: n / 2 - n / 20,
        end: n / 2 + n / 20,
    };
    let mut out = serde_json::Map::new();
    for (label, range) in [
        ("whole", EntryRange { start: 0, end: n }),
        ("zoomed", zoomed),
    ] {
        let requests = [
            Request::Segments { device: 0 },
            Request::Diagnostics { device: 0 },
            Request::Insights { device: 0 },
            Request::Timeline(TimelineRequest {
                device: 0,
                range,
                width: 1000,
                height: 226,
            }),
            Request::Flame(FlameRequest {
                device: 0,
                range,
                measure: FlameMeasure::LiveAt(None),
                all_frames: false,
            }),
            Request::Anomalies { device: 0, range },
        ];
        for r in &requests {
            // Twice: the first fills the caches, the second is what a later request costs.
            for pass in ["first", "again"] {
                let t = Instant::now();
                std::hint::black_box(memsnap_app::viewmodel::answer(&snap, &mut cache, r));
                out.insert(
                    format!("{label}/{}/{pass}", r.kind()),
                    json!(t.elapsed().as_secs_f64() * 1e3),
                );
            }
        }
    }
    Value::Object(out)
}

/// A person takes longer than this from the page appearing to a file picked; the worker warms
/// its code up meanwhile (app/src/worker/warm_up.rs).
const PICK_AFTER: Duration = Duration::from_millis(500);

async fn fresh_page(c: &Client, url: &str) {
    c.goto(url).await.expect("opening the page");
    c.wait()
        .for_element(fantoccini::Locator::Css("[data-testid=\"file-input\"]"))
        .await
        .expect("the page has a file input");
    // The worker's wasm compiled and started (`memsnap:worker-ready`), then a person's pause.
    memsnap_tests::web::page::wait_until("the worker to say it is ready", || async {
        match c
            .execute(
                "return performance.getEntriesByName('memsnap:worker-ready').length;",
                vec![],
            )
            .await
        {
            Ok(v) if v.as_u64().unwrap_or(0) > 0 => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    tokio::time::sleep(PICK_AFTER).await;
}

/// Opens `path` in a fresh page `runs` times (picked again in the same page after the first),
/// then as many times in MemoryViz.js when it is set up (`peer`: a browser of its own and the
/// viewer's URL), and returns its JSON record.
async fn bench_file(
    c: &Client,
    debugger: Option<&str>,
    url: &str,
    peer: Option<(&Client, &str)>,
    path: &Path,
    runs: usize,
    native_runs: usize,
) -> Value {
    let name = path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let mut rec = json!({ "file": name, "bytes": size });
    let timeout = Duration::from_secs(60 + size / 2_000_000);

    // Natively first (the page may refuse the file, the reader will not).
    if size <= 2 * MAX_FILE_BYTES {
        if let Ok(bytes) = std::fs::read(path) {
            rec["native_pipeline_ms"] = json!(native_ms(&bytes, &name, native_runs));
            if name == ZOOM_FILE {
                rec["native_requests_ms"] = native_requests(&bytes, &name);
            }
        }
    }

    eprintln!("page_bench: {name}: native done, opening in the page");
    fresh_page(c, url).await;
    let mut pipeline = Vec::new();
    let mut read = Vec::new();
    let mut paints = Vec::new();
    // The page's wasm after each open: what one file costs, and what replacing it costs.
    let mut page_runs = Vec::new();
    for run in 0..runs {
        let answered = perf::opens_answered(c).await;
        memsnap_tests::web::page::pick_file(c, path).await;
        match perf::wait_open(c, &name, size, answered, timeout).await {
            Outcome::Opened(f) => {
                // Every open's first paint: the first in a fresh page (the worker's and the
                // page's code still in V8's baseline tier), the later ones warm.
                let paint = perf::load_to_first_paint(c, timeout).await;
                paints.push(paint);
                if run == 0 {
                    rec["outcome"] = json!("opened");
                    rec["load_to_first_paint_ms"] = json!(paint);
                    if paint.is_none() {
                        // Opened but never drawn: what the page says instead.
                        rec["message"] = c
                            .execute(
                                "return document.querySelector('[data-testid=\"load-error\"]')?.innerText ?? null;",
                                vec![],
                            )
                            .await
                            .unwrap_or(Value::Null);
                    }
                    rec["worker_memory"] = json!(f.worker_memory);
                    rec["parse_ms"] = json!(f.parse_ms);
                    rec["index_ms"] = json!(f.index_ms);
                    rec["load_requests"] = perf::requests_since_chosen(c).await;
                }
                pipeline.push(f.parse_ms + f.index_ms);
                read.push(f.read_ms);
                page_runs.push(perf::page_memory(c).await.0);
            }
            Outcome::Refused(message) => {
                rec["outcome"] = json!("refused");
                rec["message"] = json!(message);
                return rec;
            }
            Outcome::Crashed(message) => {
                let state = c
                    .execute(
                        "return [document.querySelector('[data-testid=\"file-input\"]').files.length, \
                         document.querySelector('.open')?.innerText];",
                        vec![],
                    )
                    .await;
                eprintln!("page_bench: run {run} of {name}: {message}; page: {state:?}");
                rec["outcome"] = json!("crashed");
                rec["message"] = json!(message);
                return rec;
            }
        }
    }
    rec["first_paint_runs_ms"] = json!(paints);
    rec["page_memory_runs"] = json!(page_runs);
    let mut warm: Vec<f64> = paints.iter().skip(1).flatten().copied().collect();
    if !warm.is_empty() {
        // The slowest too: a median of four hid one open in four that waited half a second.
        rec["first_paint_slowest_later_ms"] = json!(warm.iter().copied().fold(0.0, f64::max));
        rec["first_paint_warm_ms"] = json!(median(&mut warm));
    }
    rec["wasm_pipeline_ms"] = json!(median(&mut pipeline));
    rec["wasm_read_ms"] = json!(median(&mut read));
    let (page_wasm, js_heap) = perf::page_memory(c).await;
    rec["page_memory"] = json!(page_wasm);
    rec["js_heap"] = json!(js_heap);
    // What the page holds, without the garbage a collection would free (strings the views
    // handed over while drawing, replaced views): `js_heap` depends on when V8 last collected.
    if memsnap_tests::web::cdp::collect_garbage(c).await.is_ok() {
        rec["js_heap_settled"] = json!(perf::page_memory(c).await.1);
        // ArrayBuffer contents outside the page's JS heap (wasm memories are counted above).
        if let Some(h) = memsnap_tests::web::cdp::heap_usage(c).await {
            rec["page_backing"] = json!(h.backing);
        }
    }
    // The worker's own JS heap (its wasm glue, messages), also after a collection: the page's
    // `performance.memory` does not see it, and MemoryViz.js has no worker to leave out.
    let heaps = match debugger {
        Some(d) => workers::js_heaps(d).await,
        None => Err("chromedriver gave no DevTools address".to_string()),
    };
    match heaps {
        Ok(heaps) => {
            rec["worker_js_heap"] = json!(heaps.iter().map(|h| h.used).sum::<u64>());
            rec["worker_backing"] = json!(heaps.iter().map(|h| h.backing).sum::<u64>());
            rec["workers"] = json!(heaps.len());
        }
        Err(e) => {
            eprintln!("page_bench: {name}: the worker's JS heap: {e}");
            rec["worker_js_heap_error"] = json!(e);
        }
    }
    if name == ZOOM_FILE {
        eprintln!("page_bench: {name}: zooming and panning");
        let zoom = perf::zoom_and_pan(c, 20).await;
        let (page_wasm, js_heap) = perf::page_memory(c).await;
        rec["page_memory_after_zoom"] = json!(page_wasm);
        rec["js_heap_after_zoom"] = json!(js_heap);
        rec["zoom"] = zoom;
    }
    // The same file read by this Chromium in a fresh worker with no memsnap code: the floor
    // under `wasm_read_ms`, and so a ceiling on the worker's read + parse + index MB/s here.
    match read_floor::bare_reads(c, path, runs, timeout).await {
        Ok(mut ms) => {
            rec["bare_read_runs_ms"] = json!(ms);
            rec["bare_read_ms"] = json!(median(&mut ms));
        }
        Err(e) => {
            eprintln!("page_bench: {name}: {e}");
            rec["bare_read_error"] = json!(e);
        }
    }
    if let Some((pc, peer)) = peer.filter(|_| size <= MEMORYVIZ_MAX_BYTES) {
        eprintln!("page_bench: {name}: opening in MemoryViz.js");
        let mut mv = memoryviz::bench_file(pc, peer, path, runs, timeout).await;
        let mut warm: Vec<f64> = mv["first_paint_runs_ms"]
            .as_array()
            .into_iter()
            .flatten()
            .skip(1)
            .filter_map(Value::as_f64)
            .collect();
        if !warm.is_empty() {
            mv["first_paint_warm_ms"] = json!(median(&mut warm));
        }
        rec["memoryviz"] = mv;
    }
    rec
}

/// Everything memsnap's page holds for a record: both wasm memories, both JS heaps (the
/// page's as `page_heap` says, the worker's after a collection) and the ArrayBuffer contents
/// both hold. NaN where one was not read.
fn total_memory(r: &Value, page_heap: &str) -> f64 {
    [
        "worker_memory",
        "page_memory",
        page_heap,
        "worker_js_heap",
        "page_backing",
        "worker_backing",
    ]
    .iter()
    .map(|k| r[*k].as_f64().unwrap_or(f64::NAN))
    .sum()
}

/// The figures issue 15 asks for, one row per file, and the real fixtures together.
fn print_table(records: &[Value]) {
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    eprintln!(
        "page_bench: {:<40} {:>7} {:>8} {:>8} {:>6} {:>7} {:>8} {:>7} {:>7} {:>8} {:>8} {:>8} {:>9} {:>9}",
        "file",
        "MB",
        "native",
        "worker",
        "×nat",
        "read",
        "MB/s",
        "bare",
        "floor",
        "paint1",
        "paintN",
        "slowest",
        "memory MB",
        "settled"
    );
    let (mut bytes, mut worker, mut native, mut bare) = (0.0, 0.0, 0.0, 0.0);
    // The most the worker could do here if its wasm ran at native speed: each file's bare read
    // and then its native parse + index, or the slower of the two where they overlap.
    let mut ceiling = 0.0;
    for r in records.iter().filter(|r| r["outcome"] == "opened") {
        let mb = f(&r["bytes"]) / 1e6;
        let (nat, wasm, read) = (
            f(&r["native_pipeline_ms"]),
            f(&r["wasm_pipeline_ms"]),
            f(&r["wasm_read_ms"]),
        );
        let memory = total_memory(r, "js_heap");
        let settled = total_memory(r, "js_heap_settled");
        let bare_read = f(&r["bare_read_ms"]);
        eprintln!(
            "page_bench: {:<40} {:>7.2} {:>8.1} {:>8.1} {:>6.2} {:>7.1} {:>8.0} {:>7.1} {:>7.1} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>9.1}",
            r["file"].as_str().unwrap_or("?"),
            mb,
            nat,
            wasm,
            wasm / nat,
            read,
            mb / ((read + wasm) / 1e3),
            bare_read,
            // Goal 2's floor: this Chromium's bare read, then the native parse + index.
            bare_read + nat,
            f(&r["load_to_first_paint_ms"]),
            f(&r["first_paint_warm_ms"]),
            f(&r["first_paint_slowest_later_ms"]),
            memory / 1e6,
            settled / 1e6,
        );
        if !r["file"].as_str().unwrap_or("").starts_with("large-") {
            bytes += mb;
            worker += read + wasm;
            native += nat;
            bare += bare_read;
            // A bare read that failed (NaN) leaves no ceiling: `max` would drop it.
            ceiling += if bare_read.is_nan() {
                f64::NAN
            } else if f(&r["bytes"]) >= STREAMED_FROM as f64 {
                bare_read.max(nat)
            } else {
                bare_read + nat
            };
        }
    }
    for r in records.iter().filter(|r| r["zoom"].is_object()) {
        let p95 = |k: &str| {
            let mut v: Vec<f64> = r["zoom"][k]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            v.sort_by(f64::total_cmp);
            // Nearest rank: the smallest value at least 95% of the steps are within.
            v.get((v.len() * 95).div_ceil(100).saturating_sub(1))
                .copied()
                .unwrap_or(f64::NAN)
        };
        eprintln!(
            "page_bench: {} timeline, p95 ms: zoom step {:.1}, pan step {:.1}, request {:.1}, \
             draw {:.1}, zoom step landing during a background analysis {:.1} (slowest {:.1})",
            r["file"].as_str().unwrap_or("?"),
            p95("zoom_ms"),
            p95("pan_ms"),
            p95("request_ms"),
            p95("draw_ms"),
            p95("during_background_ms"),
            r["zoom"]["during_background_ms"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
                .fold(f64::NAN, f64::max),
        );
    }
    eprintln!(
        "page_bench: real fixtures together: {:.1} MB, worker read + parse + index {:.0} MB/s, \
         native parse + index {:.0} MB/s, this Chromium's bare read of the same files {:.0} MB/s; \
         the bare read and then the native parse + index (overlapped from {} MiB) {:.0} MB/s",
        bytes,
        bytes / (worker / 1e3),
        bytes / (native / 1e3),
        bytes / (bare / 1e3),
        STREAMED_FROM >> 20,
        bytes / (ceiling / 1e3)
    );
    print_peer_table(records);
}

/// memsnap against MemoryViz.js in this run, where it was measured: first paint on a page's
/// first open and on later opens, and memory (memsnap: both wasm memories and the page's JS
/// heap; MemoryViz.js: its JS heap), each as MemoryViz.js's figure over memsnap's.
fn print_peer_table(records: &[Value]) {
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let measured: Vec<&Value> = records
        .iter()
        .filter(|r| r["outcome"] == "opened" && r["memoryviz"].is_object())
        .collect();
    if measured.is_empty() {
        return;
    }
    eprintln!(
        "page_bench: against MemoryViz.js, same run (ratio = MemoryViz.js / memsnap; memory MB settled)"
    );
    eprintln!(
        "page_bench: {:<40} {:>8} {:>8} {:>7} {:>8} {:>8} {:>7} {:>8} {:>8} {:>7}",
        "file", "paint1", "MV", "×", "paintN", "MV", "×", "memory", "MV", "×"
    );
    for r in measured {
        let mv = &r["memoryviz"];
        if mv["outcome"] != "opened" {
            eprintln!(
                "page_bench: {:<40} MemoryViz.js: {}",
                r["file"].as_str().unwrap_or("?"),
                mv["message"].as_str().unwrap_or("?")
            );
            continue;
        }
        let (p1, q1) = (
            f(&r["load_to_first_paint_ms"]),
            f(&mv["load_to_first_paint_ms"]),
        );
        let (pn, qn) = (f(&r["first_paint_warm_ms"]), f(&mv["first_paint_warm_ms"]));
        let memory = total_memory(r, "js_heap_settled") / 1e6;
        let mv_memory = (f(&mv["js_heap_settled"]) + f(&mv["backing"])) / 1e6;
        eprintln!(
            "page_bench: {:<40} {:>8.1} {:>8.1} {:>7.1} {:>8.1} {:>8.1} {:>7.1} {:>8.1} {:>8.1} {:>7.2}",
            r["file"].as_str().unwrap_or("?"),
            p1,
            q1,
            q1 / p1,
            pn,
            qn,
            qn / pn,
            memory,
            mv_memory,
            mv_memory / memory,
        );
    }
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "benchmark (minutes): scripts/bench/bench.sh runs it in release"]
async fn page_benchmark() {
    let Some(dist) = dist_dir() else { return };
    let quick = std::env::var_os("BENCH_QUICK").is_some_and(|v| !v.is_empty());
    let mut files: Vec<PathBuf> = fixtures::real_fixtures()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("pickle" | "pkl")
            )
        })
        .collect();
    let data = workspace_root().join("target/bench-data");
    let mut missing = Vec::new();
    for l in LARGE {
        let p = data.join(format!("{l}.pickle"));
        if p.is_file() {
            files.push(p);
        } else {
            missing.push(format!("{l}.pickle"));
        }
    }

    // BENCH_PAGE_ONLY=part[,part...]: only the files whose name contains one of them.
    if let Some(only) = std::env::var_os("BENCH_PAGE_ONLY") {
        let only = only.to_string_lossy().to_string();
        let parts: Vec<&str> = only.split(',').filter(|p| !p.is_empty()).collect();
        files.retain(|p| parts.iter().any(|part| p.to_string_lossy().contains(part)));
    }
    let server = StaticServer::start(&dist, &[]).expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;
    c.update_timeouts(TimeoutConfiguration::new(
        Some(Duration::from_secs(600)),
        Some(Duration::from_secs(120)),
        Some(Duration::from_secs(0)),
    ))
    .await
    .expect("setting timeouts");
    let url = server.url("");
    let peer_dir = memoryviz::peer_dir(&workspace_root());
    let peer_source = peer_dir.as_deref().map(memoryviz::source);
    if let Some(source) = &peer_source {
        eprintln!("page_bench: MemoryViz.js measured too: {source}");
    }
    let peer = peer_dir
        .as_deref()
        .map(|dir| StaticServer::start(dir, &[]).expect("serving MemoryViz.js"));
    let peer_url = peer.as_ref().map(|s| s.url(""));
    // MemoryViz.js in a browser of its own: one renderer's heap holds every page it showed.
    let peer_browser = match peer_url {
        Some(_) => Browser::start().await,
        None => None,
    };
    let peer_page = peer_browser
        .as_ref()
        .zip(peer_url.as_deref())
        .map(|(b, url)| (&b.client, url));
    let mut records = Vec::new();
    for path in &files {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let small = size < 20_000_000;
        let (runs, native_runs) = match (small, quick) {
            (true, false) => (5, 9),
            (true, true) => (3, 5),
            (false, _) => (1, 2),
        };
        let rec = bench_file(
            c,
            browser.debugger.as_deref(),
            &url,
            peer_page,
            path,
            runs,
            native_runs,
        )
        .await;
        eprintln!("page_bench: {rec}");
        let crashed = rec["outcome"] == "crashed";
        records.push(rec);
        if crashed {
            // A dead tab answers nothing more; a fresh session for the rest.
            break;
        }
    }
    print_table(&records);
    let out = std::env::var_os("MEMSNAP_BENCH_PAGE_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/bench/page.json"));
    let report = json!({
        "files": records,
        "not_generated": missing,
        "size_limit": MAX_FILE_BYTES,
        "memoryviz": peer_source,
        "chromium": c.execute("return navigator.userAgent", vec![]).await.unwrap_or(Value::Null),
    });
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).expect("creating the output folder");
    }
    std::fs::write(
        &out,
        serde_json::to_string_pretty(&report).unwrap_or_default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    eprintln!("page_bench: wrote {}", out.display());
    browser.close().await;
    if let Some(b) = peer_browser {
        b.close().await;
    }
}
