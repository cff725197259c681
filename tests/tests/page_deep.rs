//! What nests deep in a file, in headless Chromium: the page and its worker run in wasm
//! instances whose stacks are fixed and small (256 KiB, app/build.rs), where a native run has
//! megabytes. Built here, not recorded: the bundled example with
//! - every traced allocation's stack replaced by one of 19,000 frames (a Python recursion to
//!   its default limit of 1,000, with the C++ frames `stacks="all"` records between Python
//!   frames): the flame graph shows its innermost frame, 19,000 levels down (as many as it
//!   sends: 20,000 nodes);
//! - a key the model does not name, nested as deep as the reader keeps (99 levels);
//!
//! and JSON nested past the reader's limits (256 levels; 100 for a key it does not know),
//! which the page refuses saying how deep, then opens the deep file again.
//! Screenshot: target/screenshots/deep.png.

use std::path::Path;
use std::sync::Arc;

use fantoccini::Client;
use memsnap_core::analysis::frames::format;
use memsnap_core::analysis::oom::explain_oom;
use memsnap_core::analysis::state_at::state_at;
use memsnap_core::snapshot::{self, Action, Frame, Value};
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};
use serde_json::json;

/// Frames in the deep stack.
const FRAMES: usize = 19_000;
/// Levels of the unknown key: the deepest the reader keeps.
const NESTED: usize = 99;

fn nested_list(levels: usize) -> Value {
    let mut v = Value::List(Arc::new(Vec::new()));
    for _ in 1..levels {
        v = Value::List(Arc::new(vec![v]));
    }
    v
}

/// Waits until `load-error` names `name` and says `says`.
async fn wait_error(c: &Client, name: &str, says: &str) {
    wait_until(
        &format!("load-error for {name} saying {says:?}"),
        || async {
            page::text(c, "load-error").await.and_then(|t| {
                if t.contains(name) && t.contains(says) {
                    Ok(())
                } else {
                    Err(t)
                }
            })
        },
    )
    .await
}

async fn open_deep(c: &Client, path: &Path, snap: &snapshot::Snapshot, innermost: &str) {
    page::pick_file(c, path).await;
    // The example ends in an OOM, and the page opens at it (as tests/tests/page_url.rs checks).
    let oom = explain_oom(snap, 0)
        .unwrap()
        .expect("the bundled example ends in an OOM");
    let at_oom = state_at(snap, 0, oom.entry);
    page::wait_shown(
        c,
        "deep.pickle at its OOM",
        &page::Expected {
            segments: at_oom.len() as u64,
            blocks: at_oom.iter().map(|s| s.blocks.len() as u64).sum(),
            ..page::expected(snap)
        },
    )
    .await;
    let css = format!("{} .flame-node", testid("flamegraph"));
    // In the page: thousands of nodes are too many to read one by one over WebDriver.
    let nodes = wait_until("the innermost frame's flame node", || async {
        let found = c
            .execute(
                "const [css, want] = arguments;
                 const nodes = [...document.querySelectorAll(css)];
                 return [nodes.length, nodes.some(n => n.title.split('\\n')[0] === want)];",
                vec![json!(css), json!(innermost)],
            )
            .await
            .map_err(|e| e.to_string())?;
        match (found[0].as_u64(), found[1].as_bool()) {
            (Some(n), Some(true)) => Ok(n),
            _ => Err(format!("{found}: none titled {innermost:?}")),
        }
    })
    .await;
    assert!(
        nodes as usize > FRAMES,
        "{nodes} flame nodes for {FRAMES} frames"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn deep_stacks_and_nesting_open_within_the_wasm_stacks() {
    let Some(dist) = dist_dir() else { return };
    let example = fixtures::workspace_root().join("app/assets/example.pickle");
    let mut snap = page::load(&example);
    let ids: Vec<_> = (0..FRAMES)
        .map(|i| {
            snap.stacks.push_frame(Frame {
                filename: Arc::from(format!("/w/recurse_{}.py", i % 7)),
                line: i as i64,
                name: Arc::from(format!("level_{i}")),
                extra: Vec::new(),
            })
        })
        .collect();
    // Innermost first, as in the file.
    let innermost = format(snap.stacks.frame(ids[0]));
    let stack = snap.stacks.push_stack(ids.into());
    for e in snap
        .device_traces
        .as_mut()
        .expect("the example has a trace")
        .iter_mut()
        .flatten()
    {
        if e.is(&Action::Alloc) {
            e.set_frames(Some(stack));
        }
    }
    snap.extra
        .push((Arc::from("nested_deep"), nested_list(NESTED)));
    let dir = fixtures::scratch("page-deep");
    let deep = dir.join("deep.pickle");
    std::fs::write(&deep, snapshot::write(&snap)).unwrap();
    // What the page is to show, from the file as written (the reader keeps the nesting).
    let snap = snapshot::read(&std::fs::read(&deep).unwrap()).expect("deep.pickle reads back");
    let json = |levels: usize| {
        let path = dir.join(format!("nested-{levels}.json"));
        let nested = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        std::fs::write(
            &path,
            format!(r#"{{"segments": [], "device_traces": [[]], "nested": {nested}}}"#),
        )
        .unwrap();
        path
    };

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    open_deep(c, &deep, &snap, &innermost).await;
    page::scroll_to(c, "flamegraph").await;
    page::screenshot(c, "deep").await;

    for (levels, says) in [
        (300, "nested deeper than 256 levels"),
        (250, "nests deeper than 100 levels"),
    ] {
        let path = json(levels);
        page::pick_file(c, &path).await;
        wait_error(c, &format!("nested-{levels}.json"), says).await;
    }
    // The worker lived through it all: the deep file opens again.
    open_deep(c, &deep, &snap, &innermost).await;
    site.browser.close().await;
}
