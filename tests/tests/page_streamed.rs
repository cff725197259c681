//! Files of 2 MiB and more are parsed while the browser reads them (app/src/worker/streaming.rs,
//! `snapshot::Streaming`). Built, not recorded: 13 `capture` runs of the varying-seqlen scenario
//! on devices 0-12 in one 3 MB pickle, so the test runs without the real fixtures. The page
//! must show the file as core reads it whole, and the same file cut short must fail with
//! core's own error for it.

use memsnap_core::snapshot::{self, Snapshot};
use memsnap_tests::built::{capture, merge_devices};
use memsnap_tests::fixtures::scratch;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, wait_until};

/// What the worker streams: files of at least this many bytes.
const STREAMED_FROM: usize = 2 << 20;

fn built(dir: &std::path::Path) -> Snapshot {
    let mut merged: Option<Snapshot> = None;
    for device in 0..13 {
        let run = capture(
            &[
                "--scenario",
                "varying-seqlen",
                "--seed",
                &device.to_string(),
                "--device",
                &device.to_string(),
            ],
            &dir.join(format!("d{device}.pickle")),
        );
        merged = Some(match merged {
            None => run,
            Some(m) => merge_devices(m, run),
        });
    }
    merged.expect("13 runs")
}

#[tokio::test(flavor = "current_thread")]
async fn a_streamed_file_shows_as_read_whole_and_a_cut_one_fails_the_same() {
    let Some(dist) = dist_dir() else { return };
    let dir = scratch("page-streamed");
    let bytes = snapshot::write(&built(&dir));
    let whole_path = dir.join("streamed.pickle");
    std::fs::write(&whole_path, &bytes).expect("writing streamed.pickle");
    let cut = &bytes[..bytes.len() * 4 / 5];
    let cut_path = dir.join("cut.pickle");
    std::fs::write(&cut_path, cut).expect("writing cut.pickle");
    assert!(
        cut.len() >= STREAMED_FROM,
        "the built file is too small to stream: {} bytes",
        bytes.len()
    );
    let whole = snapshot::read(&bytes).expect("the built file reads");
    let error = match snapshot::read(cut) {
        Ok(_) => panic!("the cut file still reads"),
        Err(e) => e.to_string(),
    };

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &whole_path).await;
    page::wait_shown(c, "streamed.pickle", &page::expected(&whole)).await;

    page::pick_file(c, &cut_path).await;
    wait_until("core's error for the cut file", || async {
        let shown = page::text(c, "load-error").await?;
        if shown.contains(&error) && shown.contains("cut.pickle") {
            Ok(())
        } else {
            Err(format!("shows {shown:?}, want {error:?}"))
        }
    })
    .await;
    site.browser.close().await;
}
