//! The JS heaps of a browser's dedicated workers, through a DevTools connection of our own.
//!
//! chromedriver's passthrough (`cdp.rs`) reaches only the page's own session, and
//! `performance.memory` only the page's isolate, so memsnap's worker (its wasm glue, its
//! messages) was left out of the page bench's memory while MemoryViz.js, which has no worker,
//! had all of its heap counted. This connects to the browser's DevTools endpoint (the address
//! chromedriver reports for its Chromium), attaches to every page, auto-attaches to its
//! workers, and asks each for its heap after a full collection.

use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// How long a command's answer may take.
const ANSWER: Duration = Duration::from_secs(30);
/// How long after auto-attaching no new worker may appear before the set is taken as whole.
const QUIET: Duration = Duration::from_millis(300);

/// What a V8 isolate (a page's or a worker's) holds after a full collection
/// (`Runtime.getHeapUsage`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Heap {
    /// The JS heap's live bytes (`usedSize`).
    pub used: u64,
    /// `ArrayBuffer` contents outside it (`backingStorageSize`; wasm memories are not among them).
    pub backing: u64,
}

/// What each dedicated worker of the browser's pages holds after a full collection, in no
/// particular order; `debugger` is the browser's DevTools address (`host:port`).
pub async fn js_heaps(debugger: &str) -> Result<Vec<Heap>, String> {
    let url = browser_url(debugger).await?;
    let (socket, _) = tokio_tungstenite::connect_async(url.as_str())
        .await
        .map_err(|e| format!("connecting to {url}: {e}"))?;
    let mut cdp = Cdp {
        socket,
        next: 0,
        events: Vec::new(),
    };
    let targets = cdp.send("Target.getTargets", json!({}), None).await?;
    let pages: Vec<String> = targets["targetInfos"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["type"] == "page")
        .filter_map(|t| t["targetId"].as_str().map(str::to_string))
        .collect();
    let mut heaps = Vec::new();
    for page in pages {
        let attached = cdp
            .send(
                "Target.attachToTarget",
                json!({ "targetId": page, "flatten": true }),
                None,
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        cdp.events.clear();
        cdp.send(
            "Target.setAutoAttach",
            json!({ "autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true }),
            Some(&session),
        )
        .await?;
        // Workers already running are announced as attached, each once.
        cdp.drain(QUIET).await?;
        let workers: Vec<String> = cdp
            .events
            .iter()
            .filter(|e| e["method"] == "Target.attachedToTarget")
            .filter(|e| e["params"]["targetInfo"]["type"] == "worker")
            .filter_map(|e| e["params"]["sessionId"].as_str().map(str::to_string))
            .collect();
        for worker in &workers {
            cdp.send("HeapProfiler.collectGarbage", json!({}), Some(worker))
                .await?;
            let usage = cdp
                .send("Runtime.getHeapUsage", json!({}), Some(worker))
                .await?;
            heaps.push(heap_of(&usage));
        }
        // Leaves the page as it was: no auto-attach, no session of ours.
        cdp.send(
            "Target.setAutoAttach",
            json!({ "autoAttach": false, "waitForDebuggerOnStart": false, "flatten": true }),
            Some(&session),
        )
        .await?;
        cdp.send(
            "Target.detachFromTarget",
            json!({ "sessionId": session }),
            None,
        )
        .await?;
    }
    let _ = cdp.socket.close(None).await;
    Ok(heaps)
}

/// `Runtime.getHeapUsage`'s answer as a [`Heap`].
pub fn heap_of(usage: &Value) -> Heap {
    let bytes = |k: &str| usage[k].as_f64().unwrap_or(0.0) as u64;
    Heap {
        used: bytes("usedSize"),
        backing: bytes("backingStorageSize"),
    }
}

/// The browser target's websocket URL, from `/json/version`.
async fn browser_url(debugger: &str) -> Result<String, String> {
    let uri: http::Uri = format!("http://{debugger}/json/version")
        .parse()
        .map_err(|e| format!("DevTools at {debugger}: {e}"))?;
    let client =
        Client::builder(TokioExecutor::new()).build::<_, Empty<Bytes>>(HttpConnector::new());
    let reply = tokio::time::timeout(ANSWER, client.get(uri))
        .await
        .map_err(|_| format!("/json/version: no answer in {ANSWER:?}"))?
        .map_err(|e| format!("DevTools at {debugger}: {e}"))?;
    let body = tokio::time::timeout(ANSWER, reply.into_body().collect())
        .await
        .map_err(|_| format!("/json/version: no body in {ANSWER:?}"))?
        .map_err(|e| format!("/json/version: {e}"))?
        .to_bytes();
    let version: Value = serde_json::from_slice(&body)
        .map_err(|e| format!("/json/version: {e}: {}", String::from_utf8_lossy(&body)))?;
    version["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("/json/version has no webSocketDebuggerUrl: {version}"))
}

struct Cdp {
    socket: Socket,
    next: u64,
    /// Events received, in order, while waiting for answers.
    events: Vec<Value>,
}

impl Cdp {
    async fn send(
        &mut self,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<Value, String> {
        self.next += 1;
        let id = self.next;
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        self.socket
            .send(Message::Text(message.to_string().into()))
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        loop {
            let got = tokio::time::timeout(ANSWER, self.socket.next())
                .await
                .map_err(|_| format!("{method}: no answer in {ANSWER:?}"))?;
            let value = parse(got).map_err(|e| format!("{method}: {e}"))?;
            if value["id"] == id {
                if let Some(error) = value.get("error") {
                    return Err(format!("{method}: {error}"));
                }
                return Ok(value["result"].clone());
            }
            self.events.push(value);
        }
    }

    /// Takes in events until none has come for `quiet`.
    async fn drain(&mut self, quiet: Duration) -> Result<(), String> {
        while let Ok(got) = tokio::time::timeout(quiet, self.socket.next()).await {
            self.events.push(parse(got)?);
        }
        Ok(())
    }
}

fn parse(
    got: Option<Result<Message, tokio_tungstenite::tungstenite::Error>>,
) -> Result<Value, String> {
    match got {
        Some(Ok(Message::Text(text))) => {
            serde_json::from_str(text.as_str()).map_err(|e| e.to_string())
        }
        Some(Ok(other)) => Ok(json!({ "ignored": other.to_string() })),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("the DevTools connection closed".into()),
    }
}
