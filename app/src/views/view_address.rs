//! The page's address as a view: the parameters `ViewLink` reads at load and writes as the view
//! changes (`device`, `start`/`end`, `entry`, `alloc`, `block`, `panel`, `rank`), beside
//! `?url=`. Parsing and writing only; what to do with them is `view_link`'s.

use web_sys::UrlSearchParams;

use crate::protocol::analysis::EntryRange;
use crate::url_name::file_name;

/// What is on screen, as the address keeps it; every field optional.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    pub device: Option<i64>,
    pub range: Option<(u64, u64)>,
    pub entry: Option<u64>,
    /// An allocation clicked in the timeline (its index in the device's allocations).
    pub alloc: Option<u32>,
    /// The address of the block pinned in the segment view.
    pub block: Option<u64>,
    /// The panel of the views column last looked at (`view_panel`).
    pub panel: Option<String>,
    /// The rank shown, when several files are open as a job's ranks.
    pub rank: Option<u32>,
}

/// The view an address asks for, and its parameters that could not be read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wanted {
    pub view: View,
    pub bad: Vec<String>,
}

fn params() -> Option<UrlSearchParams> {
    let search = leptos::prelude::window().location().search().ok()?;
    UrlSearchParams::new_with_str(&search).ok()
}

/// The number `key` holds, if any; a value that is not one is recorded in `bad`.
fn number<T: std::str::FromStr>(
    p: &UrlSearchParams,
    key: &str,
    bad: &mut Vec<String>,
) -> Option<T> {
    let v = p.get(key).filter(|v| !v.is_empty())?;
    let n = v.parse().ok();
    if n.is_none() {
        bad.push(format!("{key}={v} (not a number)"));
    }
    n
}

/// A block address: hex with `0x`, as the page prints addresses, or decimal.
fn address(p: &UrlSearchParams, bad: &mut Vec<String>) -> Option<u64> {
    let v = p.get("block").filter(|v| !v.is_empty())?;
    let n = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    };
    if n.is_none() {
        bad.push(format!("block={v} (not an address)"));
    }
    n
}

/// A panel name: the class the page gives it (letters, digits and `-` only).
fn panel(p: &UrlSearchParams, bad: &mut Vec<String>) -> Option<String> {
    let v = p.get("panel").filter(|v| !v.is_empty())?;
    if v.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        Some(v)
    } else {
        bad.push(format!("panel={v} (not a panel name)"));
        None
    }
}

/// The files the page's address names to open (its non-empty `url`s, in order).
pub fn urls() -> Vec<String> {
    let Some(p) = params() else {
        return Vec::new();
    };
    p.get_all("url")
        .iter()
        .filter_map(|v| v.as_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// Whether the page's address names files to open (`url`).
pub fn has_url() -> bool {
    !urls().is_empty()
}

/// What the page's address asks for; `None` when it asks for no view.
pub fn wanted() -> Option<Wanted> {
    let p = params()?;
    let mut bad = Vec::new();
    let device = number(&p, "device", &mut bad);
    let start = number(&p, "start", &mut bad);
    let end = number(&p, "end", &mut bad);
    let entry = number(&p, "entry", &mut bad);
    let alloc = number(&p, "alloc", &mut bad);
    let rank = number(&p, "rank", &mut bad);
    let block = address(&p, &mut bad);
    let panel = panel(&p, &mut bad);
    let w = Wanted {
        view: View {
            device,
            range: start.zip(end),
            entry,
            alloc,
            block,
            panel,
            rank,
        },
        bad,
    };
    (w != Wanted::default()).then_some(w)
}

/// Writes `view` of the file named `name` into the address, keeping its other parameters;
/// the `url`s are dropped when none names the file shown (one opened from disk since), so the
/// link never pairs one file's view with another file. A job's URLs stay while one of its
/// ranks is shown.
pub fn write(name: &str, view: &View) {
    let Some(p) = params() else { return };
    let urls: Vec<String> = p
        .get_all("url")
        .iter()
        .filter_map(|v| v.as_string())
        .collect();
    if !urls.is_empty() && !urls.iter().any(|u| file_name(u) == name) {
        p.delete("url");
    }
    let set = |key: &str, v: Option<String>| match v {
        Some(v) => p.set(key, &v),
        None => p.delete(key),
    };
    set("rank", view.rank.map(|r| r.to_string()));
    set("device", view.device.map(|d| d.to_string()));
    set("start", view.range.map(|r| r.0.to_string()));
    set("end", view.range.map(|r| r.1.to_string()));
    set("entry", view.entry.map(|e| e.to_string()));
    set("alloc", view.alloc.map(|a| a.to_string()));
    set("block", view.block.map(|b| format!("{b:#x}")));
    set("panel", view.panel.clone());
    let query = String::from(p.to_string());
    let window = leptos::prelude::window();
    let location = window.location();
    let path = location.pathname().unwrap_or_default();
    let hash = location.hash().unwrap_or_default();
    let address = if query.is_empty() {
        format!("{path}{hash}")
    } else {
        format!("{path}?{query}{hash}")
    };
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&address));
    }
}

/// `range` as the address keeps it.
pub fn range_of(range: Option<EntryRange>) -> Option<(u64, u64)> {
    range.map(|r| (r.start, r.end))
}
