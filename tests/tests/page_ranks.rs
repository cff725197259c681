//! A job's folder of rank files opened at once: the fleet overview lists every rank with the
//! figures memsnap-core's `RankSummary` gives natively for its file, names the corrupt file
//! while the others open, picking a rank shows its detail views (parsed again from its file
//! once it has left the few kept in full), the comparison against the fleet's median agrees
//! with core, and one file afterwards opens as a single file again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use fantoccini::{Client, Locator};
use memsnap_app::viewmodel::fleet::{holds_more, median_rank};
use memsnap_core::analysis::fleet::fleet;
use memsnap_core::analysis::rank_summary::RankSummary;
use memsnap_core::snapshot::{read, Snapshot};
use memsnap_tests::fixtures;
use memsnap_tests::rank_files;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until};
use serde_json::Value;

/// Ranks in the folder: the last one corrupt. Enough to fill the pool several times over and
/// to evict from the detail workers, few enough for CI.
const RANKS: usize = 32;
/// Distinct captures among them; the rest are copies (of these and of real fixtures).
const GENERATED: usize = 12;
/// Real fixtures copied in as ranks (their segment counts differ, which tells them apart).
const REAL: [&str; 3] = [
    "cs336-b-metadata.pickle",
    "cs336-c-medium128-inference.pickle",
    "adam-small-settings.pickle",
];

/// Waits until the overview has every rank in (open or failed); returns (loaded, failed).
pub async fn wait_fleet(c: &Client, total: usize) -> (usize, usize) {
    wait_until(&format!("{total} ranks in the overview"), || async {
        let num = |name: &'static str| async move {
            page::attr(c, "fleet", name)
                .await?
                .parse::<usize>()
                .map_err(|e| e.to_string())
        };
        let (loaded, failed, all) = (
            num("data-ranks-loaded").await?,
            num("data-ranks-failed").await?,
            num("data-ranks-total").await?,
        );
        // The strip is one canvas: it says how many bars it drew.
        let listed = page::attr(c, "fleet-strip", "data-bars")
            .await?
            .parse::<usize>()
            .map_err(|e| e.to_string())?;
        if all == total && loaded + failed == total && listed == loaded {
            Ok((loaded, failed))
        } else {
            Err(format!(
                "{loaded} open + {failed} failed of {all}, {listed} listed"
            ))
        }
    })
    .await
}

/// The overview's bars as the page drew them (`window.memsnapFleetBars()`), in display order.
async fn drawn(c: &Client) -> Vec<Value> {
    let rows = c
        .execute(
            "return window.memsnapFleetBars ? window.memsnapFleetBars() : [];",
            vec![],
        )
        .await
        .expect("reading the overview");
    rows.as_array().cloned().unwrap_or_default()
}

