//! Views you can link to, in headless Chromium: an address with `?url=` and a device, a range,
//! an entry, an allocation, a pinned block and a panel opens that view; the address follows what
//! is on screen, so a reload opens the same view again; an address naming what the file lacks
//! opens the file with a note saying what was not restored; a job's link names its rank, shown
//! when the job's files are opened. Files: a real fixture (cs336-d-fullstep); built with
//! `capture`, not recorded: the example scenario and a job of generated ranks.

use memsnap_tests::web::browser::Browser;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, wait_until};
use memsnap_tests::web::server::StaticServer;
use memsnap_tests::{fixtures, rank_files};

async fn wait_index(c: &fantoccini::Client, want: u64) {
    wait_until(&format!("the state slider at entry {want}"), || async {
        let got = page::attr(c, "state-at", "data-index").await?;
        if got == want.to_string() {
            Ok(())
        } else {
            Err(format!("data-index={got:?}"))
        }
    })
    .await;
}

/// Waits until the stack panel describes the allocation at `addr`.
async fn wait_picked(c: &fantoccini::Client, addr: &str) {
    wait_until(&format!("the stack panel on allocation {addr}"), || async {
        let t = page::text(c, "stack").await?;
        if t.contains(addr) {
            Ok(())
        } else {
            Err(t)
        }
    })
    .await;
}

async fn wait_address(c: &fantoccini::Client, has: &'static str, lacks: &'static str) -> String {
    wait_until(
        &format!("the address to hold {has:?} and not {lacks:?}"),
        || async {
            let url = c
                .current_url()
                .await
                .map_err(|e| e.to_string())?
                .to_string();
            if url.contains(has) && (lacks.is_empty() || !url.contains(lacks)) {
                Ok(url)
            } else {
                Err(url)
            }
        },
    )
    .await
}

#[tokio::test(flavor = "current_thread")]
async fn the_address_keeps_and_restores_the_view() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let file = fixtures::real_dir().join("cs336-d-fullstep.pickle");
    let snap = page::load(&file);
    let n = snap.trace(0).len() as u64;
    let tl = memsnap_core::analysis::timeline::Timeline::build(&snap, 0);
    let picked = format!("{:#x}", tl.allocations.list[100].addr);
    let server =
        StaticServer::start(&dist, &[("/data/step.pickle", &file)]).expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;

    c.goto(&server.url("?url=data/step.pickle&device=0&start=1000&end=9000&entry=4000&alloc=100"))
        .await
        .unwrap();
    page::wait_file_name(c, "step.pickle").await;
    page::wait_drawn(c, "the linked range", 1000, 9000).await;
    wait_index(c, 4000).await;
    wait_picked(c, &picked).await;

    // The whole trace again: the address drops the range and keeps the entry and the file.
    page::click(c, "range-reset").await;
    page::wait_drawn(c, "the whole trace", 0, n).await;
    let url = wait_address(c, "alloc=100", "start=").await;
    assert!(url.contains("entry=4000"), "{url}");
    assert!(
        url.contains("url=data%2Fstep.pickle") || url.contains("url=data/step.pickle"),
        "{url}"
    );

    // A reload opens the same view.
    c.refresh().await.unwrap();
    page::wait_file_name(c, "step.pickle").await;
    page::wait_drawn(c, "the whole trace after a reload", 0, n).await;
    wait_index(c, 4000).await;
    wait_picked(c, &picked).await;
    page::find(c, "copy-link").await;

    // What the file lacks is named, and the rest opens.
    c.goto(&server.url(&format!(
        "?url=data/step.pickle&device=7&start=5&end={}&entry=abc&alloc=99999999",
        n + 10
    )))
    .await
    .unwrap();
    page::wait_file_name(c, "step.pickle").await;
    let note = wait_until("the note on what was not restored", || async {
        page::text(c, "link-note").await
    })
    .await;
    assert!(note.contains("device 7 (not in this file)"), "{note}");
    assert!(note.contains(&format!("entries 5 to {}", n + 10)), "{note}");
    assert!(note.contains("entry=abc (not a number)"), "{note}");
    assert!(
        note.contains("allocation 99999999 (not in this trace)"),
        "{note}"
    );
    page::wait_drawn(c, "the whole trace", 0, n).await;
    browser.close().await;
}

/// The top of the panel `class` less the views column's top, the column's height and how far
/// it is scrolled, in CSS pixels.
async fn panel_offset(c: &fantoccini::Client, class: &str) -> Result<(f64, f64, f64), String> {
    let v = c
        .execute(
            "const p = document.querySelector('main.views section.panel.' + arguments[0]); \
             const v = document.querySelector('main.views'); \
             return p && v ? [p.getBoundingClientRect().top - v.getBoundingClientRect().top, \
                              v.clientHeight, v.scrollTop] : null;",
            vec![class.into()],
        )
        .await
        .map_err(|e| e.to_string())?;
    let n = |i: usize| v.get(i).and_then(|x| x.as_f64());
    match (n(0), n(1), n(2)) {
        (Some(a), Some(b), Some(c)) => Ok((a, b, c)),
        _ => Err(format!("no panel {class}")),
    }
}

