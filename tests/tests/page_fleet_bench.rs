//! The fleet benchmark (issue 12): a job's folder of rank files opened at once in headless
//! Chromium, until the overview has every rank: the time to complete (from the pick, and the
//! page's own figure), Chromium's memory over all its processes sampled while it works (peak
//! PSS and RSS sums), the pool's worker count, and `memsnap fleet` over the same files right
//! after, on the same cores. Sets: 64, 256 and 1,024 small ranks
//! (captures of varied size and peak plus copies of real fixtures), to show memory flat as ranks
//! grow, 4,096 of them for the overview's readability, and 64 ranks of ~50 MB each. Each set
//! opens in a fresh browser.
//!
//! Each set is also opened, first, in tests/pages/fleet_floor.html: a page that keeps the picked
//! files and reads every byte once through the same kind of worker pool, and parses nothing.
//! Its time and its memory's growth from set to set are the browser's own floor under the
//! page's, measured in the same run.
//!
//! `cargo test --release -p memsnap-tests --test page_fleet_bench -- --ignored --nocapture`
//! (or `MEMSNAP_BIN=target/release/memsnap` with a debug test build: the `memsnap fleet` run
//! beside each set must be a release build for the ratio to mean anything)
//! (MEMSNAP_DIST = the built site). Rank files are made once with `capture` under
//! `target/bench-data/fleet-*` (never committed; delete to remake). FLEET_SETS=64,256 picks
//! sets by name (`64`, `256`, `1024`, `4096`, `64x50mb`). Writes `target/bench/fleet.json`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::wd::TimeoutConfiguration;
use fantoccini::{Client, Locator};
use memsnap_tests::fixtures::{self, workspace_root};
use memsnap_tests::rank_files;
use memsnap_tests::web::browser::{Browser, ProcessMemory};
use memsnap_tests::web::cdp;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid};
use memsnap_tests::web::server::StaticServer;
use serde_json::{json, Value};

struct Set {
    name: &'static str,
    ranks: usize,
    /// Distinct captures; the rest are links to those and to real fixtures.
    generated: usize,
    /// Training steps per capture (the scenario's size knob: ~1 kB each).
    steps: (u32, u32),
    with_real: bool,
}

const SETS: [Set; 5] = [
    Set {
        name: "64",
        ranks: 64,
        generated: 48,
        steps: (4, 400),
        with_real: true,
    },
    Set {
        name: "256",
        ranks: 256,
        generated: 48,
        steps: (4, 400),
        with_real: true,
    },
    Set {
        name: "1024",
        ranks: 1024,
        generated: 48,
        steps: (4, 400),
        with_real: true,
    },
    Set {
        name: "4096",
        ranks: 4096,
        generated: 48,
        steps: (4, 400),
        with_real: true,
    },
    Set {
        name: "64x50mb",
        ranks: 64,
        generated: 8,
        steps: (47_000, 49_000),
        with_real: false,
    },
];

/// A set must complete within this; slower counts as not completing.
const LIMIT: Duration = Duration::from_secs(1800);

fn folder(set: &Set) -> Vec<PathBuf> {
    let dir = workspace_root()
        .join("target/bench-data")
        .join(format!("fleet-{}", set.name));
    let existing: Vec<PathBuf> = (0..set.ranks)
        .map(|r| rank_files::rank_path(&dir, r))
        .collect();
    if existing.iter().all(|p| p.is_file()) {
        return existing;
    }
    let real: Vec<PathBuf> = match (set.with_real, fixtures::real_fixtures()) {
        (true, Some(files)) => files,
        _ => Vec::new(),
    };
    let t = Instant::now();
    let paths = rank_files::job_folder(&dir, set.ranks, set.generated, set.steps, &real);
    eprintln!(
        "fleet bench: made {} ranks in {} ({:.0} s)",
        set.ranks,
        dir.display(),
        t.elapsed().as_secs_f64()
    );
    paths
}

async fn attr(c: &Client, name: &str) -> Option<String> {
    c.find(Locator::Css(&testid("fleet")))
        .await
        .ok()?
        .attr(name)
        .await
        .ok()?
}

