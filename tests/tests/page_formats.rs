//! Real files in the forms the page must tell apart, in headless Chromium:
//! - the legacy fixture (torch 2.0 `history` blocks, no addresses) written as JSON by CPython
//!   (tests/py/to_json.py): it opens with core's numbers, hovering a live block shows the
//!   stack from its history, its address and its allocation history;
//! - a real file with every third segment moved to private pool (1, 7) (no real fixture has
//!   a CUDA-graph pool; built here with core's writer): the pools panel shows core's
//!   per-pool figures, the pool filter shows only that pool's segments, and a hole there says
//!   it cannot serve ordinary allocations.
//!
//! Screenshots: target/screenshots/formats-*.png.

use fantoccini::Client;
use memsnap_core::analysis::pools::pool_totals;
use memsnap_core::snapshot;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};
use memsnap_tests::{fixtures, python};

/// The stack panel's text once it names `what`.
async fn stack_showing(c: &Client, what: &str) -> String {
    wait_until(&format!("the stack panel to show {what}"), || async {
        let t = page::text(c, "stack").await?;
        if t.contains(what) {
            Ok(t)
        } else {
            Err(t)
        }
    })
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn legacy_json_and_private_pools() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let dir = fixtures::scratch("page-formats");
    let legacy = fixtures::real_dir().join("legacy-history-oom.pickle");
    let legacy_json = dir.join("legacy-history-oom.json");
    python::run("to_json.py", &[&legacy, &legacy_json]);
    let legacy_snap = page::load(&legacy);

    let mut pooled = page::load(&fixtures::real_dir().join("cs336-c-medium128-inference.pickle"));
    for (i, s) in pooled.segments.iter_mut().enumerate() {
        if i % 3 == 0 {
            s.segment_pool_id = Some((1, 7));
        }
    }
    let pooled_path = dir.join("graph-pool.pickle");
    std::fs::write(&pooled_path, snapshot::write(&pooled)).unwrap();

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;

    // Legacy JSON: the largest live block's stack is its history's, with its history listed.
    page::open_file(c, &legacy_json, &legacy_snap).await;
    let seg = legacy_snap
        .segments
        .iter()
        .max_by_key(|s| s.total_size)
        .unwrap();
    let (block, address) = seg
        .blocks
        .iter()
        .zip(memsnap_core::analysis::intervals::block_addresses(seg))
        .find(|(b, _)| b.state.is_active())
        .unwrap();
    let el = page::find_css(
        c,
        &format!("[data-testid=\"block\"][data-address=\"{address}\"]"),
    )
    .await;
    page::hover(c, el).await;
    let text = stack_showing(c, &format!("{address:#x}")).await;
    let frames: Vec<String> = legacy_snap
        .stacks
        .frames_of(
            block
                .frames
                .expect("the legacy block's stack, from its history"),
        )
        .map(|f| format!("{}:{}:{}", f.filename, f.line, f.name))
        .collect();
    for f in &frames {
        assert!(text.contains(f.as_str()), "{f} missing from {text}");
    }
    assert!(text.contains("History"), "{text}");
    page::screenshot(c, "formats-legacy-json-hover").await;

    // Private pools: per-pool figures are core's; the filter keeps only pool (1, 7).
    page::open_file(c, &pooled_path, &pooled).await;
    let want: Vec<Vec<String>> = pool_totals(&pooled)
        .iter()
        .map(|p| {
            vec![
                format!("{},{}", p.pool_id.0, p.pool_id.1),
                p.reserved_bytes.to_string(),
                p.allocated_bytes.to_string(),
                p.free_bytes.to_string(),
            ]
        })
        .collect();
    let got = wait_until("the pools panel", || async {
        let mut rows = Vec::new();
        for r in c
            .find_all(fantoccini::Locator::Css(&testid("pool-row")))
            .await
            .map_err(|e| e.to_string())?
        {
            let mut row = Vec::new();
            for a in [
                "data-pool-id",
                "data-reserved",
                "data-allocated",
                "data-free",
            ] {
                row.push(
                    r.attr(a)
                        .await
                        .map_err(|e| e.to_string())?
                        .unwrap_or_default(),
                );
            }
            rows.push(row);
        }
        if rows.is_empty() {
            Err("no pool rows".into())
        } else {
            Ok(rows)
        }
    })
    .await;
    assert_eq!(got, want);
    page::find(c, "segment-pool")
        .await
        .select_by_value("1,7")
        .await
        .expect("choosing pool (1, 7)");
    let pools = wait_until("only pool (1, 7) in the segment view", || async {
        let mut ids = Vec::new();
        for s in c
            .find_all(fantoccini::Locator::Css(&testid("segment")))
            .await
            .map_err(|e| e.to_string())?
        {
            ids.push(
                s.attr("data-pool-id")
                    .await
                    .map_err(|e| e.to_string())?
                    .unwrap_or_default(),
            );
        }
        if !ids.is_empty() && ids.iter().all(|i| i == "1,7") {
            Ok(ids)
        } else {
            Err(format!("{ids:?}"))
        }
    })
    .await;
    assert!(!pools.is_empty());
    let hole = page::find_css(
        c,
        &format!(
            "{} {}[data-state=\"inactive\"]",
            testid("segment"),
            testid("block")
        ),
    )
    .await;
    page::hover(c, hole).await;
    let text = stack_showing(c, "private (1, 7)").await;
    assert!(text.contains("not ordinary"), "{text}");
    page::screenshot(c, "formats-private-pool").await;
    site.browser.close().await;
}
