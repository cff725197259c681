//! The phase band in headless Chromium, on real fixtures: its spans and the table's figures are
//! core's (`analysis::phases`, what `memsnap phases --json` prints), the peak's phase is named
//! above the band and in the timeline's peak sentence, a click zooms the timeline to the phase,
//! compiler phases are folded until asked for, and a file without phases says so in one line.
//! Screenshots: target/screenshots/phases-*.png.

use memsnap_core::analysis::phases::{phase_stats, phases};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, find_all_css, testid, wait_until};

async fn open(c: &fantoccini::Client, file: &std::path::Path) {
    page::open_file(c, file, &page::load(file)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn phases_band_table_peak_and_zoom() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;

    // The full training step: two optimizer phases, the peak outside both.
    let file = fixtures::real_dir().join("cs336-d-fullstep.pickle");
    let snap = page::load(&file);
    let found = phases(&snap, 0).unwrap();
    let tl = Timeline::build(&snap, 0);
    open(c, &file).await;
    page::find(c, "phase-band").await;
    let spans = wait_until("the phase spans", || async {
        let s = find_all_css(c, &testid("phase-span")).await;
        if s.len() == found.phases.len() {
            Ok(s)
        } else {
            Err(format!("{} spans", s.len()))
        }
    })
    .await;
    for (span, p) in spans.iter().zip(&found.phases) {
        assert_eq!(
            span.attr("data-name").await.unwrap().as_deref(),
            Some(p.name.as_str())
        );
        assert_eq!(
            span.attr("data-first").await.unwrap(),
            Some(p.first.to_string())
        );
        assert_eq!(
            span.attr("data-end").await.unwrap(),
            Some(p.end.to_string())
        );
        let title = span.attr("title").await.unwrap().unwrap();
        assert!(title.contains(" ms") && title.contains(&p.name), "{title}");
    }
    let rows = find_all_css(c, &testid("phase-row")).await;
    assert_eq!(rows.len(), found.phases.len());
    for (row, p) in rows.iter().zip(&found.phases) {
        let s = phase_stats(&snap, &tl, p);
        assert_eq!(
            row.attr("data-peak-allocated").await.unwrap(),
            Some(s.peak_allocated.to_string())
        );
        assert_eq!(
            row.attr("data-allocated").await.unwrap(),
            Some(s.allocated_bytes.to_string())
        );
        assert_eq!(
            row.attr("data-freed").await.unwrap(),
            Some(s.freed_bytes.to_string())
        );
    }
    let peak = page::text(c, "peak-phase").await.unwrap();
    assert!(peak.contains("outside every phase"), "{peak}");
    page::scroll_to(c, "phases").await;
    page::screenshot(c, "phases-fullstep").await;

    // A click on the optimizer step zooms the timeline to its entries.
    let step = &found.phases[1];
    spans[1].click().await.unwrap();
    page::wait_drawn(c, "the optimizer step", step.first as u64, step.end as u64).await;

    // A peak inside a phase is named above the band and in the timeline's peak sentence.
    let file = fixtures::real_dir().join("adam-small-settings.pickle");
    open(c, &file).await;
    let named = wait_until("the peak's phase", || async {
        let t = page::attr(c, "peak-phase", "data-phase").await?;
        if t.is_empty() {
            Err("no phase yet".to_string())
        } else {
            Ok(t)
        }
    })
    .await;
    assert_eq!(named, "Optimizer.step#AdamW.step");
    let in_phase = wait_until("the timeline's peak sentence", || async {
        page::attr(c, "peak-in-phase", "data-phase").await
    })
    .await;
    assert_eq!(in_phase, "Optimizer.step#AdamW.step");

    // torch.compile's 901 phases: folded until the box is ticked.
    let file = fixtures::real_dir().join("cs336-a-2.7b-forward.pickle");
    open(c, &file).await;
    let count = wait_until("the phases panel", || async {
        page::attr(c, "phases", "data-count").await
    })
    .await;
    assert_eq!(count, "901");
    let folded = c
        .find_all(fantoccini::Locator::Css(&testid("phase-span")))
        .await
        .unwrap();
    assert!(
        folded.is_empty(),
        "{} compiler spans shown before asking",
        folded.len()
    );
    page::click(c, "phases-compile").await;
    wait_until("the compiler phases shown", || async {
        let n = find_all_css(c, &testid("phase-span")).await.len();
        if n > 0 {
            Ok(())
        } else {
            Err("no spans".to_string())
        }
    })
    .await;
    page::scroll_to(c, "phases").await;
    page::screenshot(c, "phases-2.7b-forward").await;

    // No annotations: one line saying so.
    let file = fixtures::real_dir().join("select-n-multidevice.pickle");
    open(c, &file).await;
    let none = wait_until("the no-phases line", || async {
        page::text(c, "phases-none").await
    })
    .await;
    assert!(none.starts_with("no phases:"), "{none}");
    site.browser.close().await;
}
