//! The segment view builds only the rows in its scroll box (issue 15: a file of 961 segments
//! built all 961 rows and 2,077 block elements before its first paint, because the box grew
//! to fit them). On a real fixture: the rows in the page stay a small window of the
//! segments, scrolling to the end shows the last segment by size, and the blocks drawn are
//! the segments' own (address, size, state from core's model). Hovering a block marks it
//! and shows its stack. Before the pick, the page has run its warm-up once.

use std::collections::HashMap;

use fantoccini::Client;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};
use serde_json::Value;

async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.expect("running a script")
}

/// `[rows, blocks]` in the page now.
async fn counts(c: &Client) -> (u64, u64) {
    let v = js(
        c,
        "return [document.querySelectorAll('.seg-row').length, \
                 document.querySelectorAll('[data-testid=\"block\"]').length];",
    )
    .await;
    (v[0].as_u64().unwrap_or(0), v[1].as_u64().unwrap_or(0))
}

#[tokio::test(flavor = "current_thread")]
async fn segment_rows_are_a_window_and_blocks_are_the_models() {
    let Some(dist) = dist_dir() else { return };
    if fixtures::real_fixtures().is_none() {
        return;
    }
    let file = fixtures::real_dir().join("cs336-a-2.7b-forward.pickle");
    let snapshot = page::load(&file);
    let device = snapshot.devices().first().copied().unwrap_or(0);
    let segments: Vec<_> = snapshot
        .segments
        .iter()
        .filter(|s| s.device.unwrap_or(0) == device)
        .collect();
    assert!(segments.len() > 500, "the fixture has many segments");
    // Every block of the device by address: (size, state).
    let mut blocks = HashMap::new();
    for s in &segments {
        for (b, address) in s
            .blocks
            .iter()
            .zip(memsnap_core::analysis::intervals::block_addresses(s))
        {
            blocks.insert(address, (b.size, b.state.as_str().to_string()));
        }
    }

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    // The worker's warm-up is done and the page has rehearsed its snapshot out of sight, once
    // (app/src/rehearsal.rs).
    wait_until("the page's rehearsal", || async {
        match js(
            c,
            "return performance.getEntriesByName('memsnap:rehearsal').length;",
        )
        .await
        {
            Value::Number(n) if n.as_u64() == Some(1) => Ok(()),
            other => Err(format!("{other}")),
        }
    })
    .await;
    page::pick_file(c, &file).await;
    page::wait_shown(c, "cs336-a-2.7b-forward.pickle", &page::expected(&snapshot)).await;
    let view = page::find(c, "segment-view").await;
    assert_eq!(
        view.attr("data-segments").await.unwrap(),
        Some(segments.len().to_string())
    );

    let (rows, drawn) = wait_until("the first rows", || async {
        match counts(c).await {
            (0, _) => Err("no rows yet".to_string()),
            n => Ok(n),
        }
    })
    .await;
    assert!(
        rows < 80,
        "{rows} rows of {} segments in the page: the view is not windowed",
        segments.len()
    );
    assert!(drawn > 0);

    // Each drawn block is the model's block at that address.
    let check_blocks = || async {
        for b in page::find_all_css(c, &testid("block")).await {
            let num = |v: Option<String>| v.and_then(|v| v.parse::<u64>().ok()).unwrap();
            let address = num(b.attr("data-address").await.unwrap());
            let size = num(b.attr("data-size").await.unwrap());
            let state = b.attr("data-state").await.unwrap().unwrap();
            assert_eq!(
                blocks.get(&address),
                Some(&(size, state.clone())),
                "block at {address:#x}"
            );
        }
    };
    check_blocks().await;

    // Hover marks the block (one class on the bar's child) and shows its stack: the widest
    // block drawn, so the pointer lands on it and not on a 1-pixel neighbour.
    let mut widest = None;
    for b in page::find_all_css(c, &testid("block")).await {
        let size: u64 = b.attr("data-size").await.unwrap().unwrap().parse().unwrap();
        if widest.as_ref().is_none_or(|(s, _)| size > *s) {
            widest = Some((size, b));
        }
    }
    let (_, block) = widest.expect("the segment has blocks");
    let address = block.attr("data-address").await.unwrap().unwrap();
    page::hover(c, block).await;
    let hex = format!("{:#x}", address.parse::<u64>().unwrap());
    wait_until("the stack panel to show the hovered block", || async {
        let t = page::text(c, "stack").await?;
        if t.contains(&hex) {
            Ok(())
        } else {
            Err(t)
        }
    })
    .await;
    let marked = js(
        c,
        "return Array.from(document.querySelectorAll('.block.hovered')).map(b => b.dataset.address);",
    )
    .await;
    assert_eq!(marked, serde_json::json!([address]));
    // Scrolled to the end: the smallest segment (the view sorts by size) is drawn, and the
    // window is still a window.
    js(
        c,
        "const s = document.querySelector('.seg-scroll'); s.scrollTop = s.scrollHeight; \
         s.dispatchEvent(new Event('scroll')); return null;",
    )
    .await;
    let smallest = segments
        .iter()
        .min_by_key(|s| (s.total_size, std::cmp::Reverse(s.address)))
        .unwrap();
    let css = format!(
        "[data-testid=\"segment\"][data-address=\"{}\"]",
        smallest.address
    );
    page::find_css(c, &css).await;
    let (rows, _) = counts(c).await;
    assert!(rows < 80, "{rows} rows after scrolling");
    check_blocks().await;

    site.browser.close().await;
}
