//! The open panel's progress bar is drawn only for an open that is still running 150 ms after
//! the pick (`views/open.rs`, `PROGRESS_AFTER_MS`): a bar drawn at every pick cost the quick
//! opens a layout, a paint and a compositor frame while the worker read the file. A
//! MutationObserver set before each pick records every bar the page inserts. Both files are
//! built with `capture`, not recorded: one rank of `rank_files`' training job, 30,000 steps long
//! (~31 MB, an open of a few hundred ms here), and the `example` scenario (a few kB).

use std::time::Duration;

use fantoccini::Client;
use memsnap_tests::built::capture;
use memsnap_tests::fixtures::scratch;
use memsnap_tests::rank_files;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page;
use memsnap_tests::web::perf::{self, Outcome};

const PROGRESS_AFTER_MS: f64 = 150.0;

/// Records the text of every progress bar the page inserts from now on.
async fn watch_progress(c: &Client) {
    c.execute(
        "window.__bars = [];
         if (!window.__barWatch) {
           window.__barWatch = new MutationObserver((ms) => {
             for (const m of ms) for (const n of m.addedNodes) {
               if (n.nodeType !== 1) continue;
               const bar = n.matches('[data-testid=\"progress\"]') ? n
                 : n.querySelector('[data-testid=\"progress\"]');
               if (bar) window.__bars.push(bar.textContent);
             }
           });
           window.__barWatch.observe(document.body, {childList: true, subtree: true});
         }",
        vec![],
    )
    .await
    .expect("setting up the observer");
}

/// Opens `path` and returns how long its open took (the page's `request:OpenFile` measure, from
/// the request to the answer) and the bars drawn meanwhile.
async fn open(c: &Client, path: &std::path::Path) -> (f64, Vec<String>) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let size = std::fs::metadata(path).unwrap().len();
    watch_progress(c).await;
    let answered = perf::opens_answered(c).await;
    page::pick_file(c, path).await;
    match perf::wait_open(c, &name, size, answered, Duration::from_secs(120)).await {
        Outcome::Opened(_) => {}
        other => panic!("{name} did not open: {other:?}"),
    }
    let took = c
        .execute(
            "const m = performance.getEntriesByName('memsnap:request:OpenFile');
             return m[m.length - 1].duration;",
            vec![],
        )
        .await
        .expect("the open's measure")
        .as_f64()
        .expect("a duration");
    let bars = c
        .execute("return window.__bars;", vec![])
        .await
        .expect("the bars seen");
    let bars = serde_json::from_value(bars).expect("a list of texts");
    (took, bars)
}

#[tokio::test(flavor = "current_thread")]
async fn a_progress_bar_only_for_an_open_still_running_after_150_ms() {
    let Some(dist) = dist_dir() else { return };
    let dir = scratch("page-progress");
    // 30,000 training steps of one rank: about 480,000 trace entries, ~31 MB.
    let slow = dir.join("rank.pickle");
    rank_files::capture(&rank_files::scenario(&dir, 30_000), 0, &slow);
    let quick = dir.join("small.pickle");
    capture(&["--scenario", "example"], &quick);

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    let mut checked = 0;
    for path in [&quick, &slow, &quick] {
        let (took, bars) = open(c, path).await;
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        eprintln!("page_progress: {name} opened in {took:.0} ms; bars drawn: {bars:?}");
        if took >= 2.0 * PROGRESS_AFTER_MS {
            assert!(
                bars.iter().any(|b| b.contains(&name)),
                "{name} took {took:.0} ms to open and no progress bar naming it was drawn: {bars:?}"
            );
            checked += 1;
        } else if took < 0.8 * PROGRESS_AFTER_MS {
            assert!(
                bars.is_empty(),
                "{name} opened in {took:.0} ms, yet a progress bar was drawn: {bars:?}"
            );
            checked += 1;
        } else {
            eprintln!("page_progress: {name}: {took:.0} ms is too near 150 ms to check either way");
        }
    }
    if checked < 3 {
        eprintln!(
            "page_progress: NOTE only {checked} of 3 opens were far enough from 150 ms to check"
        );
    }
    assert!(
        checked > 0,
        "no open was far enough from 150 ms to check anything"
    );
    site.browser.close().await;
}
