//! Several files opened at once, one per rank: the rank picker lists each, the per-rank peak
//! bars carry the peaks memsnap-core computes natively, switching rank shows that file's
//! segments, and a bad file among several shows its error while the others open.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use fantoccini::{Client, Locator};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::{read, Snapshot};
use memsnap_tests::fixtures;
use memsnap_tests::web::browser::Browser;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};
use memsnap_tests::web::server::StaticServer;

const FILES: [&str; 3] = [
    "cs336-b-metadata.pickle",
    "cs336-c-medium128-inference.pickle",
    "adam-small-settings.pickle",
];

/// Highest allocated and reserved bytes over any device's timeline, natively.
fn peaks(snapshot: &Snapshot) -> (u64, u64) {
    snapshot
        .devices()
        .into_iter()
        .map(|d| Timeline::build(snapshot, usize::try_from(d).unwrap()).summary())
        .fold((0, 0), |(a, r), s| {
            (a.max(s.peak_allocated), r.max(s.peak_reserved))
        })
}

/// Picks several files in one go, as a user selecting them in the file dialog would.
async fn pick_files(c: &Client, paths: &[PathBuf]) {
    let input = page::find(c, "file-input").await;
    let joined: Vec<String> = paths
        .iter()
        .map(|p| {
            std::fs::canonicalize(p)
                .unwrap()
                .to_string_lossy()
                .to_string()
        })
        .collect();
    input
        .send_keys(&joined.join("\n"))
        .await
        .expect("sending paths to the file input");
}

/// (data-rank, data-file, data-status) of each rank-picker entry.
async fn ranks(c: &Client) -> Result<Vec<(u32, String, String)>, String> {
    let rows = c
        .find_all(Locator::Css(&format!(
            "{} [data-rank]",
            testid("rank-picker")
        )))
        .await
        .map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for r in rows {
        let get = |name: &'static str| {
            let r = r.clone();
            async move {
                r.attr(name)
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or_else(|| format!("no {name}"))
            }
        };
        let rank = get("data-rank")
            .await?
            .parse()
            .map_err(|e| format!("{e}"))?;
        out.push((rank, get("data-file").await?, get("data-status").await?));
    }
    Ok(out)
}

