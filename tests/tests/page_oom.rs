//! The OOM panel on a two-GPU file built with `capture` whose OOM is on cuda:1: the page opens
//! on cuda:1 (not device 0) and at the failing entry, and the panel's figures, free blocks and
//! replay verdicts are core's `analysis::oom` result, read from `data-*` attributes that carry
//! exact bytes. Screenshots: target/screenshots/oom-*.png.

use memsnap_core::analysis::oom::explain_ooms;
use memsnap_tests::built;
use memsnap_tests::fixtures::scratch;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};

/// `(attribute, value)` of every element matching `css`, in page order.
#[tokio::test(flavor = "current_thread")]
async fn opens_on_the_oom_device_and_explains_it() {
    let Some(dist) = dist_dir() else { return };
    let dir = scratch("page-oom");
    let file = built::oom_on_cuda1(&dir);
    let snapshot = page::load(&file);
    let ooms = explain_ooms(&snapshot).expect("core explains the OOM");
    assert_eq!(ooms.len(), 1);
    let o = &ooms[0];
    assert_eq!(o.device, 1, "the built file's OOM is on cuda:1");
    assert!(
        snapshot.devices().contains(&0),
        "the built file has a device 0 too"
    );

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &file).await;
    page::wait_file_name(c, "oom-cuda1.pickle").await;

    // The page chose cuda:1 and shows its segments.
    wait_until("the device picker on cuda:1", || async {
        let v = page::find(c, "device-picker")
            .await
            .prop("value")
            .await
            .map_err(|e| e.to_string())?;
        match v.as_deref() {
            Some("1") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    wait_until("the OOM panel for cuda:1", || async {
        match page::attr(c, "oom", "data-device").await?.as_str() {
            "1" => Ok(()),
            other => Err(other.to_string()),
        }
    })
    .await;

    // The panel's figures are core's, to the byte.
    let want = [
        ("data-entry", o.entry.to_string()),
        ("data-requested", o.requested.to_string()),
        ("data-device-free", o.device_free.unwrap().to_string()),
        ("data-reserved", o.reserved.to_string()),
        ("data-allocated", o.allocated.to_string()),
        ("data-releasable", o.releasable.to_string()),
        ("data-capacity", o.capacity.to_string()),
        ("data-live-bytes", o.live_bytes.to_string()),
        ("data-planned-arena", o.planned_arena.to_string()),
    ];
    for (name, value) in &want {
        assert_eq!(&page::attr(c, "oom", name).await.unwrap(), value, "{name}");
    }
    let pools = page::rows(
        c,
        &testid("oom-pool"),
        &["data-pool", "data-stream", "data-largest", "data-unfit"],
    )
    .await;
    let want_pools: Vec<Vec<String>> = o
        .pools
        .iter()
        .map(|p| {
            vec![
                p.pool.clone(),
                p.stream.to_string(),
                p.largest_free.to_string(),
                p.unfit.as_str().to_string(),
            ]
        })
        .collect();
    assert_eq!(pools, want_pools);
    let verdicts = page::rows(c, &testid("oom-verdict"), &["data-change", "data-avoided"]).await;
    let want_verdicts: Vec<Vec<String>> = o
        .verdicts
        .iter()
        .map(|v| vec![v.change.clone(), v.avoided.to_string()])
        .collect();
    assert_eq!(verdicts, want_verdicts);
    let live = page::rows(c, &testid("oom-live"), &["data-bytes"]).await;
    let want_live: Vec<Vec<String>> = o.live.iter().map(|l| vec![l.bytes.to_string()]).collect();
    assert_eq!(live, want_live);

    // The page opened at the failing entry: the slider shows the state the request found.
    wait_until("the state slider at the OOM entry", || async {
        let i = page::attr(c, "state-at", "data-index").await?;
        if i == o.entry.to_string() {
            Ok(())
        } else {
            Err(i)
        }
    })
    .await;
    let at_oom = memsnap_core::analysis::state_at::state_at(&snapshot, 1, o.entry)
        .len()
        .to_string();
    wait_until("cuda:1's segments at the OOM", || async {
        let n = page::attr(c, "segment-view", "data-segments").await?;
        if n == at_oom {
            Ok(())
        } else {
            Err(n)
        }
    })
    .await;
    page::scroll_to(c, "oom").await;
    page::screenshot(c, "oom-panel").await;
    page::scroll_to(c, "segment-view").await;
    page::screenshot(c, "oom-segments").await;
    site.browser.close().await;
}
