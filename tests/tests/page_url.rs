//! `?url=` opens a file relative to the page, with the site under a sub-path (as on GitHub
//! Pages), and the bundled example opens with one click.

use memsnap_tests::fixtures::{self, workspace_root};
use memsnap_tests::web::browser::Browser;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, wait_until};
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

    page::click(c, "open-example").await;
    page::wait_file_name(c, "example.pickle").await;
    let example = workspace_root().join("app/assets/example.pickle");
    page::wait_shown(
        c,
        "the bundled example",
        &page::expected(&page::load(&example)),
    )
    .await;
    page::screenshot(c, "example").await;
    browser.close().await;
}
