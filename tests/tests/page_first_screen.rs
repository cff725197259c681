//! The first screen comes with the open's answer (`protocol::FirstScreen`): the opening
//! device's segments and its whole timeline are drawn without a request of their own, and a
//! file opened while the last one was zoomed shows its own whole trace, not the last file's
//! range. Both files are built with `capture` (the allocator model).

use fantoccini::Client;
use memsnap_tests::built;
use memsnap_tests::fixtures::scratch;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, wait_until};
use serde_json::json;

/// How many `kind` requests the page sent at or after `since` (the page's clock).
async fn requests_since(c: &Client, kind: &str, since: f64) -> u64 {
    c.execute(
        "return performance.getEntriesByName('memsnap:request:' + arguments[0])
            .filter(e => e.startTime >= arguments[1]).length;",
        vec![json!(kind), json!(since)],
    )
    .await
    .expect("reading the page's request measures")
    .as_u64()
    .unwrap_or(u64::MAX)
}

async fn now(c: &Client) -> f64 {
    c.execute("return performance.now();", vec![])
        .await
        .expect("reading the page's clock")
        .as_f64()
        .unwrap_or(0.0)
}

/// Waits until the timeline has drawn entries `start..end` (its `data-drawn`).
async fn wait_drawn(c: &Client, what: &str, start: usize, end: usize) {
    let want = format!("{start}-{end}");
    wait_until(&format!("the timeline drawn over {what}"), || {
        let want = want.clone();
        async move {
            let got = page::attr(c, "timeline", "data-drawn").await?;
            if got == want {
                Ok(())
            } else {
                Err(format!("data-drawn={got:?}, want {want:?}"))
            }
        }
    })
    .await;
}

/// Asks for entries `0..end` through the range filter's input, as a person typing it.
async fn set_range_end(c: &Client, end: usize) {
    page::find(c, "range-end").await;
    c.execute(
        "const i = document.querySelector('[data-testid=\"range-end\"]');
         i.value = String(arguments[0]);
         i.dispatchEvent(new Event('change', {bubbles: true}));",
        vec![json!(end)],
    )
    .await
    .expect("setting the range filter");
}

#[tokio::test(flavor = "current_thread")]
async fn the_open_answer_brings_segments_and_timeline() {
    let Some(dist) = dist_dir() else { return };
    let dir = scratch("page-first-screen");
    let a = dir.join("example.pickle");
    let b = dir.join("fixed-shape.pickle");
    let snap_a = built::capture(&["--scenario", "example"], &a);
    let snap_b = built::capture(&["--scenario", "fixed-shape"], &b);
    let (na, nb) = (snap_a.trace(0).len(), snap_b.trace(0).len());
    assert!(
        na > 4 && nb > 0 && na != nb,
        "the built files' traces must differ in length ({na}, {nb})"
    );

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;

    // The first file: both views drawn, and neither asked for on its own.
    let since = now(c).await;
    page::pick_file(c, &a).await;
    page::wait_file_name(c, "example.pickle").await;
    wait_drawn(c, "the first file's whole trace", 0, na).await;
    page::wait_shown(c, "example.pickle", &page::expected(&snap_a)).await;
    for kind in ["Segments", "Timeline"] {
        assert_eq!(
            requests_since(c, kind, since).await,
            0,
            "the page asked for {kind} although the open's answer brought it"
        );
    }

    // Zoomed, the timeline asks the worker itself.
    set_range_end(c, na / 2).await;
    wait_drawn(c, "the first half of the first file", 0, na / 2).await;
    assert_eq!(requests_since(c, "Timeline", since).await, 1);

    // The next file shows its own whole trace, from its open's answer.
    let since = now(c).await;
    page::pick_file(c, &b).await;
    page::wait_file_name(c, "fixed-shape.pickle").await;
    wait_drawn(c, "the second file's whole trace", 0, nb).await;
    page::wait_shown(c, "fixed-shape.pickle", &page::expected(&snap_b)).await;
    for kind in ["Segments", "Timeline"] {
        assert_eq!(requests_since(c, kind, since).await, 0, "{kind}");
    }
    site.browser.close().await;
}
