//! Fetching `?url=` and the bundled example in the worker, streaming, reporting progress.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::ReadableStreamDefaultReader;

use super::post::{progress, scope};
use crate::js_error::js_error;
use crate::protocol::{RequestId, Stage};
use crate::size_limit;

pub async fn read_all(id: RequestId, url: &str) -> Result<Vec<u8>, String> {
    let fail = |e| format!("{url}: could not fetch: {}", js_error(e));
    let response: web_sys::Response = JsFuture::from(scope().fetch_with_str(url))
        .await
        .map_err(fail)?
        .dyn_into()
        .map_err(fail)?;
    if !response.ok() {
        return Err(format!(
            "{url}: HTTP {} {}",
            response.status(),
            response.status_text()
        ));
    }
    // Content-Length counts encoded bytes; it only scales the bar.
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|s| s.parse::<u64>().ok());
    let name = crate::url_name::file_name(url);
    // Content-Length may be absent or count compressed bytes, so the running total is checked too.
    if let Some(total) = total {
        size_limit::check(&name, total)?;
    }
    let Some(body) = response.body() else {
        return Ok(Vec::new());
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut out = Vec::with_capacity(total.unwrap_or(0) as usize);
    progress(id, Stage::Reading, 0, total);
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(fail)?;
        if Reflect::get(&chunk, &"done".into())
            .map_err(fail)?
            .as_bool()
            .unwrap_or(true)
        {
            break;
        }
        let value: Uint8Array = Reflect::get(&chunk, &"value".into())
            .map_err(fail)?
            .unchecked_into();
        let at = out.len();
        out.resize(at + value.length() as usize, 0);
        value.copy_to(&mut out[at..]);
        size_limit::check(&name, out.len() as u64)?;
        progress(id, Stage::Reading, out.len() as u64, total);
    }
    Ok(out)
}
