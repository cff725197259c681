//! The analysis views on a real training step: the timeline canvas is drawn, hovering or
//! clicking a band shows its frames in `stack`, the state slider rebuilds the segment view with
//! the counts core's `state_at` gives, a what-if run shows core's replay figures, and the flame
//! graph and anomalies show core's numbers. Screenshots go to target/screenshots/.

use std::collections::HashSet;

use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
use fantoccini::Client;
use memsnap_core::analysis::anomalies::anomalies;
use memsnap_core::analysis::diagnosis::diagnose_unplanned;
use memsnap_core::analysis::state_at::state_at;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};
use memsnap_tests::web::whatif::{self, attr_u64};

const FILE: &str = "cs336-d-fullstep.pickle";

async fn scroll_to(c: &Client, id: &str) {
    page::find(c, id).await;
    c.execute(
        &format!(
            "document.querySelector('{}').scrollIntoView({{block: 'start'}});",
            testid(id)
        ),
        vec![],
    )
    .await
    .expect("scrolling");
}

/// Sets an `<input type=range>` as dragging it would (an input event).
async fn slide(c: &Client, index: u64) {
    page::find(c, "state-slider").await;
    c.execute(
        &format!(
            "const s = document.querySelector('{}'); s.value = '{index}'; \
             s.dispatchEvent(new Event('input', {{bubbles: true}}));",
            testid("state-slider")
        ),
        vec![],
    )
    .await
    .expect("moving the slider");
}

