//! Several `?url=` values open as one job's ranks: each URL is fetched in the page into a
//! `File` (a few at a time), and the files then open as files picked from disk do (`ranks`),
//! so a link to a job on a web server opens the job, and its `rank=` the rank it names. A URL
//! that cannot be fetched is named in the load error; the others open.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::AppState;
use crate::js_error::js_error;

/// One URL's outcome: `None` until its fetch ends.
type Fetched = Option<Result<web_sys::File, String>>;

/// Fetches in flight at once: enough to hide a server's latency, few enough for its limits.
const FETCHES: usize = 4;

async fn fetch_file(url: &str) -> Result<web_sys::File, String> {
    let window = web_sys::window().ok_or("no window")?;
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(js_error)?
        .dyn_into()
        .map_err(js_error)?;
    if !response.ok() {
        return Err(format!("HTTP {}", response.status()));
    }
    let blob: web_sys::Blob = JsFuture::from(response.blob().map_err(js_error)?)
        .await
        .map_err(js_error)?
        .dyn_into()
        .map_err(js_error)?;
    web_sys::File::new_with_blob_sequence(
        &js_sys::Array::of1(&blob),
        &crate::url_name::file_name(url),
    )
    .map_err(js_error)
}

impl AppState {
    /// Opens `urls` (two or more) as a job's ranks.
    pub fn open_urls(&self, urls: Vec<String>) {
        let n = urls.len();
        self.begin_open(format!("{n} files from their addresses"), None);
        let me = *self;
        let urls = Rc::new(urls);
        let next = Rc::new(Cell::new(0usize));
        let results: Rc<RefCell<Vec<Fetched>>> = Rc::new(RefCell::new(vec![None; n]));
        let done = Rc::new(Cell::new(0usize));
        for _ in 0..FETCHES.min(n) {
            let (urls, next, results, done) =
                (urls.clone(), next.clone(), results.clone(), done.clone());
            wasm_bindgen_futures::spawn_local(async move {
                loop {
                    let i = next.get();
                    next.set(i + 1);
                    let Some(url) = urls.get(i) else { break };
                    let r = fetch_file(url).await;
                    results.borrow_mut()[i] = Some(r);
                    let finished = done.get() + 1;
                    done.set(finished);
                    me.opening.update(|o| {
                        if let Some(o) = o {
                            o.name = format!("{finished} of {n} files fetched");
                        }
                    });
                    if finished == n {
                        let all = results.take();
                        me.fetched(&urls, all);
                    }
                }
            });
        }
    }

    /// Opens what was fetched; names what was not.
    fn fetched(&self, urls: &[String], results: Vec<Fetched>) {
        let mut files = Vec::new();
        let mut failed = Vec::new();
        for (url, r) in urls.iter().zip(results) {
            match r {
                Some(Ok(f)) => files.push(f),
                Some(Err(e)) => failed.push(format!("{url} ({e})")),
                None => failed.push(format!("{url} (not fetched)")),
            }
        }
        self.opening.set(None);
        self.open_files(files);
        if !failed.is_empty() {
            let message = format!(
                "could not fetch {} of {} files: {}",
                failed.len(),
                urls.len(),
                failed.join("; ")
            );
            // After the open starts (which forgets any kept error) and before it ends.
            self.keep_error(message);
        }
    }
}
