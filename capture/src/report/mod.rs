//! `memsnap html`: one self-contained HTML file holding the viewer (its wasm, JS and CSS, the
//! worker's too) and a snapshot, which opens from `file://` with no server and no network and
//! shows what the page shows for that file. The wasm and the snapshot are gzipped and written
//! as base85 text (1.25× the gzipped bytes); `bootstrap.js` decodes them with the browser's own
//! `DecompressionStream`, starts the worker from a Blob with its compiled module, and hands the
//! page the file (app/src/report.rs).

pub mod base85;
pub mod viewer;

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

pub use viewer::Viewer;

const BOOTSTRAP: &str = include_str!("bootstrap.js");

/// A report and what it weighs against what it carries.
pub struct Report {
    pub html: String,
    /// The snapshot as carried: gzipped.
    pub snapshot_gz: u64,
    /// The viewer's files as they lie in dist/.
    pub viewer: u64,
}

/// `bytes` gzipped, unless they already are.
pub fn gzipped(bytes: &[u8], level: u32) -> Vec<u8> {
    if bytes.starts_with(&[0x1f, 0x8b]) {
        return bytes.to_vec();
    }
    let mut gz = GzEncoder::new(Vec::with_capacity(bytes.len() / 4), Compression::new(level));
    // Writing to a Vec cannot fail.
    gz.write_all(bytes).expect("gzip into memory");
    gz.finish().expect("gzip into memory")
}

/// The report of the snapshot `name` whose file bytes (pickle, gzip or JSON) are `snapshot`.
pub fn build(viewer: &Viewer, name: &str, snapshot: &[u8]) -> Result<Report, String> {
    let init = default_export(&viewer.app_js)
        .ok_or("the page's script has no default export (built by another wasm-bindgen?)")?;
    for (what, text) in [
        ("the page's script", viewer.app_js.as_str()),
        ("the worker's script", viewer.worker_js.as_str()),
    ] {
        if contains_ignore_case(text, "</script") {
            return Err(format!("{what} holds `</script`, which cannot be inlined"));
        }
    }
    let css = viewer.css.join("\n");
    if contains_ignore_case(&css, "</style") {
        return Err("a style sheet holds `</style`, which cannot be inlined".to_string());
    }
    let snapshot_gz = gzipped(snapshot, 6);
    let app_wasm = gzipped(&viewer.app_wasm, 9);
    let worker_wasm = gzipped(&viewer.worker_wasm, 9);
    let data = |id: &str, bytes: &[u8], attrs: &str| {
        format!(
            "<script type=\"application/x-memsnap-base85\" id=\"{id}\" data-bytes=\"{}\"{attrs}>{}</script>\n",
            bytes.len(),
            base85::encode(bytes)
        )
    };
    let mut html = String::with_capacity(
        (snapshot_gz.len() + app_wasm.len() + worker_wasm.len()) * 5 / 4
            + viewer.app_js.len()
            + viewer.worker_js.len()
            + css.len()
            + BOOTSTRAP.len()
            + 4096,
    );
    let title = escape(name);
    html.push_str(&format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <meta name=\"generator\" content=\"memsnap {} html\">\n\
         <title>memsnap — {title}</title>\n<style>\n{css}\n</style>\n",
        env!("CARGO_PKG_VERSION")
    ));
    html.push_str(&data("memsnap-app-wasm", &app_wasm, ""));
    html.push_str(&data("memsnap-worker-wasm", &worker_wasm, ""));
    html.push_str(&data(
        "memsnap-snapshot",
        &snapshot_gz,
        &format!(" data-name=\"{title}\""),
    ));
    html.push_str("<script type=\"text/plain\" id=\"memsnap-worker-js\">");
    html.push_str(&viewer.worker_js);
    html.push_str("</script>\n<script>\n");
    html.push_str(BOOTSTRAP);
    html.push_str("</script>\n<script type=\"module\">\n");
    html.push_str(&viewer.app_js);
    html.push_str(&format!(
        "\n;{{ const {{ appWasm }} = await window.memsnapBoot; await {init}({{ module_or_path: appWasm }}); }}\n"
    ));
    html.push_str("</script>\n</head>\n<body></body>\n</html>\n");
    Ok(Report {
        html,
        snapshot_gz: snapshot_gz.len() as u64,
        viewer: viewer.size(),
    })
}

/// The local name wasm-bindgen exports as `default` (its init function).
fn default_export(js: &str) -> Option<&str> {
    let at = js.rfind(" as default")?;
    let before = &js[..at];
    let start = before
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .map_or(0, |i| i + 1);
    let name = &before[start..];
    (!name.is_empty()).then_some(name)
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_wasm_bindgens_init() {
        let js = "async function __wbg_init(m) {}\nexport { initSync, __wbg_init as default };\n";
        assert_eq!(default_export(js), Some("__wbg_init"));
        assert_eq!(default_export("export class A {}"), None);
    }

    #[test]
    fn gzip_is_kept_and_other_bytes_are_gzipped() {
        let once = gzipped(b"\x80\x04}q\x00.", 6);
        assert_eq!(&once[..2], &[0x1f, 0x8b]);
        assert_eq!(gzipped(&once, 6), once);
    }

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("a<b>&\"c"), "a&lt;b&gt;&amp;&quot;c");
        assert!(contains_ignore_case("x</SCRIPT>", "</script"));
    }
}
