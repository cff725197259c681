//! Reading and driving the viewer page through its `data-testid` contract, and what the page
//! must show for a file, computed natively by memsnap-core.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, Locator};
use memsnap_core::analysis::totals::device_totals;
use memsnap_core::snapshot::{read, Snapshot};

use crate::fixtures::workspace_root;

/// Long enough for a 4 MB file on a slow, shared CI core with a debug-free release build.
pub const TIMEOUT: Duration = Duration::from_secs(60);

pub fn testid(id: &str) -> String {
    format!("[data-testid=\"{id}\"]")
}

/// Polls `probe` until it gives `Some`, failing after `TIMEOUT` with `what` and the last
/// value `describe` returns (so a mismatch says what the page showed).
pub async fn wait_until<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let start = Instant::now();
    loop {
        match probe().await {
            Ok(v) => return v,
            Err(last) if start.elapsed() > TIMEOUT => {
                panic!("timed out after {TIMEOUT:?} waiting for {what}; last seen: {last}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// The element with this test id, once the page has it: polls until [`TIMEOUT`] and then fails
/// naming the element (a loaded machine mounts the page late; no test may assume it is there).
pub async fn find(c: &Client, id: &str) -> Element {
    find_css(c, &testid(id)).await
}

/// [`find`] for any CSS selector.
pub async fn find_css(c: &Client, css: &str) -> Element {
    wait_until(&format!("element {css}"), || async {
        c.find(Locator::Css(css))
            .await
            .map_err(|e| format!("not there ({e})"))
    })
    .await
}

/// All elements matching `css`, once there is at least one (see [`find`]).
pub async fn find_all_css(c: &Client, css: &str) -> Vec<Element> {
    wait_until(&format!("elements {css}"), || async {
        match c.find_all(Locator::Css(css)).await {
            Ok(v) if !v.is_empty() => Ok(v),
            Ok(_) => Err("none yet".to_string()),
            Err(e) => Err(e.to_string()),
        }
    })
    .await
}

/// The named attributes of every element `css` matches, in document order, once one exists.
pub async fn rows(c: &Client, css: &str, names: &[&str]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for e in find_all_css(c, css).await {
        let mut row = Vec::new();
        for n in names {
            row.push(e.attr(n).await.unwrap().unwrap_or_default());
        }
        out.push(row);
    }
    out
}

/// Clicks the element with this test id once the page has it.
pub async fn click(c: &Client, id: &str) {
    find(c, id)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("clicking {}: {e}", testid(id)));
}

/// The text of the first element with this test id (`Err` when there is none).
pub async fn text(c: &Client, id: &str) -> Result<String, String> {
    let e = c
        .find(Locator::Css(&testid(id)))
        .await
        .map_err(|e| format!("no {id}: {e}"))?;
    e.text().await.map_err(|e| e.to_string())
}

pub async fn attr(c: &Client, id: &str, name: &str) -> Result<String, String> {
    let e = c
        .find(Locator::Css(&testid(id)))
        .await
        .map_err(|e| format!("no {id}: {e}"))?;
    e.attr(name)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{id} has no {name}"))
}

/// Waits until the timeline has drawn entries `start..end` (its `data-drawn`).
pub async fn wait_drawn(c: &Client, what: &str, start: u64, end: u64) {
    let want = format!("{start}-{end}");
    wait_until(&format!("the timeline drawn over {what}"), || {
        let want = want.clone();
        async move {
            let got = attr(c, "timeline", "data-drawn").await?;
            if got == want {
                Ok(())
            } else {
                Err(format!("data-drawn={got:?}, want {want:?}"))
            }
        }
    })
    .await;
}

/// Waits until the page says the file named `name` is open.
pub async fn wait_file_name(c: &Client, name: &str) {
    wait_until(&format!("{name} to open"), move || async move {
        match text(c, "file-name").await {
            Ok(t) if t == name => Ok(()),
            Ok(t) => Err(t),
            Err(e) => Err(e),
        }
    })
    .await;
}

/// Opens `path` through the file input, as a user picking it would.
pub async fn pick_file(c: &Client, path: &Path) {
    let input = find(c, "file-input").await;
    let absolute =
        std::fs::canonicalize(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    input
        .send_keys(&absolute.to_string_lossy())
        .await
        .expect("sending a path to the file input");
}

/// Picks `path` through the file input and waits until the page shows `snap` (what core reads
/// of that file) under the file's name.
pub async fn open_file(c: &Client, path: &Path, snap: &Snapshot) {
    pick_file(c, path).await;
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    wait_file_name(c, &name).await;
    wait_shown(c, &name, &expected(snap)).await;
}

/// Sends `paths` (absolute, newline-separated) to the input with test id `input`, as a user
/// picking them would. Waits for the page to mount the input; only the upload may fail.
pub async fn pick_paths(c: &Client, input: &str, paths: &[&Path]) -> Result<(), String> {
    let input = find(c, input).await;
    let joined: Vec<String> = paths
        .iter()
        .map(|p| {
            std::fs::canonicalize(p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    input
        .send_keys(&joined.join("\n"))
        .await
        .map_err(|e| e.to_string())
}

/// Opens a folder of rank files through the folder input (`webkitdirectory`) when chromedriver
/// uploads a folder there, else its files through the multi-file input; returns the input used.
pub async fn pick_folder_or_files(c: &Client, dir: &Path, files: &[PathBuf]) -> &'static str {
    match pick_paths(c, "folder-input", &[dir]).await {
        Ok(()) => "folder-input",
        Err(e) => {
            eprintln!("the folder input refused a folder ({e}): picking the files instead");
            let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
            pick_paths(c, "file-input", &files)
                .await
                .expect("picking the files");
            "file-input"
        }
    }
}

/// Scrolls `e` to the middle of the view and moves the pointer onto it.
pub async fn hover(c: &Client, e: Element) {
    c.execute(
        "arguments[0].scrollIntoView({block: 'center'});",
        vec![serde_json::to_value(&e).expect("an element as JSON")],
    )
    .await
    .expect("scrolling to the element");
    use fantoccini::actions::{InputSource, MouseActions, PointerAction};
    let hover = MouseActions::new("mouse".into()).then(PointerAction::MoveToElement {
        element: e,
        duration: None,
        x: 0.0,
        y: 0.0,
    });
    c.perform_actions(hover).await.expect("hovering");
}

/// Clicks with the pointer at (`x`, `y`) CSS pixels from `e`'s top left corner (a point of a
/// canvas): where that lies in the viewport is read from the page, so the click lands there
/// wherever the page has scrolled.
pub async fn click_at(c: &Client, e: &Element, x: f64, y: f64) -> Result<(), String> {
    let at = c
        .execute(
            "const r = arguments[0].getBoundingClientRect(); \
             return [r.left + arguments[1], r.top + arguments[2]];",
            vec![
                serde_json::to_value(e).map_err(|e| e.to_string())?,
                x.into(),
                y.into(),
            ],
        )
        .await
        .map_err(|e| e.to_string())?;
    let (vx, vy) = (at[0].as_f64().unwrap_or(0.0), at[1].as_f64().unwrap_or(0.0));
    use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
    let click = MouseActions::new("mouse".into())
        .then(PointerAction::MoveTo {
            duration: None,
            x: vx.round(),
            y: vy.round(),
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    c.perform_actions(click).await.map_err(|e| e.to_string())
}

/// Scrolls the element with this test id into view (views stack vertically in the page).
pub async fn scroll_to(c: &Client, id: &str) {
    find(c, id).await;
    let script = format!(
        "document.querySelector('{}')?.scrollIntoView({{block: 'start'}});",
        testid(id).replace('\'', "\\'")
    );
    c.execute(&script, vec![]).await.expect("scrolling");
}

/// Saves a PNG of the page under `<workspace>/target/screenshots/NAME.png` and returns its path.
pub async fn screenshot(c: &Client, name: &str) -> PathBuf {
    let dir = workspace_root().join("target/screenshots");
    std::fs::create_dir_all(&dir).expect("creating target/screenshots");
    let png = c.screenshot().await.expect("taking a screenshot");
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, png).expect("writing the screenshot");
    eprintln!("screenshot: {}", path.display());
    path
}

/// What the page must show for a file's first device, computed natively.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub segments: u64,
    pub blocks: u64,
    pub reserved: u64,
    pub allocated: u64,
    pub largest_free: u64,
}

pub fn load(path: &Path) -> Snapshot {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn expected(snapshot: &Snapshot) -> Expected {
    expected_on(snapshot, snapshot.devices().first().copied().unwrap_or(0))
}

/// What the page must show for `device`.
pub fn expected_on(snapshot: &Snapshot, device: i64) -> Expected {
    let t = device_totals(snapshot, device);
    Expected {
        segments: t.segments,
        blocks: t.blocks,
        reserved: t.reserved,
        allocated: t.allocated,
        largest_free: t.largest_free,
    }
}

/// What the page must show for a file that opens on its first device's OOM (the bundled
/// example does): the segments at the failing entry, the dump's totals.
pub fn expected_at_oom(snapshot: &Snapshot) -> Expected {
    let oom = memsnap_core::analysis::oom::explain_oom(snapshot, 0)
        .expect("explaining the OOM")
        .expect("the file ends in an OOM");
    expected_at(snapshot, 0, oom.entry)
}

/// What the page must show for `device` at trace entry `entry`: the segments the allocator
/// held then, the dump's totals.
pub fn expected_at(snapshot: &Snapshot, device: i64, entry: usize) -> Expected {
    let at = memsnap_core::analysis::state_at::state_at(snapshot, device, entry);
    Expected {
        segments: at.len() as u64,
        blocks: at.iter().map(|s| s.blocks.len() as u64).sum(),
        ..expected_on(snapshot, device)
    }
}

/// What the page shows now, in the same shape.
pub async fn shown(c: &Client) -> Result<Expected, String> {
    let num = |s: String| s.trim().parse::<u64>().map_err(|e| format!("{s:?}: {e}"));
    Ok(Expected {
        segments: num(attr(c, "segment-view", "data-segments").await?)?,
        blocks: num(attr(c, "segment-view", "data-blocks").await?)?,
        reserved: num(text(c, "diag-reserved-bytes").await?)?,
        allocated: num(text(c, "diag-allocated-bytes").await?)?,
        largest_free: num(text(c, "diag-largest-free-bytes").await?)?,
    })
}

/// Waits until the page shows exactly `want` (and says what it showed if it never does).
pub async fn wait_shown(c: &Client, file: &str, want: &Expected) {
    wait_until(&format!("{file}: {want:?}"), move || async move {
        match shown(c).await {
            Ok(got) if &got == want => Ok(()),
            Ok(got) => Err(format!("{got:?}")),
            Err(e) => Err(e),
        }
    })
    .await
}

/// The built site served and a fresh browser on its page: what most page tests start from.
pub struct Site {
    pub server: crate::web::server::StaticServer,
    pub browser: crate::web::browser::Browser,
}

impl Site {
    /// Serves `dist` and opens its page; `None` (after the browser's own warning) when there is
    /// no Chromium to run.
    pub async fn open(dist: &Path) -> Option<Site> {
        let server = crate::web::server::StaticServer::start(dist, &[]).expect("serving dist/");
        let browser = crate::web::browser::Browser::start().await?;
        browser
            .client
            .goto(&server.url(""))
            .await
            .expect("opening the page");
        Some(Site { server, browser })
    }
}
