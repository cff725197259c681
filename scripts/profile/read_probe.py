#!/usr/bin/env python3
"""How fast this Chromium hands a picked `File` to a worker, with no memsnap code involved: the
floor under the worker's read (the page bench's `read` column).

Each method reads the file in a fresh page and worker (a new `File`, as each pick is), `--reps`
times: a BYOB stream reader with a 1 MB buffer (what `app/src/worker/file.rs` does), the default
stream reader, `FileReaderSync` in 8 MB slices, and `Blob.arrayBuffer()`; each copies the bytes
into one preallocated buffer, as the worker copies them into wasm memory. Prints each method's
first read and the median of the rest, in ms and MB/s.

With `--parse-mb-s R`, two more rows stand in for a parse that runs at R MB/s (the worker's
thread kept busy that long per byte, no memsnap code either): `byob+parse`, each chunk "parsed"
as it comes while the browser reads the next (`app/src/worker/streaming.rs`), and
`read,parse`, the whole file read, then "parsed". Give R the native parse + index rate the page
bench prints, and these rows are the floor under the worker's read + parse + index on this
machine: what the page would measure if its wasm ran as fast as native code. With several files,
a last line adds each method's reads up, as the page bench's "real fixtures together" does.

    python3 scripts/profile/read_probe.py FILE [FILE...] [--reps 3] [--pages 3] [--parse-mb-s 420]

Needs Chromium and the `websockets` package (bench-time only, like scripts/profile/profile_page.py).
"""

import argparse
import asyncio
import functools
import http.server
import json
import os
import shutil
import socketserver
import statistics
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_page import devtools  # noqa: E402

PAGE = """<!doctype html><input type=file id=f><script>
window.results = null;
const w = new Worker('w.js');
w.onmessage = e => { window.results = e.data; };
document.getElementById('f').onchange = e =>
  w.postMessage({file: e.target.files[0], method: location.hash.slice(1), reps: REPS, parseMbS: PARSE});
</script>"""

WORKER = """
async function byob(file) {
  const r = file.stream().getReader({mode: 'byob'});
  let buf = new Uint8Array(1 << 20), total = 0;
  const out = new Uint8Array(file.size);
  for (;;) {
    const {value, done} = await r.read(new Uint8Array(buf.buffer));
    if (done) break;
    out.set(value, total); total += value.length; buf = value;
  }
  return total;
}
async function stream(file) {
  const r = file.stream().getReader(); let total = 0;
  const out = new Uint8Array(file.size);
  for (;;) {
    const {value, done} = await r.read();
    if (done) break;
    out.set(value, total); total += value.length;
  }
  return total;
}
function sync(file) {
  const fr = new FileReaderSync(); let total = 0;
  const out = new Uint8Array(file.size);
  for (let s = 0; s < file.size; s += 8 << 20) {
    const b = fr.readAsArrayBuffer(file.slice(s, Math.min(file.size, s + (8 << 20))));
    out.set(new Uint8Array(b), total); total += b.byteLength;
  }
  return total;
}
async function whole(file) {
  const out = new Uint8Array(file.size);
  out.set(new Uint8Array(await file.arrayBuffer()));
  return file.size;
}
// A stand-in for parsing `n` bytes at PARSE_MB_S: the thread kept busy, as a parse keeps it.
let PARSE_MB_S = 0;
function parse(n) {
  const end = performance.now() + n / 1e3 / PARSE_MB_S;
  while (performance.now() < end) {}
}
async function byobParse(file) {
  const r = file.stream().getReader({mode: 'byob'});
  let total = 0;
  const out = new Uint8Array(file.size);
  let next = r.read(new Uint8Array(1 << 20));
  for (;;) {
    const {value, done} = await next;
    if (done) break;
    const n = value.length;
    out.set(value, total); total += n;
    // The next read is asked for before the parse, as file.rs does (this detaches `value`).
    next = r.read(new Uint8Array(value.buffer));
    parse(n);
  }
  return total;
}
async function readThenParse(file) {
  const n = await byob(file);
  parse(n);
  return n;
}
const METHODS = {byob, stream, sync, arrayBuffer: whole, 'byob+parse': byobParse, 'read,parse': readThenParse};
onmessage = async e => {
  const {file, method, reps, parseMbS} = e.data;
  PARSE_MB_S = parseMbS;
  const ms = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    const n = await METHODS[method](file);
    ms.push(performance.now() - t);
    if (n !== file.size) { postMessage({error: `${method} read ${n} of ${file.size} bytes`}); return; }
  }
  postMessage({ms});
};
"""


