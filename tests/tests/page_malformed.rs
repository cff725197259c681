//! Bad and huge files in the page, from the malformed-input table (tests/malformed/cases.tsv):
//! each error case shows its key words in `load-error` while the open file's view stays as it
//! was; an inconsistent-but-readable case opens with its warnings in `load-warnings`; a file over
//! the page's size limit is refused before it is read, naming its size and the limit.

use std::path::{Path, PathBuf};

use fantoccini::Client;
use memsnap_app::size_limit::MAX_FILE_BYTES;
use memsnap_core::snapshot::validate;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, wait_until, Expected};

/// A truncated file, two refused opcodes (GLOBAL, REDUCE) and three wrong types.
const ERRORS: [&str; 6] = [
    "truncated-at-298.pickle",
    "code-global.pickle",
    "code-reduce.pickle",
    "size-as-str.pickle",
    "action-as-int.pickle",
    "state-as-int.pickle",
];
/// Reads, but its block sizes do not add up to its segment's.
const WARNS: &str = "block-sizes-not-summing.pickle";

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("malformed")
}

/// `(outcome, key words)` of `file` in cases.tsv.
fn case(file: &str) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(dir().join("cases.tsv")).expect("read cases.tsv");
    let line = text
        .lines()
        .find(|l| l.split('\t').next() == Some(file))
        .unwrap_or_else(|| panic!("{file} is not in cases.tsv"));
    let c: Vec<&str> = line.split('\t').collect();
    assert_eq!(c.len(), 3, "cases.tsv line {line:?}");
    let words = c[2].split('|').map(String::from).collect();
    (c[1].to_string(), words)
}

/// Picks `path` and waits for a `load-error` naming it; returns the error's text.
async fn pick_expecting_error(c: &Client, path: &Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    page::pick_file(c, path).await;
    wait_until(&format!("load-error for {name}"), || async {
        page::text(c, "load-error")
            .await
            .and_then(|t| if t.contains(&name) { Ok(t) } else { Err(t) })
    })
    .await
}

async fn assert_view_kept(c: &Client, open: &str, want: &Expected, after: &str) {
    assert_eq!(
        page::text(c, "file-name").await.unwrap(),
        open,
        "after {after}"
    );
    assert_eq!(
        page::shown(c).await.unwrap(),
        *want,
        "the open file's view changed after {after}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn malformed_files_show_errors_or_warnings_and_keep_the_view() {
    let Some(dist) = dist_dir() else { return };
    // A real file when there are any, else the table's own valid one.
    let good = match fixtures::real_fixtures() {
        Some(_) => fixtures::real_dir().join("tiny.pickle"),
        None => dir().join("valid-protocol-5.pickle"),
    };
    let good_name = good.file_name().unwrap().to_string_lossy().to_string();
    let good_snapshot = page::load(&good);
    let want = page::expected(&good_snapshot);
    assert!(want.segments > 0, "{good_name} has no segments to compare");

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &good).await;
    page::wait_shown(c, &good_name, &want).await;
    assert_eq!(
        page::text(c, "load-warnings").await.is_ok(),
        !validate(&good_snapshot).is_empty(),
        "load-warnings shown iff validate finds something in {good_name}"
    );

    for file in ERRORS {
        let (outcome, words) = case(file);
        assert_eq!(outcome, "error", "{file} in cases.tsv");
        let shown = pick_expecting_error(c, &dir().join(file)).await;
        let missing: Vec<_> = words.iter().filter(|w| !shown.contains(*w)).collect();
        assert!(missing.is_empty(), "load-error {shown:?} lacks {missing:?}");
        assert_view_kept(c, &good_name, &want, file).await;
    }
    page::screenshot(c, "malformed-error").await;

    // Inconsistent but readable: it opens, with its warnings beside it.
    let (outcome, words) = case(WARNS);
    assert_eq!(outcome, "warn", "{WARNS} in cases.tsv");
    let warns = dir().join(WARNS);
    let warns_want = page::expected(&page::load(&warns));
    page::pick_file(c, &warns).await;
    page::wait_file_name(c, WARNS).await;
    page::wait_shown(c, WARNS, &warns_want).await;
    let listed = wait_until("load-warnings", || async {
        page::text(c, "load-warnings").await
    })
    .await;
    let missing: Vec<_> = words.iter().filter(|w| !listed.contains(*w)).collect();
    assert!(
        missing.is_empty(),
        "load-warnings {listed:?} lacks {missing:?}"
    );
    assert!(
        page::text(c, "load-error").await.is_err(),
        "a readable file shows no load-error"
    );
    page::screenshot(c, "malformed-warnings").await;

    // One byte over the limit, sparse: refused from its size alone, nothing is read.
    let scratch = fixtures::scratch("page-malformed");
    let huge = scratch.join("huge.pickle");
    std::fs::File::create(&huge)
        .and_then(|f| f.set_len(MAX_FILE_BYTES + 1))
        .expect("creating a sparse file");
    let shown = pick_expecting_error(c, &huge).await;
    let size = (MAX_FILE_BYTES + 1).to_string();
    let limit = MAX_FILE_BYTES.to_string();
    assert!(
        shown.contains(&format!("{size} bytes")) && shown.contains(&format!("{limit} bytes")),
        "load-error {shown:?} names neither the size {size} nor the limit {limit}"
    );
    assert!(shown.contains("limit"), "{shown:?}");
    assert_view_kept(c, WARNS, &warns_want, "huge.pickle").await;

    // The good file again: no error, and no warnings unless it has some.
    page::pick_file(c, &good).await;
    page::wait_file_name(c, &good_name).await;
    page::wait_shown(c, &good_name, &want).await;
    wait_until("load-error to clear", || async {
        match page::text(c, "load-error").await {
            Err(_) => Ok(()),
            Ok(t) => Err(t),
        }
    })
    .await;
    if validate(&good_snapshot).is_empty() {
        assert!(page::text(c, "load-warnings").await.is_err());
    }
    site.browser.close().await;
    let _ = std::fs::remove_dir_all(&scratch);
}
