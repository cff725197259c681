//! Before / after on the page: the open file is AFTER, a file picked in the panel BEFORE; the
//! table's numbers are core `compare::compare`'s (what `memsnap compare` prints), and a file
//! compared with itself shows no change.

use fantoccini::{Client, Locator};
use memsnap_core::analysis::compare::compare;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};

const BEFORE: &str = "cs336-c-medium128-inference.pickle";
const AFTER: &str = "cs336-c-medium512-training.pickle";

/// Picks `path` in the panel's BEFORE input.
async fn pick_before(c: &Client, path: &std::path::Path) {
    let input = wait_until("the before/after panel", || async {
        c.find(Locator::Css(&testid("before-input")))
            .await
            .map_err(|e| e.to_string())
    })
    .await;
    let absolute = std::fs::canonicalize(path).expect("fixture path");
    input
        .send_keys(&absolute.to_string_lossy())
        .await
        .expect("sending a path to the before input");
}

/// `data-value` of the before and after cells of a table row.
async fn row(c: &Client, key: &str) -> Result<(u64, u64), String> {
    let cells = c
        .find_all(Locator::Css(&format!(
            "{} tr[data-row=\"{key}\"] td[data-value]",
            testid("before-after-table")
        )))
        .await
        .map_err(|e| e.to_string())?;
    if cells.len() != 2 {
        return Err(format!("{} cells in row {key}", cells.len()));
    }
    let mut v = Vec::new();
    for cell in cells {
        let a = cell.attr("data-value").await.map_err(|e| e.to_string())?;
        v.push(
            a.ok_or("no data-value")?
                .parse::<u64>()
                .map_err(|e| e.to_string())?,
        );
    }
    Ok((v[0], v[1]))
}

#[tokio::test(flavor = "current_thread")]
async fn before_after_shows_core_compare() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let Some(dist) = dist_dir() else { return };
    let (before_path, after_path) = (
        fixtures::real_dir().join(BEFORE),
        fixtures::real_dir().join(AFTER),
    );
    let (before, after) = (page::load(&before_path), page::load(&after_path));
    let want = compare(&before, &after, 0);

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &after_path).await;
    page::wait_file_name(c, AFTER).await;
    pick_before(c, &before_path).await;

    let expect_rows = [
        (
            "peak-allocated",
            want.before.peak_allocated,
            want.after.peak_allocated,
        ),
        (
            "peak-reserved",
            want.before.peak_reserved,
            want.after.peak_reserved,
        ),
        (
            "dump-reserved",
            want.before.dump_reserved,
            want.after.dump_reserved,
        ),
        (
            "reserved-gap",
            want.before.reserved_minus_allocated,
            want.after.reserved_minus_allocated,
        ),
        (
            "largest-free",
            want.before.largest_free,
            want.after.largest_free,
        ),
    ];
    for (key, b, a) in expect_rows {
        let got = wait_until(&format!("row {key}"), || row(c, key)).await;
        assert_eq!(got, (b, a), "{key}: (before, after)");
    }
    // The frames that grew most, in core's order, with core's changes.
    let shown = c
        .find_all(Locator::Css(&testid("frame-change")))
        .await
        .expect("frame rows");
    assert!(!shown.is_empty(), "no frame rows");
    for (row, f) in shown.iter().zip(&want.frames) {
        assert_eq!(row.attr("title").await.unwrap().as_deref(), Some(&*f.label));
        let cell = row
            .find(Locator::Css("td[data-value]"))
            .await
            .expect("peak change cell");
        assert_eq!(
            cell.attr("data-value").await.unwrap(),
            Some(f.peak_change.to_string()),
            "{}",
            f.label
        );
    }
    page::scroll_to(c, "before-after").await;
    page::screenshot(c, "before-after").await;

    // The same file as BEFORE: nothing changed.
    pick_before(c, &after_path).await;
    wait_until("no change shown", || async {
        page::text(c, "no-change").await.map(|_| ())
    })
    .await;
    let (b, a) = wait_until("peak row", || row(c, "peak-allocated")).await;
    assert_eq!(b, a);
    site.browser.close().await;
}
