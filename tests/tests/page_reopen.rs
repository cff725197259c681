//! Opening files one after another while the worker is part-way through the last one's
//! background analyses (the diagnosis, flame graph and anomalies run in slices: worker/paced.rs).
//! An open cancels what is under way; the page must end on the last file's own figures, from
//! core, with no error shown. The picks come 140–260 ms after each first paint, around when the
//! page sends its background requests (150 ms after the foreground goes idle), so some land in
//! the middle of one; whichever do, the figures checked must be the last file's.

use std::time::Duration;

use fantoccini::{Client, Locator};
use memsnap_core::analysis::anomalies::anomalies;
use memsnap_core::analysis::diagnosis::diagnose_unplanned;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};

async fn attr_u64(c: &Client, id: &str, name: &str) -> Result<u64, String> {
    let v = page::attr(c, id, name).await?;
    v.trim()
        .parse()
        .map_err(|e| format!("{id} {name}={v:?}: {e}"))
}

#[tokio::test(flavor = "current_thread")]
async fn the_last_file_opened_shows_its_own_analyses() {
    let Some(dist) = dist_dir() else { return };
    if fixtures::real_fixtures().is_none() {
        return;
    }
    let dir = fixtures::real_dir();
    let files = [
        dir.join("cs336-d-fullstep.pickle"),
        dir.join("cs336-c-medium512-training.pickle"),
    ];
    let snaps: Vec<_> = files.iter().map(|p| page::load(p)).collect();

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    let delays = [140u64, 160, 180, 200, 220, 240, 260];
    let mut last = 0;
    for (i, delay) in delays.iter().enumerate() {
        last = i % 2;
        let name = files[last]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        page::pick_file(c, &files[last]).await;
        page::wait_shown(c, &name, &page::expected(&snaps[last])).await;
        tokio::time::sleep(Duration::from_millis(*delay)).await;
    }

    // The last file's figures, as core computes them.
    let snap = &snaps[last];
    let tl = Timeline::build(snap, 0);
    let d = diagnose_unplanned(snap, 0, &tl);
    let a = anomalies(snap, 0, &tl);
    let want = (
        d.fragmentation.largest_free,
        tl.summary().peak_allocated,
        a.leak_suspects.len() as u64,
        a.pending_frees.len() as u64,
    );
    wait_until(
        "the last file's insights, flame graph and anomalies",
        || async {
            let largest = page::find_css(c, &format!("{} .size", testid("insight-largest-hole")))
                .await
                .attr("title")
                .await
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            let got = (
                largest
                    .trim_end_matches(" bytes")
                    .parse::<u64>()
                    .map_err(|e| format!("{largest:?}: {e}"))?,
                attr_u64(c, "flamegraph", "data-total").await?,
                attr_u64(c, "anomalies", "data-leaks").await?,
                attr_u64(c, "anomalies", "data-pending").await?,
            );
            if got == want {
                Ok(())
            } else {
                Err(format!("{got:?}, want {want:?}"))
            }
        },
    )
    .await;
    let errors = c
        .find_all(Locator::Css(&testid("load-error")))
        .await
        .expect("looking for an error");
    if let Some(e) = errors.first() {
        panic!("the page shows an error: {:?}", e.text().await);
    }
    site.browser.close().await;
}