#[tokio::test(flavor = "current_thread")]
async fn analysis_views_on_a_training_step() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let file = fixtures::real_dir().join(FILE);
    let snapshot = page::load(&file);
    let tl = Timeline::build(&snapshot, 0);
    let n = tl.len() as u64;
    let frames: HashSet<String> = snapshot
        .stacks
        .all_frames()
        .iter()
        .map(|f| format!("{}:{}:{}", f.filename, f.line, f.name))
        .collect();

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &file).await;
    page::wait_shown(c, FILE, &page::expected(&snapshot)).await;

    // The timeline canvas is drawn: many non-blank pixels in its plot.
    wait_until("the timeline's data", || async {
        match page::attr(c, "timeline", "data-ready").await?.as_str() {
            "true" => Ok(()),
            other => Err(other.to_string()),
        }
    })
    .await;
    let painted = wait_until("a drawn timeline", || async {
        let v = c
            .execute(
                &format!(
                    "const cv = document.querySelector('{}'); const d = cv.getContext('2d')\
                     .getImageData(0, 0, cv.width, cv.height).data; let k = 0; \
                     for (let i = 3; i < d.length; i += 4) if (d[i] > 0) k++; \
                     return [k, cv.width * cv.height];",
                    testid("timeline")
                ),
                vec![],
            )
            .await
            .map_err(|e| e.to_string())?;
        let k = v[0].as_u64().unwrap_or(0);
        let all = v[1].as_u64().unwrap_or(1);
        if k * 10 > all {
            Ok((k, all))
        } else {
            Err(format!("{k} of {all} pixels painted"))
        }
    })
    .await;
    eprintln!("timeline: {} of {} pixels painted", painted.0, painted.1);
    // The peak shown is core's.
    let peak = tl.summary();
    assert_eq!(
        attr_u64(c, "peak", "data-allocated").await.unwrap(),
        peak.peak_allocated
    );
    assert_eq!(
        Some(attr_u64(c, "peak", "data-index").await.unwrap() as usize),
        peak.peak_allocated_index
    );

    // Clicking a band (low in the stack, where long-lived allocations are) shows its frames.
    let canvas = page::find(c, "timeline").await;
    let mut shown = None;
    'search: for dy in [95.0, 80.0, 60.0, 40.0] {
        for dx in [0.0, -200.0, 200.0, -350.0, 350.0] {
            let click = MouseActions::new("mouse".into())
                .then(PointerAction::MoveToElement {
                    element: canvas.clone(),
                    duration: None,
                    x: dx,
                    y: dy,
                })
                .then(PointerAction::Down {
                    button: MOUSE_BUTTON_LEFT,
                })
                .then(PointerAction::Up {
                    button: MOUSE_BUTTON_LEFT,
                });
            c.perform_actions(click)
                .await
                .expect("clicking the timeline");
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
            let t = page::text(c, "stack").await.unwrap_or_default();
            if t.contains("Lifetime") && t.lines().any(|l| frames.contains(l.trim())) {
                shown = Some(t);
                break 'search;
            }
        }
    }
    let stack = shown.expect("a band's frames in the stack panel");
    assert!(stack.contains("Size"), "{stack}");
    page::screenshot(c, "views-timeline").await;

    // The slider rebuilds the segment view at an entry, as core's state_at does.
    for index in [n / 3, n / 3 + 1, 2 * n / 3] {
        slide(c, index).await;
        let native = state_at(&snapshot, 0, index as usize);
        let want = (
            native.len() as u64,
            native.iter().map(|s| s.blocks.len() as u64).sum::<u64>(),
        );
        wait_until(&format!("segments at entry {index}: {want:?}"), || async {
            let at = attr_u64(c, "state-at", "data-index").await?;
            let got = (
                attr_u64(c, "segment-view", "data-segments").await?,
                attr_u64(c, "segment-view", "data-blocks").await?,
            );
            if at == index && got == want {
                Ok(())
            } else {
                Err(format!("entry {at}: {got:?}"))
            }
        })
        .await;
    }
    scroll_to(c, "insights").await;
    scroll_to(c, "state-at").await;
    page::screenshot(c, "views-state-slider").await;

    // What-if: flip expandable_segments and run; the result is core's replay.
    wait_until("the what-if form", || async {
        page::attr(c, "whatif-run", "class").await.map(|_| ())
    })
    .await;
    // The file's own setting, as the form shows it once the insights arrived.
    wait_until("the insights", || async {
        page::text(c, "alloc-conf").await.map(|_| ())
    })
    .await;
    // The ranked fixes are core's verdicts, replayed in the worker: each one's setting and
    // the bytes its replay saved, and the ones tried that did not help.
    let verdicts = diagnose_unplanned(&snapshot, 0, &tl).verdicts;
    assert!(!verdicts.fixes.is_empty(), "{FILE} has fixes that help");
    let want = |fixes: &[memsnap_core::analysis::verdicts::Fix]| -> Vec<Vec<String>> {
        fixes
            .iter()
            .map(|f| vec![f.setting.clone(), f.saves.to_string()])
            .collect()
    };
    let shown = wait_until("the ranked fixes", || async {
        let got = page::rows(
            c,
            "[data-testid=insight-fixes] li",
            &["data-setting", "data-saves"],
        )
        .await;
        if got.is_empty() {
            Err("no fixes yet".to_string())
        } else {
            Ok(got)
        }
    })
    .await;
    assert_eq!(shown, want(&verdicts.fixes), "the page's fixes");
    let tried = page::rows(
        c,
        "[data-testid=insight-no-saving] li",
        &["data-setting", "data-saves"],
    )
    .await;
    assert_eq!(tried, want(&verdicts.no_saving), "the page's fixes tried");
    assert_eq!(
        page::text(c, "insight-try").await.ok(),
        verdicts.try_line.clone()
    );
    scroll_to(c, "insight-fixes").await;
    page::screenshot(c, "views-fixes").await;
    whatif::toggle_expandable_matches_core(c, &snapshot, &tl).await;
    scroll_to(c, "whatif-result").await;
    page::screenshot(c, "views-whatif").await;

    // Flame graph at the peak: core's live bytes; all frames shows more nodes.
    let filtered = wait_until("the flame graph", || async {
        let total = attr_u64(c, "flamegraph", "data-total").await?;
        let nodes = attr_u64(c, "flamegraph", "data-nodes").await?;
        if total == peak.peak_allocated && nodes > 1 {
            Ok(nodes)
        } else {
            Err(format!("{total} B in {nodes} nodes"))
        }
    })
    .await;
    scroll_to(c, "flamegraph").await;
    page::screenshot(c, "views-flamegraph").await;
    page::click(c, "flame-all-frames").await;
    wait_until("all frames in the flame graph", || async {
        let nodes = attr_u64(c, "flamegraph", "data-nodes").await?;
        if nodes > filtered {
            Ok(())
        } else {
            Err(format!("{nodes} nodes"))
        }
    })
    .await;
    // The nodes are one HTML string with one click handler: a click on a node's label shows
    // that node's frame (its title's first line, escaped in and read back unchanged).
    let label = page::find_css(
        c,
        "[data-testid=flamegraph] .flame-node[data-index='1'] span",
    )
    .await;
    let node = page::find_css(c, "[data-testid=flamegraph] .flame-node[data-index='1']").await;
    let title = node.attr("title").await.unwrap().expect("a node's title");
    let frame = title.lines().next().unwrap().to_string();
    assert!(
        frame.contains(':'),
        "a frame's file:line:name, got {title:?}"
    );
    label.click().await.expect("clicking a flame node");
    wait_until("the clicked flame node in the details", || async {
        let shown = page::text(c, "stack").await?;
        if shown.contains(&frame) && shown.contains("Weight") {
            Ok(())
        } else {
            Err(format!("details show {shown:?}"))
        }
    })
    .await;

    // Anomalies over the whole trace: core's counts.
    let a = anomalies(&snapshot, 0, &tl);
    wait_until("the anomalies", || async {
        let got = (
            attr_u64(c, "anomalies", "data-pending").await?,
            attr_u64(c, "anomalies", "data-leaks").await?,
            attr_u64(c, "anomalies", "data-ooms").await?,
        );
        let want = (
            a.pending_frees.len() as u64,
            a.leak_suspects.len() as u64,
            a.ooms.len() as u64,
        );
        if got == want {
            Ok(())
        } else {
            Err(format!("{got:?}, want {want:?}"))
        }
    })
    .await;
    scroll_to(c, "anomalies").await;
    page::screenshot(c, "views-anomalies").await;
    site.browser.close().await;
}