/// Opens `paths` through the folder input of the page at `url` (`label`: "page", or "floor"
/// for tests/pages/fleet_floor.html) in a fresh browser and samples memory until its fleet
/// element counts every rank.
async fn open_set(url: &str, label: &str, set: &Set, paths: &[PathBuf]) -> Value {
    let dir = paths[0].parent().unwrap().to_path_buf();
    let Some(browser) = Browser::start().await else {
        return Value::Null;
    };
    let c = &browser.client;
    c.update_timeouts(TimeoutConfiguration::new(
        Some(Duration::from_secs(600)),
        Some(Duration::from_secs(120)),
        Some(Duration::from_secs(0)),
    ))
    .await
    .expect("setting timeouts");
    c.goto(url).await.expect("opening the page");
    c.wait()
        .for_element(Locator::Css(&testid("folder-input")))
        .await
        .expect("the page has a folder input");
    let idle = browser.memory();
    let started = Instant::now();
    let how = page::pick_folder_or_files(c, &dir, paths).await;
    let mut peak = ProcessMemory::default();
    let mut samples = 0;
    let mut loading_shot = false;
    let outcome = loop {
        let m = browser.memory();
        samples += 1;
        peak.rss = peak.rss.max(m.rss);
        peak.pss = peak.pss.max(m.pss);
        peak.renderer_pss = peak.renderer_pss.max(m.renderer_pss);
        peak.processes = peak.processes.max(m.processes);
        let num = |v: Option<String>| v.and_then(|v| v.parse::<usize>().ok());
        let loaded = num(attr(c, "data-ranks-loaded").await);
        let failed = num(attr(c, "data-ranks-failed").await);
        if let (Some(l), Some(f)) = (loaded, failed) {
            if l + f == set.ranks {
                break Ok((l, f));
            }
        }
        // What the set's progress looks like while it loads (sets that take long enough).
        if !loading_shot && started.elapsed() > Duration::from_secs(5) {
            loading_shot = true;
            memsnap_tests::web::page::screenshot(
                c,
                &format!("fleet-bench-{label}-{}-loading", set.name),
            )
            .await;
        }
        if started.elapsed() > LIMIT {
            break Err(format!(
                "{loaded:?} open, {failed:?} failed after {LIMIT:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let wall_s = started.elapsed().as_secs_f64();
    let page_ms = attr(c, "data-elapsed-ms")
        .await
        .and_then(|v| v.parse::<f64>().ok());
    let workers = attr(c, "data-workers").await;
    // The floor page notes the first file it failed to read; the page names each in its list.
    let first_error = attr(c, "data-first-error").await;
    if let Some(e) = &first_error {
        eprintln!("fleet bench {} {label}: a file failed: {e}", set.name);
    }
    let after = browser.memory();
    // What stays once the set is in: after full garbage collections (DevTools) and a pause for
    // Chromium to hand freed pages back, so garbage not yet collected does not count.
    for _ in 0..2 {
        if let Err(e) = cdp::collect_garbage(c).await {
            eprintln!("fleet bench: no garbage collection through DevTools: {e}");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let settled = browser.memory();
    let dom = cdp::dom_counters(c).await;
    // Where the page's share sits: its wasm memory (the summaries) and its JS heap.
    let (page_wasm, page_js) = memsnap_tests::web::perf::page_memory(c).await;
    memsnap_tests::web::page::screenshot(c, &format!("fleet-bench-{label}-{}", set.name)).await;
    browser.close().await;
    let page_s = page_ms.map(|ms| ms / 1e3);
    eprintln!(
        "fleet bench {:>8} {label:>5}: {} ranks {} in {:.1} s (own figure {:.1} s), {} workers, \
         peak PSS {:.0} MB (renderers {:.0} MB; idle {:.0} MB, after {:.0} MB, \
         after GC {:.0} MB of which renderers {:.0} MB), \
         peak RSS {:.0} MB, {} processes; page wasm {:.0} MB, JS heap {:.0} MB; DOM {}",
        set.name,
        set.ranks,
        match &outcome {
            Ok((l, f)) => format!("{l} open/{f} failed"),
            Err(e) => format!("NOT COMPLETE: {e}"),
        },
        wall_s,
        page_s.unwrap_or(f64::NAN),
        workers.as_deref().unwrap_or("?"),
        peak.pss as f64 / 1e6,
        peak.renderer_pss as f64 / 1e6,
        idle.pss as f64 / 1e6,
        after.pss as f64 / 1e6,
        settled.pss as f64 / 1e6,
        settled.renderer_pss as f64 / 1e6,
        peak.rss as f64 / 1e6,
        peak.processes,
        page_wasm as f64 / 1e6,
        page_js as f64 / 1e6,
        dom,
    );
    json!({
        "picked_through": how,
        "outcome": match &outcome {
            Ok((l, f)) => json!({"loaded": l, "failed": f}),
            Err(e) => json!({"not_completed": e}),
        },
        "wall_s": wall_s,
        "elapsed_ms": page_ms,
        "workers": workers,
        "first_error": first_error,
        "memory": {
            "idle_pss": idle.pss,
            "peak_pss": peak.pss,
            "peak_rss": peak.rss,
            "peak_renderer_pss": peak.renderer_pss,
            "after_pss": after.pss,
            "settled_pss": settled.pss,
            "settled_renderer_pss": settled.renderer_pss,
            "dom": dom,
            "processes": peak.processes,
            "page_wasm": page_wasm,
            "page_js_heap": page_js,
            "samples": samples,
        },
    })
}

/// The same files through `memsnap fleet` on the same cores, right after the browser: the
/// native figure the page is held to (a release build: see the top of this file). Seconds.
fn native_fleet(dir: &Path) -> f64 {
    let cli = Instant::now();
    memsnap_tests::memsnap_bin::stdout(&["fleet", &dir.to_string_lossy()]);
    cli.elapsed().as_secs_f64()
}

/// Seconds from a record's `elapsed_ms`, the browser's own figure for the whole set.
fn own_s(v: &Value) -> Option<f64> {
    v["elapsed_ms"].as_f64().map(|ms| ms / 1e3)
}

/// Opens the set in the floor page and in the page, then runs `memsnap fleet` over it.
async fn run_set(url: &str, floor_url: &str, set: &Set, paths: &[PathBuf]) -> Value {
    let dir = paths[0].parent().unwrap().to_path_buf();
    let bytes: u64 = paths.iter().map(|p| p.metadata().unwrap().len()).sum();
    let floor = open_set(floor_url, "floor", set, paths).await;
    let page = open_set(url, "page", set, paths).await;
    let cli_s = native_fleet(&dir);
    let ratio = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
    let (page_s, floor_s) = (own_s(&page), own_s(&floor));
    eprintln!(
        "fleet bench {:>8}: {} ranks ({:.0} MB): page {:.1} s, floor {:.1} s, `memsnap fleet` \
         {:.1} s; page / fleet {:.2}x, page / floor {:.2}x, floor / fleet {:.2}x",
        set.name,
        set.ranks,
        bytes as f64 / 1e6,
        page_s.unwrap_or(f64::NAN),
        floor_s.unwrap_or(f64::NAN),
        cli_s,
        ratio(page_s, Some(cli_s)).unwrap_or(f64::NAN),
        ratio(page_s, floor_s).unwrap_or(f64::NAN),
        ratio(floor_s, Some(cli_s)).unwrap_or(f64::NAN),
    );
    json!({
        "set": set.name,
        "ranks": set.ranks,
        "bytes": bytes,
        "page": page,
        "floor": floor,
        "memsnap_fleet_s": cli_s,
        "page_over_memsnap_fleet": ratio(page_s, Some(cli_s)),
        "page_over_floor": ratio(page_s, floor_s),
        "floor_over_memsnap_fleet": ratio(floor_s, Some(cli_s)),
    })
}

/// Settled renderer memory from the first set run to the last, page and floor: what holding
/// more ranks costs each (goal: the page's growth ≤ 40 MB from 64 to 4,096 ranks).
fn report_growth(records: &[Value]) {
    let settled = |r: &Value, who: &str| r[who]["memory"]["settled_renderer_pss"].as_f64();
    let small_sets: Vec<&Value> = records.iter().filter(|r| r["set"] != "64x50mb").collect();
    let (Some(first), Some(last)) = (small_sets.first(), small_sets.last()) else {
        return;
    };
    if first["set"] == last["set"] {
        return;
    }
    for who in ["page", "floor"] {
        if let (Some(a), Some(b)) = (settled(first, who), settled(last, who)) {
            eprintln!(
                "fleet bench: settled renderers, {who}, {} -> {} ranks: {:.0} -> {:.0} MB ({:+.0} MB)",
                first["ranks"],
                last["ranks"],
                a / 1e6,
                b / 1e6,
                (b - a) / 1e6
            );
        }
    }
}

#[tokio::test(flavor = "current_thread")]
#[ignore = "benchmark: makes up to 4 GB of rank files and runs for minutes"]
async fn fleet_bench() {
    let Some(dist) = dist_dir() else { return };
    let wanted: Option<Vec<String>> = std::env::var("FLEET_SETS")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect());
    let floor_page = workspace_root().join("tests/pages/fleet_floor.html");
    let server =
        StaticServer::start(&dist, &[("/fleet-floor.html", &floor_page)]).expect("serving dist/");
    let (url, floor_url) = (server.url(""), server.url("fleet-floor.html"));
    let mut records = Vec::new();
    for set in &SETS {
        if wanted
            .as_ref()
            .is_some_and(|w| !w.iter().any(|n| n == set.name))
        {
            continue;
        }
        let paths = folder(set);
        records.push(run_set(&url, &floor_url, set, &paths).await);
    }
    report_growth(&records);
    let out = workspace_root().join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    let file = out.join("fleet.json");
    std::fs::write(
        &file,
        serde_json::to_string_pretty(&json!(records)).unwrap(),
    )
    .unwrap();
    eprintln!("fleet bench: wrote {}", file.display());
}
