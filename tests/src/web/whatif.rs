//! The page's what-if panel driven as a user does (expandable segments toggled, Run) and its
//! figures checked against core's replay of the same change.

use fantoccini::Client;
use memsnap_core::analysis::anomalies::anomalies;
use memsnap_core::analysis::replay::{device_config, what_if, Start};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::Snapshot;

use super::page::{self, wait_until};

/// An attribute of the element with test id `id`, as a number.
pub async fn attr_u64(c: &Client, id: &str, name: &str) -> Result<u64, String> {
    let v = page::attr(c, id, name).await?;
    v.trim()
        .parse()
        .map_err(|e| format!("{id} {name}={v:?}: {e}"))
}

/// Toggles expandable segments in the what-if panel, runs it, and asserts the result's peak
/// reserved and OOM count are core's `what_if` of device 0 under that setting (on the device
/// size the page uses: free + reserved at the worst OOM).
pub async fn toggle_expandable_matches_core(c: &Client, snapshot: &Snapshot, tl: &Timeline) {
    let expandable_before = page::find(c, "whatif-expandable")
        .await
        .prop("checked")
        .await
        .unwrap()
        == Some("true".into());
    page::scroll_to(c, "whatif").await;
    page::click(c, "whatif-expandable").await;
    page::click(c, "whatif-run").await;
    let (reserved, ooms, start) = wait_until("the what-if result", || async {
        Ok((
            attr_u64(c, "whatif-result", "data-peak-reserved").await?,
            attr_u64(c, "whatif-result", "data-ooms").await?,
            page::attr(c, "whatif-result", "data-start").await?,
        ))
    })
    .await;
    let capacity = anomalies(snapshot, 0, tl)
        .ooms
        .iter()
        .filter_map(|o| o.device_free.map(|f| f + o.reserved))
        .max();
    let mut config = device_config(snapshot, 0).unwrap().config;
    config.expandable_segments = !expandable_before;
    let start = if start == "clean" {
        Start::Clean
    } else {
        Start::Reconstructed
    };
    let native = what_if(snapshot, 0, config, start, capacity).unwrap();
    assert_eq!(
        reserved, native.figures.peak_reserved,
        "the what-if's peak reserved"
    );
    assert_eq!(ooms, native.figures.ooms, "the what-if's OOMs");
}