/// Clicks the middle of `e` with the pointer, as a user would.
async fn click_middle(c: &fantoccini::Client, e: &fantoccini::elements::Element) {
    c.execute(
        "arguments[0].scrollIntoView({block: 'center'});",
        vec![serde_json::to_value(e).unwrap()],
    )
    .await
    .unwrap();
    let size = c
        .execute(
            "const r = arguments[0].getBoundingClientRect(); return [r.width, r.height];",
            vec![serde_json::to_value(e).unwrap()],
        )
        .await
        .unwrap();
    let (w, h) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
    page::click_at(c, e, w / 2.0, h / 2.0).await.unwrap();
}

/// The pinned block's address and the stack panel's words on it, once both are there.
async fn wait_pinned(c: &fantoccini::Client, addr: &str) {
    wait_until(&format!("block {addr} pinned"), || async {
        let pinned = page::find_all_css(c, "[data-testid=block].pinned").await;
        let mut shown = Vec::new();
        for b in &pinned {
            shown.push(b.attr("data-address").await.map_err(|e| e.to_string())?);
        }
        let text = page::text(c, "stack").await?;
        let want = u64::from_str_radix(addr.trim_start_matches("0x"), 16).unwrap();
        if shown == [Some(want.to_string())] && text.contains("Pinned") && text.contains(addr) {
            Ok(())
        } else {
            Err(format!("pinned {shown:?}, details {text:?}"))
        }
    })
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_pinned_block_and_the_panel_looked_at_survive_a_reload() {
    let Some(dist) = dist_dir() else { return };
    let dir = fixtures::scratch("page-view-link-block");
    let file = dir.join("example.pickle");
    memsnap_tests::built::capture(&["--scenario", "example"], &file);
    let server =
        StaticServer::start(&dist, &[("/data/example.pickle", &file)]).expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;
    c.goto(&server.url("?url=data/example.pickle"))
        .await
        .unwrap();
    page::wait_file_name(c, "example.pickle").await;

    // The widest allocated block drawn, clicked: pinned, and in the address.
    page::find_css(c, "[data-testid=block][data-state=active_allocated]").await;
    let widest = c
        .execute(
            "let best = null, w = 0; \
             for (const b of document.querySelectorAll('[data-testid=block][data-state=active_allocated]')) { \
               const r = b.getBoundingClientRect(); if (r.width > w) { w = r.width; best = b; } } \
             return best && best.getAttribute('data-address');",
            vec![],
        )
        .await
        .unwrap();
    let addr: u64 = widest
        .as_str()
        .expect("an allocated block")
        .parse()
        .unwrap();
    let hex = format!("{addr:#x}");
    let block = page::find_css(c, &format!("[data-testid=block][data-address=\"{addr}\"]")).await;
    click_middle(c, &block).await;
    wait_pinned(c, &hex).await;
    // Hovering another block leaves the details on the pinned one.
    let other = page::find_css(c, "[data-testid=block]:not(.pinned)").await;
    page::hover(c, other).await;
    wait_pinned(c, &hex).await;
    page::screenshot(c, "view-link-pinned-block").await;
    // The example's steps are phases (written by the scenario's phase steps).
    page::scroll_to(c, "phase-band").await;
    page::screenshot(c, "phases-example").await;
    let url = wait_address(c, "block=0x", "").await;
    assert!(url.contains(&format!("block={hex}")), "{url}");

    // The flame graph scrolled to the column's top: the address names it.
    c.execute(
        "document.querySelector('main.views section.panel.flame').scrollIntoView({block: 'start'});",
        vec![],
    )
    .await
    .unwrap();
    wait_address(c, "panel=flame", "").await;

    // A reload pins the block again and brings the flame graph back to the top.
    c.refresh().await.unwrap();
    page::wait_file_name(c, "example.pickle").await;
    wait_pinned(c, &hex).await;
    // As far up as it goes: the column's top, or its upper half when it is the last panels'.
    wait_until("the flame graph brought up the column", || async {
        let (off, height, scrolled) = panel_offset(c, "flame").await?;
        if scrolled > 0.0 && off > -40.0 && off < height / 2.0 {
            Ok(())
        } else {
            Err(format!(
                "{off} px from the top of a {height} px column scrolled {scrolled} px"
            ))
        }
    })
    .await;
    // A second click lets the block go, and the address forgets it; the panel clicked in is
    // the one looked at now.
    let again = page::find_css(c, "[data-testid=block].pinned").await;
    click_middle(c, &again).await;
    wait_address(c, "panel=segment-view", "block=").await;

    // A block and a panel this file lacks are named; the file opens.
    c.goto(&server.url("?url=data/example.pickle&block=0x10&panel=no-such-panel"))
        .await
        .unwrap();
    page::wait_file_name(c, "example.pickle").await;
    let note = wait_until("the note on what was not restored", || async {
        let t = page::text(c, "link-note").await?;
        if t.contains("panel") {
            Ok(t)
        } else {
            Err(t)
        }
    })
    .await;
    assert!(note.contains("block 0x10 (not in this view)"), "{note}");
    assert!(
        note.contains("panel no-such-panel (not on this page)"),
        "{note}"
    );
    browser.close().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_jobs_link_opens_the_rank_it_names() {
    let Some(dist) = dist_dir() else { return };
    let dir = fixtures::scratch("page-view-link-job");
    let paths = rank_files::job_folder(&dir, 4, 4, (2, 4), &[]);
    let rank2 = page::load(&paths[2]);
    let entry = rank2.trace(0).len() as u64 / 2;
    let server = StaticServer::start(&dist, &[]).expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;
    c.goto(&server.url(&format!("?rank=2&entry={entry}")))
        .await
        .unwrap();
    let note = wait_until("the note asking for the job's files", || async {
        page::text(c, "link-note").await
    })
    .await;
    assert!(note.contains("rank 2 of a job"), "{note}");

    let files: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    page::pick_paths(c, "file-input", &files).await.unwrap();
    page::wait_file_name(c, "rank2.pickle").await;
    wait_index(c, entry).await;
    // Rank 2's own figures, and the address keeps the rank.
    page::wait_shown(
        c,
        "rank2.pickle",
        &page::expected_at(&rank2, 0, entry as usize),
    )
    .await;
    let url = wait_address(c, "rank=2", "").await;
    assert!(url.contains(&format!("entry={entry}")), "{url}");

    // A rank the job lacks is named, and the job opens.
    c.goto(&server.url("?rank=9")).await.unwrap();
    page::pick_paths(c, "file-input", &files).await.unwrap();
    let note = wait_until("the note on the missing rank", || async {
        let t = page::text(c, "link-note").await?;
        if t.contains("not among") {
            Ok(t)
        } else {
            Err(t)
        }
    })
    .await;
    assert!(
        note.contains("rank 9 (not among the 4 files open)"),
        "{note}"
    );
    browser.close().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_job_from_its_addresses_reopens_on_reload() {
    let Some(dist) = dist_dir() else { return };
    let dir = fixtures::scratch("page-view-link-urls");
    let paths = rank_files::job_folder(&dir, 3, 3, (2, 3), &[]);
    let mounts: Vec<(String, &std::path::Path)> = paths
        .iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            (format!("/job/{name}"), p.as_path())
        })
        .collect();
    let mounts: Vec<(&str, &std::path::Path)> =
        mounts.iter().map(|(u, p)| (u.as_str(), *p)).collect();
    let server = StaticServer::start(&dist, &mounts).expect("serving dist/");
    let Some(browser) = Browser::start().await else {
        return;
    };
    let c = &browser.client;
    let urls = "url=job/rank0.pickle&url=job/rank1.pickle&url=job/rank2.pickle";
    c.goto(&server.url(&format!("?{urls}&rank=1")))
        .await
        .unwrap();
    page::wait_file_name(c, "rank1.pickle").await;
    let total = wait_until("the job's three ranks", || async {
        page::attr(c, "fleet", "data-ranks-total").await
    })
    .await;
    assert_eq!(total, "3");
    page::wait_shown(c, "rank1.pickle", &page::expected(&page::load(&paths[1]))).await;
    // The addresses stay beside the rank shown, so a reload opens the job at rank 1 again.
    let url = wait_address(c, "rank=1", "").await;
    assert_eq!(url.matches("url=job").count(), 3, "{url}");
    c.refresh().await.unwrap();
    page::wait_file_name(c, "rank1.pickle").await;

    // An address the server lacks is named; the job's other files open.
    c.goto(&server.url(&format!("?{urls}&url=job/rank7.pickle")))
        .await
        .unwrap();
    let error = wait_until("the fetch error", || async {
        page::text(c, "load-error").await
    })
    .await;
    assert!(
        error.contains("could not fetch 1 of 4 files: job/rank7.pickle (HTTP 404)"),
        "{error}"
    );
    let total = wait_until("the three ranks fetched", || async {
        page::attr(c, "fleet", "data-ranks-total").await
    })
    .await;
    assert_eq!(total, "3");

    // With one file left it opens alone, and its open does not clear the error naming the rest.
    c.goto(&server.url("?url=job/rank0.pickle&url=job/rank8.pickle"))
        .await
        .unwrap();
    page::wait_file_name(c, "rank0.pickle").await;
    page::wait_shown(c, "rank0.pickle", &page::expected(&page::load(&paths[0]))).await;
    let error = page::text(c, "load-error").await.unwrap_or_default();
    assert!(
        error.contains("could not fetch 1 of 2 files: job/rank8.pickle (HTTP 404)"),
        "the error once rank0.pickle is shown: {error:?}"
    );
    browser.close().await;
}
