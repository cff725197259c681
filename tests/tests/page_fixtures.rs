//! Every real fixture, opened through the page's file input, shows the counts and byte totals
//! memsnap-core computes natively for it, and the segment view draws only rows in view.

use std::collections::HashMap;

use fantoccini::Locator;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid};

#[tokio::test(flavor = "current_thread")]
async fn real_fixtures_show_core_numbers() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let Some(dist) = dist_dir() else { return };
    assert!(
        files.len() >= 5,
        "want at least five fixtures, found {}",
        files.len()
    );
    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;

    for file in &files {
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let snapshot = page::load(file);
        let want = page::expected(&snapshot);
        page::pick_file(c, file).await;
        page::wait_file_name(c, &name).await;
        page::wait_shown(c, &name, &want).await;

        // Drawn bars are real segments of the shown device, and there are no more of them than
        // fit the viewport (plus overscan) when the device has many.
        let device = snapshot.devices().first().copied().unwrap_or(0);
        let native: HashMap<u64, u64> = snapshot
            .segments
            .iter()
            .filter(|s| s.device.unwrap_or(0) == device)
            .map(|s| (s.address, s.total_size))
            .collect();
        let bars = c
            .find_all(Locator::Css(&testid("segment")))
            .await
            .expect("listing segment bars");
        assert!(
            want.segments == 0 || !bars.is_empty(),
            "{name}: no segment drawn"
        );
        assert!(
            bars.len() as u64 <= want.segments,
            "{name}: more bars than segments"
        );
        if want.segments > 200 {
            assert!(
                (bars.len() as u64) < want.segments,
                "{name}: all {} segments drawn, the view is not virtualised",
                want.segments
            );
        }
        for bar in &bars {
            let address: u64 = bar
                .attr("data-address")
                .await
                .ok()
                .flatten()
                .and_then(|a| a.parse().ok())
                .expect("data-address");
            let size: u64 = bar
                .attr("data-total-size")
                .await
                .ok()
                .flatten()
                .and_then(|a| a.parse().ok())
                .expect("data-total-size");
            assert_eq!(
                native.get(&address),
                Some(&size),
                "{name}: bar at {address:#x}"
            );
        }
        page::scroll_to(c, "segment-view").await;
        page::screenshot(c, &format!("fixture-{}", name.replace('.', "_"))).await;
    }
    site.browser.close().await;
}
