//! A file that is not a snapshot shows the reader's error in `load-error`, and the file that was
//! open stays open with the same numbers.

use memsnap_core::snapshot::read;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, wait_until};

#[tokio::test(flavor = "current_thread")]
async fn bad_file_shows_error_and_keeps_view() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let good = fixtures::real_dir().join("tiny.pickle");
    let snapshot = page::load(&good);
    let want = page::expected(&snapshot);

    let scratch = fixtures::scratch("page-bad-file");
    let garbage = scratch.join("notes.pickle");
    std::fs::write(&garbage, b"these are my notes, not a pickle").unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let truncated = scratch.join("truncated.pickle");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &good).await;
    page::wait_shown(c, "tiny.pickle", &want).await;

    for bad in [&garbage, &truncated] {
        let name = bad.file_name().unwrap().to_string_lossy().to_string();
        let reason = match read(&std::fs::read(bad).unwrap()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{name} reads natively; it cannot test the error path"),
        };
        page::pick_file(c, bad).await;
        let shown = wait_until(&format!("load-error for {name}"), || async {
            page::text(c, "load-error").await.and_then(|t| {
                if t.contains(&name) {
                    Ok(t)
                } else {
                    Err(t)
                }
            })
        })
        .await;
        assert!(
            shown.contains(&reason),
            "load-error {shown:?} lacks the reader's {reason:?}"
        );
        assert_eq!(page::text(c, "file-name").await.unwrap(), "tiny.pickle");
        assert_eq!(
            page::shown(c).await.unwrap(),
            want,
            "the open file's view changed"
        );
    }
    page::screenshot(c, "bad-file").await;

    // A good file afterwards clears the error.
    page::pick_file(c, &good).await;
    wait_until("load-error to clear", || async {
        match page::text(c, "load-error").await {
            Err(_) => Ok(()),
            Ok(t) => Err(t),
        }
    })
    .await;
    site.browser.close().await;
    let _ = std::fs::remove_dir_all(&scratch);
}
