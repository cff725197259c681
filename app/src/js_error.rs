//! A JavaScript exception as the message the page shows (the worker's reads and the page's fetches).

use wasm_bindgen::{JsCast, JsValue};

pub fn js_error(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