/// Every bar of the overview: (rank, file, peak reserved, peak allocated, OOMs).
async fn bars(c: &Client) -> Vec<(u32, String, u64, u64, usize)> {
    let bytes = |v: &Value| v.as_str().unwrap().parse::<u64>().unwrap();
    drawn(c)
        .await
        .iter()
        .map(|b| {
            (
                b["rank"].as_u64().unwrap() as u32,
                b["file"].as_str().unwrap().to_string(),
                bytes(&b["peak_reserved"]),
                bytes(&b["peak_allocated"]),
                b["ooms"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

/// Clicks rank `rank`'s bar with the pointer, at the middle of the box the page drew it in
/// (again if the strip was redrawn between reading the box and clicking).
async fn click_rank(c: &Client, rank: u32) {
    wait_until(&format!("clicking rank {rank}"), || async {
        let bar = drawn(c)
            .await
            .into_iter()
            .find(|b| b["rank"].as_u64() == Some(rank as u64))
            .ok_or_else(|| format!("rank {rank} is not drawn"))?;
        let canvas = c
            .find(Locator::Css(&testid("fleet-strip")))
            .await
            .map_err(|e| e.to_string())?;
        // Into view first: the strip scrolls once its rows outgrow it.
        c.execute(
            "arguments[0].parentElement.scrollTop = arguments[1];",
            vec![serde_json::to_value(&canvas).unwrap(), bar["y"].clone()],
        )
        .await
        .map_err(|e| e.to_string())?;
        page::click_at(
            c,
            &canvas,
            bar["x"].as_f64().unwrap() + bar["w"].as_f64().unwrap() / 2.0,
            bar["y"].as_f64().unwrap() + bar["h"].as_f64().unwrap() / 2.0,
        )
        .await
    })
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn a_folder_of_ranks_opens_as_a_fleet() {
    let Some(dist) = dist_dir() else { return };
    let real: Vec<PathBuf> = match fixtures::real_fixtures() {
        Some(_) => REAL.iter().map(|f| fixtures::real_dir().join(f)).collect(),
        None => Vec::new(),
    };
    let dir = fixtures::scratch("page-ranks-fleet");
    let mut paths = rank_files::job_folder(&dir, RANKS - 1, GENERATED, (2, 6), &real);
    let bad = rank_files::rank_path(&dir, RANKS - 1);
    std::fs::write(&bad, b"not a pickle").unwrap();
    paths.push(bad.clone());
    // Not a snapshot: a folder open leaves it out.
    std::fs::write(dir.join("train.log"), b"step 1 loss 2.3\n").unwrap();

    // What core says of each good file; ranks come from the names.
    let mut summaries: HashMap<String, RankSummary> = HashMap::new();
    let mut snapshots: HashMap<String, Snapshot> = HashMap::new();
    for (rank, path) in paths.iter().enumerate().take(RANKS - 1) {
        let bytes = std::fs::read(path).unwrap();
        let snap = read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let summary = RankSummary::of(&snap, &name, rank as u32, bytes.len() as u64);
        summaries.insert(name.clone(), summary);
        snapshots.insert(name, snap);
    }

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    // The folder picker (webkitdirectory); chromedriver uploads a folder sent to it.
    let how = page::pick_folder_or_files(c, &dir, &paths).await;
    eprintln!("opened the ranks through the {how}");

    let (loaded, failed) = wait_fleet(c, RANKS).await;
    assert_eq!(
        (loaded, failed),
        (RANKS - 1, 1),
        "all good ranks open, the bad one failed"
    );
    let workers: usize = page::attr(c, "fleet", "data-workers")
        .await
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        (1..=memsnap_app::worker_pool::MAX_WORKERS).contains(&workers),
        "a bounded pool, not one worker per file: {workers}"
    );

    // Every rank's figures are core's for that file.
    let shown = bars(c).await;
    assert_eq!(shown.len(), RANKS - 1);
    for (rank, file, reserved, allocated, ooms) in &shown {
        let want = &summaries[file];
        assert_eq!(*rank, want.rank, "{file}: rank from its name");
        assert_eq!(
            (*reserved, *allocated, *ooms),
            (
                want.peak_reserved_bytes(),
                want.peak_allocated_bytes(),
                want.oom_count()
            ),
            "{file}: peak reserved, peak allocated, OOMs"
        );
    }
    let distinct: std::collections::HashSet<u64> = shown.iter().map(|b| b.2).collect();
    assert!(
        distinct.len() > 3,
        "generated ranks vary in peak: {distinct:?}"
    );
    // Sorted worst first by default; by rank when asked.
    let reserved: Vec<u64> = shown.iter().map(|b| b.2).collect();
    assert!(
        reserved.windows(2).all(|w| w[0] >= w[1]),
        "peak reserved, highest first: {reserved:?}"
    );
    page::find(c, "fleet-sort")
        .await
        .select_by_value("rank")
        .await
        .expect("sorting by rank");
    wait_until("bars in rank order", || async {
        let ranks: Vec<u32> = bars(c).await.iter().map(|b| b.0).collect();
        if ranks == (0..RANKS as u32 - 1).collect::<Vec<_>>() {
            Ok(())
        } else {
            Err(format!("{ranks:?}"))
        }
    })
    .await;

    // The corrupt file is named, with the reader's reason.
    let reason = match read(b"not a pickle") {
        Err(e) => e.to_string(),
        Ok(_) => panic!("the bad file reads"),
    };
    let failure = page::find_css(
        c,
        &format!(
            "{}[data-file=\"rank{}.pickle\"]",
            testid("fleet-failure"),
            RANKS - 1
        ),
    )
    .await
    .text()
    .await
    .unwrap();
    assert!(
        failure.contains(&format!("rank{}.pickle", RANKS - 1)) && failure.contains(&reason),
        "failure {failure:?} names the file and says {reason:?}"
    );

    // Picking ranks shows each one's detail views; four picks evict the first from the three
    // detail workers, so going back to it parses its file again.
    let picks: Vec<usize> = if real.is_empty() {
        vec![0, 1, 2, 3, 0]
    } else {
        // The first copies of the three real fixtures, then a capture, then the first again.
        vec![GENERATED, GENERATED + 2, GENERATED + 4, 0, GENERATED]
    };
    for &rank in &picks {
        let name = format!("rank{rank}.pickle");
        click_rank(c, rank as u32).await;
        page::wait_file_name(c, &name).await;
        page::wait_shown(c, &name, &page::expected(&snapshots[&name])).await;
    }
    page::screenshot(c, "fleet").await;
    compare_with_median(c, &picks, &summaries).await;
    page::scroll_to(c, "rank-compare").await;
    page::screenshot(c, "fleet-compare").await;
    compare_with_rank_number(c, &summaries).await;

    single_file_after_ranks(c, &paths[0], &snapshots["rank0.pickle"]).await;
}

/// Compare column `column` holds core's figures of `summary`'s first device.
async fn compare_column_is(c: &Client, column: usize, summary: &RankSummary) {
    let d = &summary.devices[0];
    let want = vec![
        d.peak_reserved_bytes,
        d.peak_allocated_bytes,
        d.reserved_bytes,
        d.allocated_bytes,
        d.largest_free_block_bytes,
        d.segments,
        d.blocks,
    ];
    let file = &summary.file;
    wait_until(&format!("{file} in compare column {column}"), || async {
        let mut got = Vec::new();
        for row in [
            "peak-reserved",
            "peak-allocated",
            "reserved",
            "allocated",
            "largest-free",
            "segments",
            "blocks",
        ] {
            let cell = format!(
                "{} tr[data-row=\"{row}\"] td:nth-child({column})",
                testid("rank-compare")
            );
            let v = c
                .find(Locator::Css(&cell))
                .await
                .map_err(|e| e.to_string())?
                .attr("data-value")
                .await
                .map_err(|e| e.to_string())?
                .ok_or("no value yet")?;
            got.push(v.parse::<u64>().map_err(|e| e.to_string())?);
        }
        if got == want {
            Ok(())
        } else {
            Err(format!("{got:?} != {want:?}"))
        }
    })
    .await;
}

/// Any rank by number: typing rank 1 into the picker's number field puts it beside the shown
/// rank (only the median and the outliers are options: an option per rank made ~6 nodes a rank).
async fn compare_with_rank_number(c: &Client, summaries: &HashMap<String, RankSummary>) {
    let field = page::find(c, "compare-rank-number").await;
    field.clear().await.ok();
    field.send_keys("1\n").await.expect("typing a rank");
    c.execute(
        "document.querySelector('[data-testid=compare-rank-number]').dispatchEvent(new Event('change'));",
        vec![],
    )
    .await
    .expect("committing the rank");
    compare_column_is(c, 3, &summaries["rank1.pickle"]).await;
}

/// The compare panel: the shown rank (the last pick) beside the fleet's median rank, each
/// column core's figures for that file, and what the shown rank holds more of, by frame.
async fn compare_with_median(
    c: &Client,
    picks: &[usize],
    summaries: &HashMap<String, RankSummary>,
) {
    let mut ranks: Vec<RankSummary> = summaries.values().cloned().collect();
    ranks.sort_by_key(|r| r.rank);
    let index: Vec<usize> = ranks.iter().map(|r| r.rank as usize).collect();
    let figures = fleet(&ranks);
    let median = median_rank(&index, &ranks, &figures).expect("a median rank");
    let shown = &summaries[&format!("rank{}.pickle", picks[picks.len() - 1])];
    let median = &summaries[&format!("rank{median}.pickle")];
    for (column, summary) in [(2, shown), (3, median)] {
        compare_column_is(c, column, summary).await;
    }
    let want: Vec<(String, String)> = holds_more(shown, median)
        .into_iter()
        .take(5)
        .map(|d| (d.frame.clone(), d.excess().to_string()))
        .collect();
    let got = c
        .execute(
            "return [...document.querySelectorAll('[data-testid=holds-more]')].map(e => \
             [e.dataset.frame, e.dataset.excess]);",
            vec![],
        )
        .await
        .unwrap();
    let got: Vec<(String, String)> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        got, want,
        "what rank {} holds more of than the median",
        shown.rank
    );
}

async fn single_file_after_ranks(c: &Client, path: &Path, snapshot: &Snapshot) {
    page::pick_file(c, path).await;
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    page::wait_file_name(c, &name).await;
    page::wait_shown(c, &name, &page::expected(snapshot)).await;
    let overviews = c.find_all(Locator::Css(&testid("fleet"))).await.unwrap();
    assert!(overviews.is_empty(), "one file: no fleet overview");
}
