//! Numbers people read: sizes in the side bar and panels read as people say them ("MiB",
//! "GiB") and hold the exact byte count on hover (`title`), equal to core's figure. Checks the
//! diagnostics panel and the analysis side bar on a real fixture; every panel shows sizes
//! through the same helper (app/src/views/size.rs). Screenshot: target/screenshots/sizes.png.

use fantoccini::Client;
use memsnap_core::analysis::diagnosis::diagnose_unplanned;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};

/// (text, title) of every size inside the element with `id`, in page order.
async fn sizes(c: &Client, id: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for e in page::find_all_css(c, &format!("{} .size", testid(id))).await {
        let text = e.text().await.map_err(|e| e.to_string())?;
        let title = e.attr("title").await.map_err(|e| e.to_string())?;
        out.push((text, title.unwrap_or_default()));
    }
    Ok(out)
}

/// Waits until the sizes in `id` are `want` bytes, each said in MiB or GiB.
async fn wait_sizes(c: &Client, id: &str, want: &[u64]) {
    let titles: Vec<String> = want.iter().map(|b| format!("{b} bytes")).collect();
    let got = wait_until(&format!("sizes of {id}: {titles:?}"), || async {
        let got = sizes(c, id).await?;
        if got.iter().map(|(_, t)| t).eq(titles.iter()) {
            Ok(got)
        } else {
            Err(format!("{got:?}"))
        }
    })
    .await;
    for (text, _) in got {
        assert!(
            text.ends_with(" MiB") || text.ends_with(" GiB"),
            "{id}: {text:?} is not said in MiB or GiB"
        );
    }
}

#[tokio::test(flavor = "current_thread")]
async fn sizes_read_in_units_with_exact_bytes_on_hover() {
    let Some(dist) = dist_dir() else { return };
    if fixtures::real_fixtures().is_none() {
        return;
    }
    let path = fixtures::real_dir().join("adam-small-settings.pickle");
    let snap = page::load(&path);
    let want = page::expected(&snap);
    let d = diagnose_unplanned(&snap, 0, &Timeline::build(&snap, 0));
    let f = &d.fragmentation;
    assert!(
        f.largest_free >= 1 << 20 && f.releasable >= 1 << 20,
        "{f:?}"
    );

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &path).await;
    page::wait_shown(c, "adam-small-settings.pickle", &want).await;

    // Diagnostics: the reserved bytes as said, with core's count on hover.
    let reserved = page::find_css(c, ".diagnostics .number .human .size").await;
    assert_eq!(
        reserved.attr("title").await.unwrap().as_deref(),
        Some(format!("{} bytes", want.reserved).as_str())
    );
    // The side bar: largest hole of total free, and what empty_cache would release.
    wait_sizes(c, "insight-largest-hole", &[f.largest_free, f.free]).await;
    wait_sizes(c, "insight-releasable", &[f.releasable]).await;
    page::scroll_to(c, "insights").await;
    page::screenshot(c, "sizes").await;
    site.browser.close().await;
}
