//! The browser's own floor under the worker's read, for the page benchmark
//! (tests/tests/page_bench.rs): the same picked `File` read in a fresh worker with no memsnap
//! code, as `app/src/worker/file.rs` reads it (a BYOB stream reader and a 1 MiB buffer, each
//! chunk copied into one buffer of the file's size, as the worker copies into wasm memory).
//! Measured in the same run as the worker's figures, it bounds what the worker's read + parse
//! + index can reach on this machine: no parse is faster than no parse.
//!
//! `scripts/profile/read_probe.py` compares four ways of reading and a stand-in parse; this is its
//! `byob` row, kept in the bench so that every run carries it.

use std::path::Path;
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use serde_json::Value;

/// The worker: reads the posted `File` `reps` times and posts each read's milliseconds.
const WORKER: &str = r#"
onmessage = async (e) => {
  const { file, reps } = e.data;
  try {
    const ms = [];
    for (let i = 0; i < reps; i++) {
      const t = performance.now();
      const reader = file.stream().getReader({ mode: 'byob' });
      const out = new Uint8Array(file.size);
      let buf = new Uint8Array(1 << 20), total = 0;
      for (;;) {
        const { value, done } = await reader.read(new Uint8Array(buf.buffer));
        if (done) break;
        if (total + value.length > out.length) throw new Error('more bytes than the file size');
        out.set(value, total); total += value.length; buf = value;
      }
      ms.push(performance.now() - t);
      if (total !== file.size) throw new Error(`read ${total} of ${file.size} bytes`);
    }
    postMessage({ ms });
  } catch (err) {
    postMessage({ error: String(err) });
  }
};
"#;

/// Adds a file input to the open page whose pick starts a fresh worker that reads the file;
/// the result lands in `window.__memsnapBareRead`.
const SET_UP: &str = r#"
const [source, reps] = arguments;
window.__memsnapBareRead = null;
document.getElementById('memsnap-bare-read')?.remove();
const input = document.createElement('input');
input.type = 'file';
input.id = 'memsnap-bare-read';
document.body.appendChild(input);
input.onchange = () => {
  const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
  const w = new Worker(url);
  w.onmessage = (e) => { window.__memsnapBareRead = e.data; w.terminate(); URL.revokeObjectURL(url); };
  w.onerror = (e) => { window.__memsnapBareRead = { error: e.message || 'the worker failed' }; };
  w.postMessage({ file: input.files[0], reps });
};
"#;

/// Milliseconds of `reps` reads of `path` in a fresh worker of the page `c` shows: the first
/// read of a new `File` in a new worker, then reads of the same `File` again.
pub async fn bare_reads(
    c: &Client,
    path: &Path,
    reps: usize,
    timeout: Duration,
) -> Result<Vec<f64>, String> {
    let absolute = std::fs::canonicalize(path).map_err(|e| format!("{}: {e}", path.display()))?;
    c.execute(SET_UP, vec![Value::from(WORKER), Value::from(reps)])
        .await
        .map_err(|e| format!("setting up the bare read: {e}"))?;
    c.find(Locator::Id("memsnap-bare-read"))
        .await
        .map_err(|e| format!("the bare read's input: {e}"))?
        .send_keys(&absolute.to_string_lossy())
        .await
        .map_err(|e| format!("picking {} for the bare read: {e}", path.display()))?;
    let start = Instant::now();
    loop {
        let v = c
            .execute("return window.__memsnapBareRead;", vec![])
            .await
            .map_err(|e| format!("reading the bare read's result: {e}"))?;
        if let Some(e) = v.get("error").and_then(Value::as_str) {
            return Err(format!("the bare read of {}: {e}", path.display()));
        }
        if let Some(ms) = v.get("ms").and_then(Value::as_array) {
            let ms: Vec<f64> = ms.iter().filter_map(Value::as_f64).collect();
            if ms.len() != reps {
                return Err(format!("{} of {reps} bare reads timed", ms.len()));
            }
            return Ok(ms);
        }
        if start.elapsed() > timeout {
            return Err(format!(
                "no bare read of {} after {timeout:?}",
                path.display()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
