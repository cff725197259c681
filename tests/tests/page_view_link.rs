//! Views you can link to, in headless Chromium: an address with `?url=` and a device, a range,
//! an entry and an allocation opens that view; the address follows what is on screen, so a reload opens the
//! same view again; an address naming a device or entries the file lacks opens the file with a
//! note saying what was not restored. The file is a real fixture (cs336-d-fullstep).

use memsnap_tests::fixtures;
use memsnap_tests::web::browser::Browser;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, wait_until};
use memsnap_tests::web::server::StaticServer;

async fn wait_index(c: &fantoccini::Client, want: u64) {
    wait_until(&format!("the state slider at entry {want}"), || async {
        let got = page::attr(c, "state-at", "data-index").await?;
        if got == want.to_string() {
            Ok(())
        } else {
            Err(format!("data-index={got:?}"))
        }
    })
    .await;
}

/// Waits until the stack panel describes the allocation at `addr`.
async fn wait_picked(c: &fantoccini::Client, addr: &str) {
    wait_until(&format!("the stack panel on allocation {addr}"), || async {
        let t = page::text(c, "stack").await?;
        if t.contains(addr) {
            Ok(())
        } else {
            Err(t)
        }
    })
    .await;
}

async fn wait_address(c: &fantoccini::Client, has: &'static str, lacks: &'static str) -> String {
    wait_until(
        &format!("the address to hold {has:?} and not {lacks:?}"),
        || async {
            let url = c
                .current_url()
                .await
                .map_err(|e| e.to_string())?
                .to_string();
            if url.contains(has) && (lacks.is_empty() || !url.contains(lacks)) {
                Ok(url)
            } else {
                Err(url)
            }
        },
    )
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn the_address_keeps_and_restores_the_view() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let file = fixtures::real_dir().join("cs336-d-fullstep.pickle");
    let snap = page::load(&file);
    let n = snap.trace(0).len() as u64;
    let tl = memsnap_core::analysis::timeline::Timeline::build(&snap, 0);
    let picked = format!("{:#x}", tl.allocations.list[100].addr);
    let server =
        StaticServer::start(&dist, &[("/data/step.pickle", &file)]).expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;

    c.goto(&server.url("?url=data/step.pickle&device=0&start=1000&end=9000&entry=4000&alloc=100"))
        .await
        .unwrap();
    page::wait_file_name(c, "step.pickle").await;
    page::wait_drawn(c, "the linked range", 1000, 9000).await;
    wait_index(c, 4000).await;
    wait_picked(c, &picked).await;

    // The whole trace again: the address drops the range and keeps the entry and the file.
    page::click(c, "range-reset").await;
    page::wait_drawn(c, "the whole trace", 0, n).await;
    let url = wait_address(c, "alloc=100", "start=").await;
    assert!(url.contains("entry=4000"), "{url}");
    assert!(
        url.contains("url=data%2Fstep.pickle") || url.contains("url=data/step.pickle"),
        "{url}"
    );

    // A reload opens the same view.
    c.refresh().await.unwrap();
    page::wait_file_name(c, "step.pickle").await;
    page::wait_drawn(c, "the whole trace after a reload", 0, n).await;
    wait_index(c, 4000).await;
    wait_picked(c, &picked).await;
    page::find(c, "copy-link").await;

    // What the file lacks is named, and the rest opens.
    c.goto(&server.url(&format!(
        "?url=data/step.pickle&device=7&start=5&end={}&entry=abc&alloc=99999999",
        n + 10
    )))
    .await
    .unwrap();
    page::wait_file_name(c, "step.pickle").await;
    let note = wait_until("the note on what was not restored", || async {
        page::text(c, "link-note").await
    })
    .await;
    assert!(note.contains("device 7 (not in this file)"), "{note}");
    assert!(note.contains(&format!("entries 5 to {}", n + 10)), "{note}");
    assert!(note.contains("entry=abc (not a number)"), "{note}");
    assert!(
        note.contains("allocation 99999999 (not in this trace)"),
        "{note}"
    );
    page::wait_drawn(c, "the whole trace", 0, n).await;
    browser.close().await;
}
