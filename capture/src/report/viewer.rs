//! The viewer's built files (Trunk's `dist/`), found and read for a report: the page's JS and
//! wasm and its style sheets, named as `index.html` names them (hashed), and the worker's, named
//! in its loader.

use std::path::{Path, PathBuf};

/// Where `memsnap html` looks for the viewer when `--viewer` is not given: `$MEMSNAP_VIEWER`,
/// then `viewer/` beside the executable (the Python package's layout), then the checkout's
/// `dist/` for a binary under `target/<profile>/`.
pub fn find(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(dir) = explicit {
        return Ok(dir.to_path_buf());
    }
    if let Some(dir) = std::env::var_os("MEMSNAP_VIEWER") {
        return Ok(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().ok();
    let beside = exe.as_deref().and_then(Path::parent);
    let candidates = beside
        .into_iter()
        .flat_map(|d| [d.join("viewer"), d.join("../../dist")]);
    for c in candidates {
        if c.join("index.html").is_file() {
            return Ok(c);
        }
    }
    Err(
        "the viewer's built files were not found: pass --viewer DIR (the folder `trunk build` \
         writes, dist/) or set MEMSNAP_VIEWER"
            .to_string(),
    )
}

/// The files a report inlines.
pub struct Viewer {
    pub app_js: String,
    pub app_wasm: Vec<u8>,
    pub worker_js: String,
    pub worker_wasm: Vec<u8>,
    /// In the order index.html links them.
    pub css: Vec<String>,
}

impl Viewer {
    pub fn read(dir: &Path) -> Result<Viewer, String> {
        let read = |name: &str| {
            std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()))
        };
        let text = |name: &str| {
            read(name).and_then(|b| {
                String::from_utf8(b)
                    .map_err(|_| format!("{name} in {} is not UTF-8", dir.display()))
            })
        };
        let index = text("index.html")?;
        let app_js_name = between(&index, "from './", "'")
            .ok_or_else(|| unexpected(dir, "index.html imports no page script"))?;
        let app_wasm_name = between(&index, "module_or_path: './", "'")
            .ok_or_else(|| unexpected(dir, "index.html names no page wasm"))?;
        let loader = text("memsnap-worker_loader.js")?;
        let worker_js_name = between(&loader, "importScripts(\"./", "\"")
            .ok_or_else(|| unexpected(dir, "the worker's loader imports no script"))?;
        let worker_wasm_name = between(&loader, "wasm_bindgen(\"./", "\"")
            .ok_or_else(|| unexpected(dir, "the worker's loader names no wasm"))?;
        let mut css = Vec::new();
        let mut rest = index.as_str();
        while let Some(at) = rest.find("rel=\"stylesheet\" href=\"./") {
            rest = &rest[at + "rel=\"stylesheet\" href=\"./".len()..];
            let name = &rest[..rest.find('"').unwrap_or(rest.len())];
            css.push(text(name)?);
        }
        Ok(Viewer {
            app_js: text(app_js_name)?,
            app_wasm: read(app_wasm_name)?,
            worker_js: text(worker_js_name)?,
            worker_wasm: read(worker_wasm_name)?,
            css,
        })
    }

    /// Bytes of the files as they lie in dist/: what "the viewer's own files" weigh.
    pub fn size(&self) -> u64 {
        (self.app_js.len()
            + self.app_wasm.len()
            + self.worker_js.len()
            + self.worker_wasm.len()
            + self.css.iter().map(String::len).sum::<usize>()) as u64
    }
}

fn unexpected(dir: &Path, what: &str) -> String {
    format!(
        "{} does not look like the viewer's build: {what} (built by another Trunk?)",
        dir.display()
    )
}

/// The text after the first `start` up to the next `end`.
fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let len = s[from..].find(end)?;
    Some(&s[from..from + len])
}
