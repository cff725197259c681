//! A tiny static file server for dist/ on 127.0.0.1 (a thread per connection, GET and HEAD),
//! with the MIME types browsers insist on (application/wasm for streaming compilation,
//! text/javascript for workers). Extra files can be mounted at fixed paths (real fixtures for
//! `?url=` tests) without copying them, and the site can sit under a sub-path, as on GitHub
//! Pages.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::thread;

pub struct StaticServer {
    port: u16,
}

impl StaticServer {
    /// Serves `root` at `/` (and `mounts`: URL path -> file) on a free port until the process
    /// ends.
    pub fn start(root: &Path, mounts: &[(&str, &Path)]) -> std::io::Result<StaticServer> {
        StaticServer::start_at(root, "/", mounts)
    }

    /// As `start`, with `root` served under `prefix` (e.g. "/org/memsnap/"); other paths 404.
    pub fn start_at(
        root: &Path,
        prefix: &str,
        mounts: &[(&str, &Path)],
    ) -> std::io::Result<StaticServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let root = Arc::new((root.to_path_buf(), prefix.to_string()));
        let mounts: Arc<HashMap<String, PathBuf>> = Arc::new(
            mounts
                .iter()
                .map(|(url, file)| (url.to_string(), file.to_path_buf()))
                .collect(),
        );
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (root, mounts) = (root.clone(), mounts.clone());
                thread::spawn(move || {
                    let _ = serve(stream, &root, &mounts);
                });
            }
        });
        Ok(StaticServer { port })
    }

    /// The URL of `path` on this server (`path` without a leading slash).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{}", self.port, path)
    }
}

fn serve(
    stream: TcpStream,
    (root, prefix): &(PathBuf, String),
    mounts: &HashMap<String, PathBuf>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    // Drain the headers; nothing in them matters here.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("");
    let target = parts.next().unwrap_or("/");
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let mut out = stream;
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut out,
            "405 Method Not Allowed",
            "text/plain",
            b"",
            method == "HEAD",
        );
    }
    let file = match mounts.get(path) {
        Some(f) => Some(f.clone()),
        None => path
            .strip_prefix(prefix.as_str())
            .and_then(|p| resolve(root, p)),
    };
    match file.and_then(|f| std::fs::read(&f).ok().map(|b| (f, b))) {
        Some((f, body)) => respond(&mut out, "200 OK", mime(&f), &body, method == "HEAD"),
        None => respond(
            &mut out,
            "404 Not Found",
            "text/plain",
            b"not found",
            method == "HEAD",
        ),
    }
}

/// Maps a URL path into `root`, refusing `..`; a directory means its index.html.
fn resolve(root: &Path, url_path: &str) -> Option<PathBuf> {
    let mut p = root.to_path_buf();
    for part in Path::new(url_path.trim_start_matches('/')).components() {
        match part {
            Component::Normal(s) => p.push(s),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if p.is_dir() {
        p.push("index.html");
    }
    p.is_file().then_some(p)
}

fn mime(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript",
        "wasm" => "application/wasm",
        "css" => "text/css",
        "json" => "application/json",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn respond(
    out: &mut TcpStream,
    status: &str,
    mime: &str,
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    write!(
        out,
        "HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if !head {
        out.write_all(body)?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn get(server: &StaticServer, path: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        write!(s, "GET /{path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_files_with_types_and_refuses_escapes() {
        let dir = std::env::temp_dir().join(format!("memsnap-server-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("index.html"), "<p>hi</p>").unwrap();
        std::fs::write(dir.join("sub/a.wasm"), "\0asm").unwrap();
        let extra = dir.join("sub/a.wasm");
        let server = StaticServer::start(&dir, &[("/mounted.bin", &extra)]).unwrap();
        let nested = StaticServer::start_at(&dir, "/a/b/", &[]).unwrap();
        assert!(get(&nested, "a/b/").ends_with("<p>hi</p>"));
        assert!(get(&nested, "index.html").starts_with("HTTP/1.1 404"));
        let index = get(&server, "?url=x");
        assert!(index.starts_with("HTTP/1.1 200 OK"), "{index}");
        assert!(index.contains("text/html") && index.ends_with("<p>hi</p>"));
        assert!(get(&server, "sub/a.wasm").contains("Content-Type: application/wasm"));
        assert!(get(&server, "mounted.bin").contains("Content-Length: 4"));
        assert!(get(&server, "../etc/passwd").starts_with("HTTP/1.1 404"));
        assert!(get(&server, "missing.js").starts_with("HTTP/1.1 404"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
