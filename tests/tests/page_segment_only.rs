//! Segment-only files (no trace, or a trace of one `snapshot` marker): the timeline panel is
//! one line saying so (no canvas, no state slider), the flame graph weighs the dump's live
//! blocks (core's figure), the top frames name their stacks, and the anomalies that need a
//! trace say so; top frames in the side bar wrap instead of being cut, and its sentences give
//! sizes in units. Real fixtures: the legacy torch 2.0 file (one `snapshot` entry) and a bare
//! `memory_snapshot()` list. Screenshots: target/screenshots/segment-only-*.png.

use memsnap_core::analysis::timeline::Timeline;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};

/// "16777216 B": five or more digits then " B".
fn has_long_byte_count(text: &str) -> bool {
    text.match_indices(" B").any(|(i, _)| {
        let digits = text[..i]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
        digits >= 5
    })
}

const FILES: &[&str] = &[
    "legacy-history-oom.pickle",
    "layoutediting-segment-list.pkl",
];

#[tokio::test(flavor = "current_thread")]
async fn no_trace_gives_up_the_timeline() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    for name in FILES {
        let path = fixtures::real_dir().join(name);
        let snap = page::load(&path);
        let device = snap.devices().first().copied().unwrap_or(0);
        let tl = Timeline::build(&snap, device as usize);
        let n = tl.allocations.trace_len;
        let dump_live: u64 = (tl.allocations.list.iter())
            .filter(|a| a.end == n)
            .map(|a| a.size)
            .sum();
        assert!(dump_live > 0, "{name}: no live block at the dump");

        page::pick_file(c, &path).await;
        page::wait_shown(c, name, &page::expected(&snap)).await;
        page::find(c, "no-trace").await;
        let canvases = c
            .find_all(fantoccini::Locator::Css(&testid("timeline")))
            .await
            .unwrap();
        assert!(
            canvases.is_empty(),
            "{name}: a timeline canvas without a trace"
        );
        let sliders = c
            .find_all(fantoccini::Locator::Css(&testid("state-slider")))
            .await
            .unwrap();
        assert!(sliders.is_empty(), "{name}: a state slider without a trace");
        wait_until(&format!("{name}: the flame graph of the dump"), || async {
            let t = page::attr(c, "flamegraph", "data-total").await?;
            if t == dump_live.to_string() {
                Ok(())
            } else {
                Err(t)
            }
        })
        .await;
        let frames = wait_until(&format!("{name}: top frames"), || async {
            page::text(c, "insight-peak-frames").await
        })
        .await;
        assert!(
            !frames.contains("<no stack>") || name.ends_with(".pkl"),
            "{frames}"
        );
        // Numbers people read: long frames wrap rather than being cut, and the side bar's
        // sentences give sizes in units, not as long byte counts.
        let cut: bool = serde_json::from_value(
            c.execute(
                &format!(
                    "return [...document.querySelectorAll('{} li')]\
                     .some(li => li.scrollWidth > li.clientWidth + 1);",
                    testid("insight-peak-frames")
                ),
                vec![],
            )
            .await
            .unwrap(),
        )
        .unwrap();
        assert!(!cut, "{name}: a top frame is cut off");
        page::scroll_to(c, "insight-peak-frames").await;
        page::screenshot(c, &format!("segment-only-frames-{name}")).await;
        let insights = page::text(c, "insights").await.unwrap();
        assert!(!has_long_byte_count(&insights), "{name}: {insights}");
        page::find(c, "anomalies-no-trace").await;
        page::scroll_to(c, "no-trace").await;
        page::screenshot(c, &format!("segment-only-{name}")).await;
    }
    site.browser.close().await;
}
