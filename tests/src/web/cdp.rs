//! Chrome DevTools protocol commands through chromedriver's passthrough
//! (`POST /session/{id}/goog/cdp/execute`), for measurements WebDriver has no command for:
//! forcing a garbage collection, counting DOM nodes and listeners, V8's heap figures.

use fantoccini::error::CmdError;
use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::Client;
use serde_json::{json, Value};

#[derive(Debug)]
struct Execute {
    cmd: String,
    params: Value,
}

impl WebDriverCompatibleCommand for Execute {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// Runs DevTools command `cmd` (e.g. `HeapProfiler.collectGarbage`) on the session's page.
pub async fn execute(c: &Client, cmd: &str, params: Value) -> Result<Value, CmdError> {
    c.issue_cmd(Execute {
        cmd: cmd.to_string(),
        params,
    })
    .await
}

/// A full garbage collection of the page's JS heap (and Blink's objects it holds).
pub async fn collect_garbage(c: &Client) -> Result<(), CmdError> {
    execute(c, "HeapProfiler.collectGarbage", json!({}))
        .await
        .map(|_| ())
}

/// Blink's live documents, DOM nodes and event listeners (`Memory.getDOMCounters`).
pub async fn dom_counters(c: &Client) -> Value {
    execute(c, "Memory.getDOMCounters", json!({}))
        .await
        .unwrap_or(Value::Null)
}

/// The page's JS heap as `Runtime.getHeapUsage` counts it, with the `ArrayBuffer` contents
/// `performance.memory` leaves out; call it after `collect_garbage` for what the page holds.
pub async fn heap_usage(c: &Client) -> Option<super::workers::Heap> {
    let usage = execute(c, "Runtime.getHeapUsage", json!({})).await.ok()?;
    Some(super::workers::heap_of(&usage))
}