async def read_once(cdp, url, path, method):
    target = (await cdp.send("Target.createTarget", {"url": f"{url}#{method}"}))["targetId"]
    page = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
    try:
        for _ in range(200):
            r = await cdp.send("Runtime.evaluate", {
                "expression": "!!document.getElementById('f')", "returnByValue": True}, page)
            if r["result"].get("value"):
                break
            await asyncio.sleep(0.05)
        doc = await cdp.send("DOM.getDocument", {}, page)
        node = (await cdp.send("DOM.querySelector",
                               {"nodeId": doc["root"]["nodeId"], "selector": "#f"}, page))["nodeId"]
        await cdp.send("DOM.setFileInputFiles", {"files": [path], "nodeId": node}, page)
        for _ in range(1200):
            r = await cdp.send("Runtime.evaluate", {
                "expression": "JSON.stringify(window.results)", "returnByValue": True}, page)
            value = json.loads(r["result"].get("value") or "null")
            if value:
                if "error" in value:
                    sys.exit(f"read_probe: {value['error']}")
                return value["ms"]
            await asyncio.sleep(0.05)
        sys.exit(f"read_probe: {method} on {path} gave no answer in 60 s")
    finally:
        await cdp.send("Target.closeTarget", {"targetId": target})


async def run(args, root):
    handler = functools.partial(QuietHandler, directory=root)
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
    try:
        async with devtools() as cdp:
            methods = ["byob", "stream", "sync", "arrayBuffer"]
            if args.parse_mb_s:
                methods += ["byob+parse", "read,parse"]
            # Per method: MB, first reads' ms, later reads' ms.
            together = {m: [0.0, 0.0, 0.0] for m in methods}
            for file in args.files:
                mb = os.path.getsize(file) / 1e6
                print(f"{os.path.basename(file)} ({mb:.1f} MB): first read / later reads, "
                      f"median of {args.pages} fresh pages")
                for method in methods:
                    runs = [await read_once(cdp, url, os.path.abspath(file), method)
                            for _ in range(args.pages)]
                    first = statistics.median(r[0] for r in runs)
                    later = statistics.median(x for r in runs for x in r[1:]) if args.reps > 1 else first
                    together[method][0] += mb
                    together[method][1] += first
                    together[method][2] += later
                    print(f"  {method:12} {first:7.1f} ms ({mb / first * 1e3:5.0f} MB/s)"
                          f"   {later:7.1f} ms ({mb / later * 1e3:5.0f} MB/s)")
            if len(args.files) > 1:
                print("all files added up, first / later reads: " + ", ".join(
                    f"{m} {mb / first * 1e3:.0f} / {mb / later * 1e3:.0f} MB/s"
                    for m, (mb, first, later) in together.items()))
    finally:
        server.shutdown()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--reps", type=int, default=3, help="reads of one File per page")
    p.add_argument("--pages", type=int, default=3, help="fresh pages per method")
    p.add_argument("--parse-mb-s", type=float, default=0,
                   help="also read while a stand-in parse runs at this many MB/s")
    args = p.parse_args()
    root = tempfile.mkdtemp(prefix="memsnap-read-probe-site-")
    try:
        with open(os.path.join(root, "index.html"), "w") as f:
            f.write(PAGE.replace("REPS", str(args.reps)).replace("PARSE", str(args.parse_mb_s)))
        with open(os.path.join(root, "w.js"), "w") as f:
            f.write(WORKER)
        asyncio.run(run(args, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
