//! `?url=` opens a file relative to the page, with the site under a sub-path (as on GitHub
//! Pages), and the bundled example opens with one click.

use memsnap_core::analysis::oom::explain_oom;
use memsnap_tests::fixtures::{self, workspace_root};
use memsnap_tests::web::browser::Browser;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};
use memsnap_tests::web::server::StaticServer;

#[tokio::test(flavor = "current_thread")]
async fn url_parameter_and_example_open() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let file = fixtures::real_dir().join("select-n-multidevice.pickle");
    let server = StaticServer::start_at(
        &dist,
        "/org/memsnap/",
        &[("/org/memsnap/data/run.pickle", &file)],
    )
    .expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;

    c.goto(&server.url("org/memsnap/?url=data/run.pickle"))
        .await
        .unwrap();
    page::wait_file_name(c, "run.pickle").await;
    page::wait_shown(
        c,
        "run.pickle via ?url=",
        &page::expected(&page::load(&file)),
    )
    .await;
    page::screenshot(c, "url-parameter").await;

    // A URL that does not exist says so.
    c.goto(&server.url("org/memsnap/?url=data/missing.pickle"))
        .await
        .unwrap();
    let error = wait_until("load-error for a missing URL", || async {
        page::text(c, "load-error").await
    })
    .await;
    assert!(error.contains("404"), "{error:?}");

    // The example tells the seed's story: it opens on its OOM, at the failing entry, and the
    // replays show expandable segments avoiding it (core's verdicts).
    page::click(c, "open-example").await;
    page::wait_file_name(c, "example.pickle").await;
    let example = page::load(&workspace_root().join("app/assets/example.pickle"));
    let oom = explain_oom(&example, 0)
        .unwrap()
        .expect("the bundled example ends in an OOM");
    page::wait_shown(
        c,
        "the bundled example at its OOM",
        &page::expected_at_oom(&example),
    )
    .await;
    assert_eq!(
        page::attr(c, "oom", "data-entry").await.unwrap(),
        oom.entry.to_string()
    );
    let expandable = oom
        .verdicts
        .iter()
        .find(|v| v.change == "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")
        .expect("an expandable_segments replay");
    assert!(
        expandable.avoided,
        "the example's story: expandable segments avoid the OOM"
    );
    let shown = page::find_css(
        c,
        &format!(
            "{}[data-change=\"PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\"]",
            testid("oom-verdict")
        ),
    )
    .await;
    assert_eq!(
        shown.attr("data-avoided").await.unwrap().as_deref(),
        Some("true")
    );
    assert!(
        oom.pools.iter().all(|p| p.largest_free < oom.requested),
        "no hole fits the request"
    );
    page::screenshot(c, "example").await;
    browser.close().await;
}
