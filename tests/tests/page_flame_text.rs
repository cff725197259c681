//! The flame graph's nodes go into the page as one HTML string (app/src/views/flamegraph.rs),
//! and frame names come from the file: a name full of markup must show as the text it is, in
//! the node's label, its title and the details panel, and add no element. Built here, not
//! recorded: the bundled example with every traced allocation's stack replaced by one frame
//! whose file and function names hold `<`, `>`, `&` and both quotes.
//! Screenshot: target/screenshots/flame-text.png.

use std::path::PathBuf;
use std::sync::Arc;

use fantoccini::Locator;
use memsnap_core::analysis::frames::format;
use memsnap_core::analysis::oom::explain_oom;
use memsnap_core::analysis::state_at::state_at;
use memsnap_core::snapshot::{self, Action, Frame};
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};

#[tokio::test(flavor = "current_thread")]
async fn frame_names_with_markup_show_as_text() {
    let Some(dist) = dist_dir() else { return };
    let example = fixtures::workspace_root().join("app/assets/example.pickle");
    let mut snap = page::load(&example);
    let frame = Frame {
        // No `/` inside the markup: the label keeps the file's last path component.
        filename: Arc::from("/p/<i>model & \"q\" 'a'.py"),
        line: 7,
        name: Arc::from("<b>forward</b>&amp;"),
        extra: Vec::new(),
    };
    let want = format(&frame);
    let id = snap.stacks.push_frame(frame);
    let stack = snap.stacks.push_stack(vec![id].into());
    let traces = snap
        .device_traces
        .as_mut()
        .expect("the example has a trace");
    let mut replaced = 0;
    for e in traces.iter_mut().flatten() {
        if e.is(&Action::Alloc) {
            e.set_frames(Some(stack));
            replaced += 1;
        }
    }
    assert!(replaced > 0, "the example has allocations");
    let dir: PathBuf = fixtures::scratch("page-flame-text");
    let path = dir.join("markup-frames.pickle");
    std::fs::write(&path, snapshot::write(&snap)).unwrap();

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &path).await;
    // The example ends in an OOM, and the page opens at it (as tests/tests/page_url.rs checks).
    let oom = explain_oom(&snap, 0)
        .unwrap()
        .expect("the bundled example ends in an OOM");
    let at_oom = state_at(&snap, 0, oom.entry);
    page::wait_shown(
        c,
        "markup-frames.pickle at its OOM",
        &page::Expected {
            segments: at_oom.len() as u64,
            blocks: at_oom.iter().map(|s| s.blocks.len() as u64).sum(),
            ..page::expected(&snap)
        },
    )
    .await;

    // The node for the frame: its title's first line is the frame, character for character.
    let css = format!("{} .flame-node", testid("flamegraph"));
    let node = wait_until("the frame's flame node", || async {
        for n in c
            .find_all(Locator::Css(&css))
            .await
            .map_err(|e| e.to_string())?
        {
            let title = n.attr("title").await.map_err(|e| e.to_string())?;
            if title.as_deref().and_then(|t| t.lines().next()) == Some(want.as_str()) {
                return Ok(n);
            }
        }
        Err(format!("no node titled {want:?}"))
    })
    .await;
    let label = node
        .find(Locator::Css("span"))
        .await
        .expect("the node's label");
    assert_eq!(
        label.prop("textContent").await.unwrap().as_deref(),
        Some("<b>forward</b>&amp; (<i>model & \"q\" 'a'.py:7)")
    );
    // The markup stayed text: no element was made of it.
    let made = c
        .find_all(Locator::Css(&format!("{css} b, {css} i")))
        .await
        .unwrap();
    assert!(
        made.is_empty(),
        "{} elements made from a frame name",
        made.len()
    );

    page::scroll_to(c, "flamegraph").await;
    label.click().await.expect("clicking the node");
    wait_until("the frame in the details", || async {
        let shown = page::text(c, "stack").await?;
        if shown.contains(&want) {
            Ok(())
        } else {
            Err(format!("details show {shown:?}"))
        }
    })
    .await;
    page::screenshot(c, "flame-text").await;
    site.browser.close().await;
}
