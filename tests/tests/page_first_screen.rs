//! The first screen comes with the open's answer (`protocol::FirstScreen`): the opening
//! device's segments and its whole timeline are drawn without a request of their own, and a
//! file opened while the last one was zoomed shows its own whole trace, not the last file's
//! range; so does a `?url=` open. The files are built with `capture` (the allocator model).

use std::path::Path;

use fantoccini::Client;
use memsnap_core::snapshot::Snapshot;
use memsnap_tests::built;
use memsnap_tests::fixtures::scratch;
use memsnap_tests::web::browser::Browser;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page;
use memsnap_tests::web::perf;
use memsnap_tests::web::server::StaticServer;
use serde_json::json;

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

/// Checks that the page asked for neither first-screen view on its own since `name` was
/// chosen: the open's answer brought both.
async fn assert_no_view_requests(c: &Client, name: &str) {
    for kind in ["Segments", "Timeline"] {
        assert_eq!(
            perf::requests_of_kind_since_chosen(c, kind).await,
            0,
            "{name}: the page asked for {kind} although the open's answer brought it"
        );
    }
}

/// Picks `path` and waits until the page shows it, its timeline drawn whole (`entries`), with
/// no view asked for on its own.
async fn open_drawn_whole(c: &Client, path: &Path, snapshot: &Snapshot, entries: usize) {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    page::pick_file(c, path).await;
    page::wait_file_name(c, &name).await;
    page::wait_drawn(c, &format!("{name}'s whole trace"), 0, entries as u64).await;
    page::wait_shown(c, &name, &page::expected(snapshot)).await;
    assert_no_view_requests(c, &name).await;
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
    // A person picks a file into a page that is laid out (the timeline's plot measured); and
    // the rehearsal's own requests come before the pick.
    perf::rehearsal_ms(c).await;

    // The first file: both views drawn, and neither asked for on its own.
    open_drawn_whole(c, &a, &snap_a, na).await;

    // Zoomed, the timeline asks the worker itself.
    set_range_end(c, na / 2).await;
    page::wait_drawn(c, "the first half of the first file", 0, (na / 2) as u64).await;
    assert_eq!(perf::requests_of_kind_since_chosen(c, "Timeline").await, 1);

    // The next file shows its own whole trace, from its open's answer.
    open_drawn_whole(c, &b, &snap_b, nb).await;
    site.browser.close().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_url_open_brings_its_first_screen_too() {
    let Some(dist) = dist_dir() else { return };
    let dir = scratch("page-first-screen-url");
    let file = dir.join("fixed-shape.pickle");
    let snapshot = built::capture(&["--scenario", "fixed-shape"], &file);
    let entries = snapshot.trace(0).len();
    let server = StaticServer::start(&dist, &[("/data/run.pickle", &file)]).expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;
    c.goto(&server.url("?url=data/run.pickle"))
        .await
        .expect("opening the page with ?url=");
    page::wait_file_name(c, "run.pickle").await;
    page::wait_drawn(c, "run.pickle's whole trace", 0, entries as u64).await;
    page::wait_shown(c, "run.pickle", &page::expected(&snapshot)).await;
    // No file is chosen for a `?url=` open: the count runs from the page's load.
    assert_no_view_requests(c, "?url=data/run.pickle").await;
    browser.close().await;
}