/// Waits until the picker lists `n` ranks, none still opening.
async fn wait_ranks(c: &Client, n: usize) -> Vec<(u32, String, String)> {
    wait_until(&format!("{n} ranks opened"), move || async move {
        let r = ranks(c).await?;
        if r.len() == n && r.iter().all(|(_, _, s)| s != "opening") {
            Ok(r)
        } else {
            Err(format!("{r:?}"))
        }
    })
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn three_ranks_open_side_by_side() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let Some(dist) = dist_dir() else { return };
    let paths: Vec<PathBuf> = FILES.iter().map(|f| fixtures::real_dir().join(f)).collect();
    let snapshots: HashMap<String, Snapshot> = FILES
        .iter()
        .zip(&paths)
        .map(|(f, p)| (f.to_string(), page::load(p)))
        .collect();

    let server = StaticServer::start(&dist, &[]).expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;
    c.goto(&server.url("")).await.expect("opening the page");
    pick_files(c, &paths).await;

    let listed = wait_ranks(c, 3).await;
    let mut names: Vec<&str> = listed.iter().map(|(_, f, _)| f.as_str()).collect();
    names.sort_unstable();
    let mut want_names = FILES.to_vec();
    want_names.sort_unstable();
    assert_eq!(names, want_names, "one rank per file");
    assert!(
        listed.iter().all(|(_, _, s)| s == "open"),
        "all open: {listed:?}"
    );
    // No rank in these names: ranks are the files' order.
    let mut numbers: Vec<u32> = listed.iter().map(|r| r.0).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, vec![0, 1, 2]);
    let file_of: HashMap<u32, String> = listed.iter().map(|(r, f, _)| (*r, f.clone())).collect();

    // Peak bars: exact integers equal to core's.
    let bars = c
        .find_all(Locator::Css(&format!(
            "{} [data-rank]",
            testid("rank-peaks")
        )))
        .await
        .expect("listing peak bars");
    assert_eq!(bars.len(), 3, "one peak bar per rank");
    for bar in &bars {
        let attr = |name: &'static str| {
            let bar = bar.clone();
            async move {
                bar.attr(name)
                    .await
                    .unwrap()
                    .unwrap_or_else(|| panic!("{name}"))
            }
        };
        let rank: u32 = attr("data-rank").await.parse().unwrap();
        let file = &file_of[&rank];
        let got = (
            attr("data-peak-allocated").await.parse::<u64>().unwrap(),
            attr("data-peak-reserved").await.parse::<u64>().unwrap(),
        );
        let want = peaks(&snapshots[file]);
        assert_eq!(got, want, "{file}: peak (allocated, reserved)");
        assert!(got.0 > 0 && got.1 >= got.0, "{file}: peaks {got:?}");
    }

    // Switching rank shows that file's segments and totals, back and forth.
    for (rank, file) in listed
        .iter()
        .chain(listed.iter().rev())
        .map(|(r, f, _)| (*r, f))
    {
        let button = format!(
            "{} [data-rank=\"{rank}\"] {}",
            testid("rank-picker"),
            testid("rank-button")
        );
        page::find_css(c, &button)
            .await
            .click()
            .await
            .expect("clicking a rank");
        page::wait_file_name(c, file).await;
        page::wait_shown(c, file, &page::expected(&snapshots[file])).await;
    }
    // The three files' segment counts differ, so the waits above tell the ranks apart.
    let counts: std::collections::HashSet<u64> = snapshots
        .values()
        .map(|s| page::expected(s).segments)
        .collect();
    assert_eq!(counts.len(), 3, "fixtures with distinct segment counts");
    compare(c, &listed, &snapshots).await;
    page::screenshot(c, "ranks").await;

    // A bad file among several: its rank shows the reader's error, the other opens; then one
    // file opens as a plain single file again.
    let scratch = fixtures::scratch("page-ranks");
    let bad = scratch.join("rank1.pickle");
    std::fs::write(&bad, b"not a pickle").unwrap();
    let good = scratch.join("rank0.pickle");
    std::fs::copy(&paths[2], &good).unwrap();
    pick_files(c, &[bad.clone(), good.clone()]).await;
    let listed = wait_ranks(c, 2).await;
    assert_eq!(
        listed,
        vec![
            (0, "rank0.pickle".into(), "open".into()),
            (1, "rank1.pickle".into(), "failed".into())
        ],
        "ranks from the names, sorted; the bad one failed"
    );
    let reason = match read(&std::fs::read(&bad).unwrap()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("the bad file reads"),
    };
    let error = page::text(c, "load-error").await.expect("load-error shown");
    assert!(
        error.contains("rank1.pickle") && error.contains(&reason),
        "error {error:?} names the file and says {reason:?}"
    );
    page::wait_file_name(c, "rank0.pickle").await;
    page::wait_shown(c, "rank0.pickle", &page::expected(&snapshots[FILES[2]])).await;
    page::screenshot(c, "ranks-bad-file").await;

    single_file_after_ranks(c, &paths[0], &snapshots[FILES[0]]).await;
}

async fn single_file_after_ranks(c: &Client, path: &Path, snapshot: &Snapshot) {
    page::pick_file(c, path).await;
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    page::wait_file_name(c, &name).await;
    page::wait_shown(c, &name, &page::expected(snapshot)).await;
    let pickers = c
        .find_all(Locator::Css(&testid("rank-picker")))
        .await
        .unwrap();
    assert!(pickers.is_empty(), "one file: no rank picker");
}

/// Compare mode: the shown rank (the first, after the switches above) beside another; each
/// column holds that file's totals as core computes them.
async fn compare(
    c: &Client,
    listed: &[(u32, String, String)],
    snapshots: &HashMap<String, Snapshot>,
) {
    let (left, right) = (&listed[0].1, &listed[1].1);
    let select = page::find(c, "compare-rank").await;
    // Options are rank indices; the second listed rank is index 1 (ranks are listed in order).
    select.select_by_value("1").await.expect("picking rank 1");
    for (column, file) in [(2, left), (3, right)] {
        let want = page::expected(&snapshots[file]);
        let cell = |row: &'static str| {
            format!(
                "{} tr[data-row=\"{row}\"] td:nth-child({column})",
                testid("rank-compare")
            )
        };
        wait_until(&format!("{file} in compare column {column}"), || async {
            let mut got = Vec::new();
            for row in [
                "segments",
                "blocks",
                "reserved",
                "allocated",
                "largest-free",
            ] {
                let v = c
                    .find(Locator::Css(&cell(row)))
                    .await
                    .map_err(|e| e.to_string())?
                    .attr("data-value")
                    .await
                    .map_err(|e| e.to_string())?
                    .ok_or("no value yet")?;
                got.push(v.parse::<u64>().map_err(|e| e.to_string())?);
            }
            let w = vec![
                want.segments,
                want.blocks,
                want.reserved,
                want.allocated,
                want.largest_free,
            ];
            if got == w {
                Ok(())
            } else {
                Err(format!("{got:?} != {w:?}"))
            }
        })
        .await;
    }
}
