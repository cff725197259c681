//! Hovering a block shows its address, size, state and stack frames in `stack`.

use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use memsnap_core::snapshot::Snapshot;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};

/// `filename:line:name` of every frame of the block at `address` on `device`, if it has any.
fn frames_at(s: &Snapshot, device: i64, address: u64) -> Option<Vec<String>> {
    s.segments
        .iter()
        .filter(|seg| seg.device.unwrap_or(0) == device)
        .flat_map(|seg| {
            let mut next = seg.address;
            seg.blocks.iter().map(move |b| {
                let a = b.address.unwrap_or(next);
                next = a + b.size;
                (a, b)
            })
        })
        .find(|(a, _)| *a == address)
        .and_then(|(_, b)| b.frames)
        .map(|id| {
            s.stacks
                .frames_of(id)
                .map(|f| format!("{}:{}:{}", f.filename, f.line, f.name))
                .collect::<Vec<_>>()
        })
        .filter(|f| !f.is_empty())
}

#[tokio::test(flavor = "current_thread")]
async fn hovering_a_block_shows_its_frames() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let file = fixtures::real_dir().join("cs336-c-medium512-training.pickle");
    let snapshot = page::load(&file);
    let device = snapshot.devices().first().copied().unwrap_or(0);

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &file).await;
    page::wait_shown(
        c,
        "cs336-c-medium512-training.pickle",
        &page::expected(&snapshot),
    )
    .await;

    // The widest drawn block that has a stack.
    let mut best: Option<(u64, u64, Vec<String>, fantoccini::elements::Element)> = None;
    for block in page::find_all_css(c, &testid("block")).await {
        let num = |v: Option<String>| v.and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let address = num(block.attr("data-address").await.unwrap());
        let size = num(block.attr("data-size").await.unwrap());
        if let Some(frames) = frames_at(&snapshot, device, address) {
            if best.as_ref().is_none_or(|(s, ..)| size > *s) {
                best = Some((size, address, frames, block));
            }
        }
    }
    let (size, address, frames, block) = best.expect("a drawn block with a stack");
    c.execute(
        "arguments[0].scrollIntoView({block: 'center'});",
        vec![serde_json::to_value(&block).unwrap()],
    )
    .await
    .unwrap();
    let hover = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element: block,
        duration: None,
        x: 0.0,
        y: 0.0,
    });
    c.perform_actions(hover).await.expect("hovering the block");

    let text = wait_until("the stack panel to show the block", || async {
        let t = page::text(c, "stack").await?;
        if t.contains(&format!("{address:#x}")) {
            Ok(t)
        } else {
            Err(t)
        }
    })
    .await;
    assert!(
        text.contains(&size.to_string()),
        "size {size} missing from {text:?}"
    );
    for f in &frames {
        assert!(
            text.contains(f.as_str()),
            "frame {f:?} missing from {text:?}"
        );
    }
    page::screenshot(c, "hover-stack").await;
    site.browser.close().await;
}
