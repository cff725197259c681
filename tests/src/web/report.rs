//! Checking the self-contained report (`memsnap html`, `memsnap.show`) in Chromium: the
//! network turned off, what the page must show for the file it carries, and where the page's
//! resources came from.

use std::path::Path;

use fantoccini::{Client, Locator};
use memsnap_core::analysis::oom::explain_ooms;
use serde_json::json;

use super::cdp;
use super::page::{self, wait_until, Expected};

/// Turns the session's network off (DevTools' offline emulation): a request to any host fails.
pub async fn network_off(c: &Client) {
    cdp::execute(c, "Network.enable", json!({}))
        .await
        .expect("enabling DevTools' network domain");
    cdp::execute(
        c,
        "Network.emulateNetworkConditions",
        json!({ "offline": true, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1 }),
    )
    .await
    .expect("turning the network off");
}

/// What the page must show for `file` as it opens: the OOM's device at the failing entry when
/// the file has one, else its first device as dumped; the OOM's `(entry, requested)`; and
/// whether that device has a trace (entries other than `snapshot` markers).
pub fn opening(file: &Path) -> (Expected, Option<(u64, u64)>, bool) {
    let snap = page::load(file);
    let ooms = explain_ooms(&snap).expect("core explains the file's OOMs");
    let traced = |device: i64| usize::try_from(device).is_ok_and(|d| snap.traced_entries(d) > 0);
    match ooms.first() {
        Some(o) => (
            page::expected_at(&snap, o.device, o.entry),
            Some((o.entry as u64, o.requested)),
            traced(o.device),
        ),
        None => {
            let device = snap.devices().first().copied().unwrap_or(0);
            (page::expected(&snap), None, traced(device))
        }
    }
}

/// Waits until the page (or the frame the client is in) shows `file`, opened as `name`:
/// core's figures in the segment view and the diagnostics, a drawn timeline when the device has
/// a trace (else the line saying it has none), and the OOM panel at core's failing entry when it
/// has one. Fails if the report's bootstrap failed or it offers the example (which a report
/// cannot fetch).
pub async fn wait_opened(c: &Client, name: &str, file: &Path) {
    let (want, oom, traced) = opening(file);
    page::wait_file_name(c, name).await;
    page::wait_shown(c, name, &want).await;
    if !traced {
        page::find(c, "no-trace").await;
    } else {
        wait_until(&format!("{name}: the timeline drawn"), || async {
            match page::attr(c, "timeline", "data-drawn").await {
                Ok(d) if d.contains('-') => Ok(()),
                Ok(d) => Err(d),
                Err(e) => Err(e),
            }
        })
        .await;
    }
    if let Some((entry, requested)) = oom {
        let want = (entry.to_string(), requested.to_string());
        wait_until(&format!("{name}: the OOM panel"), || async {
            let got = (
                page::attr(c, "oom", "data-entry").await?,
                page::attr(c, "oom", "data-requested").await?,
            );
            if got == want {
                Ok(())
            } else {
                Err(format!("{got:?}"))
            }
        })
        .await;
    }
    for (id, what) in [
        ("report-error", "the report's bootstrap failed"),
        (
            "open-example",
            "a report offers the example, which it cannot fetch",
        ),
    ] {
        assert!(
            c.find(Locator::Css(&page::testid(id))).await.is_err(),
            "{name}: {what}"
        );
    }
}

/// Every resource the document loaded (`performance` resource entries) came from the file
/// itself: `blob:`, `data:` or `own` (the report's file:// address).
pub async fn assert_loaded_nothing_outside(c: &Client, name: &str, own: &str) {
    let loaded = c
        .execute(
            "return performance.getEntriesByType('resource').map(e => e.name);",
            vec![],
        )
        .await
        .expect("listing the page's resources");
    for r in loaded.as_array().into_iter().flatten() {
        let r = r.as_str().unwrap_or_default();
        assert!(
            r.starts_with("blob:") || r.starts_with("data:") || r == own,
            "{name}: the report loaded {r} from outside itself"
        );
    }
}
