//! The page's rehearsal (app/src/rehearsal.rs): once the worker has warmed up, the page opens
//! its warm-up snapshot out of sight so that a fresh page's first open runs warm code. It must
//! end by itself at its own first paint and leave nothing behind, and a file opened while it is
//! on must show as core reads it (at its OOM, where the example opens). Both opens use the bundled example (app/assets/example.pickle,
//! a `capture` run), so this runs without the real fixtures.

use std::time::Duration;

use fantoccini::Client;
use memsnap_tests::fixtures::workspace_root;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, wait_until};
use memsnap_tests::web::perf;
use serde_json::Value;

/// The rehearsal's end at the latest when its first paint never comes (`LONGEST_MS`).
const LONGEST_MS: f64 = 2_000.0;

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.expect("running a script")
}

/// What of the rehearsal is still in the page: its layers, the segment views (the page has
/// one), the blocks shown and the error shown.
async fn leftovers(c: &Client) -> Value {
    js(
        c,
        "return { layers: document.querySelectorAll('.rehearsal').length, \
                  views: document.querySelectorAll('[data-testid=\"segment-view\"]').length, \
                  blocks: document.querySelectorAll('[data-testid=\"block\"]').length, \
                  error: document.querySelector('[data-testid=\"load-error\"]')?.innerText ?? null };",
    )
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn the_rehearsal_ends_at_its_first_paint_and_leaves_nothing() {
    let Some(dist) = dist_dir() else { return };
    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    let ms = perf::rehearsal_ms(c).await;
    assert!(
        ms < LONGEST_MS * 0.9,
        "the rehearsal ran {ms} ms: it ended by its time limit, not at its first paint"
    );
    assert_eq!(
        leftovers(c).await,
        serde_json::json!({ "layers": 0, "views": 1, "blocks": 0, "error": null }),
        "the rehearsal left something in the page"
    );
    // Still once only, a while later.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        js(
            c,
            "return performance.getEntriesByName('memsnap:rehearsal').length;"
        )
        .await,
        1
    );

    let path = workspace_root().join("app/assets/example.pickle");
    page::pick_file(c, &path).await;
    // It opens on its OOM (tests/tests/page_url.rs).
    page::wait_shown(
        c,
        "example.pickle",
        &page::expected_at_oom(&page::load(&path)),
    )
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_file_dropped_while_the_rehearsal_is_on_shows_as_core_reads_it() {
    let Some(dist) = dist_dir() else { return };
    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    // As soon as the rehearsal's layer is in the page, drop the example on the window, as a
    // person dropping a file would (the page reads a drop's `DataTransfer.files`). A loaded
    // machine may run this script after the rehearsal is over: then a fresh page, again.
    for attempt in 1.. {
        js(
            c,
            "window.dropped = null; \
             fetch('example.pickle').then(r => r.blob()).then(blob => { \
               const file = new File([blob], 'example.pickle'); \
               const drop = () => { \
                 const dt = new DataTransfer(); dt.items.add(file); \
                 window.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true })); \
                 window.dropped = performance.now(); \
               }; \
               if (document.querySelector('.layout.rehearsal')) return drop(); \
               if (performance.getEntriesByName('memsnap:rehearsal').length) { window.dropped = 'missed'; return; } \
               const seen = new MutationObserver(() => { \
                 if (document.querySelector('.layout.rehearsal')) { seen.disconnect(); drop(); } \
               }); \
               seen.observe(document.body, { childList: true, subtree: true }); \
             }); return true;",
        )
        .await;
        let dropped = wait_until("the drop during the rehearsal", || async {
            match js(c, "return window.dropped;").await {
                Value::Null => Err("not yet".to_string()),
                v => Ok(v),
            }
        })
        .await;
        if dropped.is_number() {
            break;
        }
        assert!(
            attempt < 5,
            "the rehearsal was over before the script ran, 5 times"
        );
        c.refresh().await.expect("reloading the page");
    }
    let example = page::load(&workspace_root().join("app/assets/example.pickle"));
    page::wait_shown(c, "example.pickle", &page::expected_at_oom(&example)).await;
    // The drop ended the rehearsal, well before its own first paint could.
    let ms = perf::rehearsal_ms(c).await;
    assert!(ms < LONGEST_MS * 0.9, "the rehearsal ran {ms} ms");
    let left = leftovers(c).await;
    assert_eq!(left["layers"], 0, "the rehearsal's layer stayed: {left}");
    assert_eq!(
        left["error"],
        Value::Null,
        "the page shows an error: {left}"
    );
    assert_eq!(
        left["views"], 1,
        "more than the page's own segment view: {left}"
    );
}
