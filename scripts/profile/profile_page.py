#!/usr/bin/env python3
"""A CPU profile of the page and its worker while a file opens, through the DevTools protocol.

WebDriver cannot profile a worker (chromedriver's CDP passthrough only reaches the page and
returns no events), so this drives headless Chromium itself: it serves the built site, attaches
to the page and, paused at its start, to the worker, starts V8's sampling profiler in both, picks
the file through the page's file input, waits for the page's own first-paint measure, and prints
where each thread spent its time (self time by function, wasm functions by their Rust names).

    python3 scripts/profile/profile_page.py dist FILE [FILE...] [--opens 3] [--out target/profile]
        [--zoom N]   # then N timeline zoom steps that land during background analyses
        [--no-profiler]  # the measures alone, as the page bench times them

Each file opens `--opens` times in one fresh page: the first open is cold (the worker has just
started), the later ones warm. The profiles are written as `.cpuprofile` files (open them in
Chromium's DevTools, Performance panel) and summarised on stdout. Needs Chromium and the
`websockets` package (pip; bench-time only, never in CI).
"""

import argparse
import asyncio
import collections
import contextlib
import functools
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

try:
    import websockets
except ImportError:
    sys.exit("profile_page: needs the websockets package: python3 -m pip install websockets")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    # `/__file/<n>`: the n-th file named on the command line (for `--reps`).
    files = []

    def translate_path(self, path):
        if path.startswith("/__file/"):
            return self.files[int(path.rsplit("/", 1)[1])]
        return super().translate_path(path)

    def log_message(self, *args):
        pass


def serve(root, files):
    QuietHandler.files = [os.path.abspath(f) for f in files]
    handler = functools.partial(QuietHandler, directory=root)
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("profile_page: no chromium on PATH")


class Cdp:
    """One browser connection; sessions are flat (`sessionId` on each message)."""

    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0
        self.waiting = {}
        self.events = asyncio.Queue()

    async def pump(self):
        async for raw in self.ws:
            msg = json.loads(raw)
            if "id" in msg:
                fut = self.waiting.pop(msg["id"], None)
                if fut and not fut.done():
                    fut.set_result(msg)
            else:
                await self.events.put(msg)

    async def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        fut = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = fut
        await self.ws.send(json.dumps(msg))
        reply = await asyncio.wait_for(fut, 120)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})


def self_times(profile):
    """Milliseconds of self time by function, from a V8 CPU profile."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    dt = collections.Counter()
    samples, deltas = profile.get("samples", []), profile.get("timeDeltas", [])
    for i, node_id in enumerate(samples):
        # A sample's time is the gap to the next one.
        gap = deltas[i + 1] if i + 1 < len(deltas) else 0
        frame = nodes[node_id]["callFrame"]
        name = frame["functionName"] or "(anonymous)"
        url = frame.get("url", "")
        if url.endswith(".wasm") or "wasm" in url:
            name = demangle(name)
        dt[name] += gap / 1000.0
    return dt


async def trace_summary(cdp, args):
    """Stops tracing; the renderer main thread's time by event name (complete events nested
    under a task counted once, by the innermost Blink phase: style, layout, paint, script)."""
    await cdp.send("Tracing.end")
    events = []
    while True:
        ev = await asyncio.wait_for(cdp.events.get(), 60)
        if ev.get("method") == "Tracing.dataCollected":
            events.extend(ev["params"]["value"])
        elif ev.get("method") == "Tracing.tracingComplete":
            break
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    phases = {"UpdateLayoutTree", "Layout", "Paint", "PrePaint", "Layerize", "FunctionCall",
              "EvaluateScript", "v8.callFunction", "TimerFire", "FireAnimationFrame",
              "EventDispatch", "MajorGC", "MinorGC", "V8.GC_SCAVENGER", "ParseHTML",
              "RunMicrotasks", "HitTest", "Commit", "UpdateLayerTree", "RunTask"}
    out = collections.Counter()
    for e in events:
        if (e["pid"], e["tid"]) in main and e.get("ph") == "X" and e.get("name") in phases:
            out[e["name"]] += e.get("dur", 0) / 1000.0
    return out


def demangle(name):
    # Rust legacy mangling as V8 shows it: strip the hash, keep the path.
    m = re.match(r"^(?:\$)?(.*?)(?:::h[0-9a-f]{16})?$", name)
    return m.group(1) if m else name


def inclusive_times(profile, pattern):
    """Milliseconds of total (self + callees) time of the functions matching `pattern`."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}
    dt = collections.Counter()
    samples, deltas = profile.get("samples", []), profile.get("timeDeltas", [])
    for i, node_id in enumerate(samples):
        gap = deltas[i + 1] if i + 1 < len(deltas) else 0
        seen = set()
        while node_id is not None:
            name = demangle(nodes[node_id]["callFrame"]["functionName"])
            if name not in seen and re.search(pattern, name):
                seen.add(name)
                dt[name] += gap / 1000.0
            node_id = parent.get(node_id)
    return dt


def summary(label, profile, top):
    times = self_times(profile)
    total = sum(times.values())
    idle = times.get("(idle)", 0) + times.get("(program)", 0)
    print(f"  {label}: {total:.1f} ms sampled, {total - idle:.1f} ms busy")
    for name, ms in times.most_common(top):
        if name in ("(idle)",):
            continue
        print(f"    {ms:8.1f} ms  {name[:110]}")
    if ARGS.inclusive:
        print(f"  {label}, total time of functions matching {ARGS.inclusive!r}:")
        for name, ms in inclusive_times(profile, ARGS.inclusive).most_common(top):
            print(f"    {ms:8.1f} ms  {name[:110]}")
    return {"total_ms": total, "self_ms": dict(times.most_common(60))}


async def run(args):
    server = serve(os.path.abspath(args.dist), args.files)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        async with devtools(args.chromium_arg) as cdp:
            os.makedirs(args.out, exist_ok=True)
            report = {}
            for i, file in enumerate(args.files):
                report[os.path.basename(file)] = await profile_file(cdp, url, file, i, args)
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            json.dump(report, f, indent=1)
        print(f"profile_page: wrote {args.out}/")
    finally:
        server.shutdown()


@contextlib.asynccontextmanager
async def devtools(extra_args=()):
    """A fresh headless Chromium (its own profile) and a `Cdp` connection to it; both go at
    the end. scripts/profile/read_probe.py uses it too."""
    profile_dir = tempfile.mkdtemp(prefix="memsnap-profile-")
    proc = subprocess.Popen(
        [chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--remote-debugging-port=0", f"--user-data-dir={profile_dir}", *extra_args,
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile_dir, "DevToolsActivePort")
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().count("\n") >= 1:
                break
            time.sleep(0.05)
        port, path = open(port_file).read().split("\n")[:2]
        async with websockets.connect(f"ws://127.0.0.1:{port}{path}", max_size=None) as ws:
            cdp = Cdp(ws)
            pump = asyncio.create_task(cdp.pump())
            try:
                yield cdp
            finally:
                pump.cancel()
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(profile_dir, ignore_errors=True)


async def profile_file(cdp, url, file, index, args):
    name = os.path.basename(file)
    target = (await cdp.send("Target.createTarget", {"url": "about:blank"}))["targetId"]
    page = (await cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True}))["sessionId"]
    # The worker starts paused so its profile covers its start-up.
    await cdp.send("Target.setAutoAttach",
                   {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}, page)
    for s in (page,):
        await cdp.send("Profiler.enable", {}, s)
        await cdp.send("Profiler.setSamplingInterval", {"interval": args.interval_us}, s)
        await cdp.send("Runtime.enable", {}, s)
    await cdp.send("Page.enable", {}, page)
    await cdp.send("Page.navigate", {"url": url}, page)
    worker = None
    while worker is None:
        ev = await asyncio.wait_for(cdp.events.get(), 60)
        if ev.get("method") == "Target.attachedToTarget":
            info = ev["params"]["targetInfo"]
            s = ev["params"]["sessionId"]
            if info["type"] == "worker":
                worker = s
            await cdp.send("Runtime.runIfWaitingForDebugger", {}, s)
    await cdp.send("Profiler.enable", {}, worker)
    await cdp.send("Profiler.setSamplingInterval", {"interval": args.interval_us}, worker)
    # The page's input, once mounted.
    async def evaluate(expr):
        r = await cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, page)
        return r.get("result", {}).get("value")
    for _ in range(600):
        if await evaluate("!!document.querySelector('[data-testid=\"file-input\"]')"):
            break
        await asyncio.sleep(0.05)
    # The worker says Ready and warms up; a user takes longer than this to pick a file.
    await asyncio.sleep(args.settle)
    doc = await cdp.send("DOM.getDocument", {}, page)
    node = (await cdp.send("DOM.querySelector",
                           {"nodeId": doc["root"]["nodeId"],
                            "selector": "[data-testid=\"file-input\"]"}, page))["nodeId"]
    out = []
    for n in range(args.opens):
        if args.trace:
            await cdp.send("Tracing.start", {
                "traceConfig": {"includedCategories": [
                    "devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute",
                    "blink", "loading"]},
                "transferMode": "ReportEvents"})
        if not args.no_profiler:
            await cdp.send("Profiler.start", {}, worker)
            await cdp.send("Profiler.start", {}, page)
        # The page clears its first-paint measure at each pick; the pick's own mark is new.
        before = await evaluate("performance.getEntriesByName('memsnap:file-chosen').length")
        await cdp.send("DOM.setFileInputFiles", {"nodeId": node, "files": [os.path.abspath(file)]}, page)
        paint = None
        for _ in range(1200):
            got = await evaluate(
                "(() => { const m = performance.getEntriesByName('memsnap:load-to-first-paint');"
                f" const c = performance.getEntriesByName('memsnap:file-chosen').length;"
                f" return c > {before} && m.length ? m[m.length - 1].duration : null; }})()")
            if got is not None:
                paint = got
                break
            await asyncio.sleep(0.05)
        requests = await evaluate(
            "(() => { const m = performance.getEntriesByName('memsnap:file-chosen');"
            " const t0 = m.length ? m[m.length - 1].startTime : 0;"
            " return performance.getEntriesByType('measure')"
            ".filter(e => e.name.startsWith('memsnap:') && e.startTime >= t0)"
            ".map(e => [e.name.slice(8), Math.round((e.startTime - t0) * 10) / 10,"
            " Math.round(e.duration * 10) / 10]); })()")
        # The pick on the wall clock, to put the worker's measures on the page's clock.
        picked = await evaluate(
            "(() => { const m = performance.getEntriesByName('memsnap:file-chosen');"
            " return performance.timeOrigin + (m.length ? m[m.length - 1].startTime : 0); })()")
        # Right after the first paint, as in the page bench: the first pauses send the
        # background analyses, whose panels the page then draws for the first time.
        zoom = await zoom_during_background(cdp, page, args.zoom) if args.zoom else None
        await asyncio.sleep(0.3)
        dom = await evaluate("[document.querySelectorAll('*').length, "
                             "document.querySelectorAll('.seg-row').length, "
                             "document.querySelectorAll('[data-testid=block]').length]")
        r = await cdp.send("Runtime.evaluate", {"expression": """(() => {
            const e = performance.getEntriesByType('measure').filter(m => m.name.startsWith('memsnap:worker:'));
            const out = e.map(m => [m.name.slice(15), Math.round(m.startTime * 10) / 10, Math.round(m.duration * 10) / 10]);
            performance.clearMeasures();
            return {out, origin: performance.timeOrigin}; })()""", "returnByValue": True}, worker)
        got = r.get("result", {}).get("value") or {}
        worker_measures = got.get("out")
        if zoom:
            # The worker's answers on the zoom phase's clock (both clocks from their time origins).
            shift = got.get("origin", 0) - zoom["origin"]
            zoom["worker"] = [[w, round(at + shift, 1), ms] for w, at, ms in worker_measures or []
                              if at + shift >= 0]
        if args.no_profiler:
            wprof = pprof = {"nodes": [], "samples": [], "timeDeltas": [], "startTime": 0,
                             "endTime": 1}
        else:
            wprof = (await cdp.send("Profiler.stop", {}, worker))["profile"]
            pprof = (await cdp.send("Profiler.stop", {}, page))["profile"]
        label = "cold" if n == 0 else f"warm {n}"
        timeline = await trace_summary(cdp, args) if args.trace else None
        print(f"{name}, open {n + 1} ({label}): first paint {paint} ms; measures {requests}")
        print(f"  in the worker [what, at, ms]: {worker_measures}")
        if picked is not None:
            shift = got.get("origin", 0) - picked
            print("  the worker's, from the pick on the page's clock: "
                  f"{[[w, round(at + shift, 1), ms] for w, at, ms in worker_measures or [] if at + shift >= 0]}")
        if zoom:
            print(f"  zoom steps landing during background analyses (ms): {zoom['steps']}")
            print(f"  their page measures [what, at, ms]: {zoom['measures']}")
            print(f"  the worker's meanwhile, same clock: {zoom.get('worker')}")
        print(f"  page elements, segment rows, blocks: {dom}")
        heaps = {}
        for side, s in (("page", page), ("worker", worker)):
            # After a full collection, as the page bench's settled JS heap: what each V8
            # isolate holds (the page bench reads only the page's, performance.memory).
            await cdp.send("HeapProfiler.collectGarbage", {}, s)
            heaps[side] = await cdp.send("Runtime.getHeapUsage", {}, s)
        print("  JS heaps after a collection (MB used; ArrayBuffer backing stores): " + ", ".join(
            f"{side} {h.get('usedSize', 0) / 1e6:.2f} ({h.get('backingStorageSize', 0) / 1e6:.2f})"
            for side, h in heaps.items()))
        if timeline:
            print("  page main thread, top-level work (ms, DevTools trace):")
            for event, ms in timeline.most_common(args.top):
                print(f"    {ms:8.1f} ms  {event}")
        rec = {"dom": dom, "js_heaps": heaps, "first_paint_ms": paint, "measures": requests, "worker_measures": worker_measures, "trace": timeline,
               "worker": summary("worker", wprof, args.top),
               "page": summary("page", pprof, args.top)}
        for side, prof in (("worker", wprof), ("page", pprof)):
            with open(os.path.join(args.out, f"{name}.{n + 1}.{side}.cpuprofile"), "w") as f:
                json.dump(prof, f)
        out.append(rec)
        await asyncio.sleep(0.5)
    if args.reps:
        # The pipeline again and again in the worker (`memsnap_pipeline_ms`): how its speed
        # settles as V8 tiers the code up.
        r = await cdp.send("Runtime.evaluate", {
            "expression": f"""(async () => {{
                const b = new Uint8Array(await (await fetch('/__file/{index}')).arrayBuffer());
                const out = [];
                for (let i = 0; i < {args.reps}; i++) out.push(Array.from(wasm_bindgen.memsnap_pipeline_ms(b)));
                return out; }})()""",
            "awaitPromise": True, "returnByValue": True}, worker)
        reps = r.get("result", {}).get("value")
        if "exceptionDetails" in r:
            print(f"{name}: the passes failed: {r['exceptionDetails']}")
        print(f"{name}: in the worker, [parse, index, segments, timeline] ms per pass:")
        for i, row in enumerate(reps or []):
            print(f"    pass {i + 1:2}: " + "  ".join(f"{v:7.2f}" for v in row))
        out.append({"worker_passes_ms": reps})
    await cdp.send("Target.closeTarget", {"targetId": target})
    return out


async def zoom_during_background(cdp, page, steps):
    """The page bench's last zoom phase (tests/src/web/perf.rs): a pause past the page's idle
    delay, which sends the background analyses, then a wheel step on the timeline; `steps`
    times. Returns each step's ms (wheel to the canvas showing the new range) and the page's
    measures meanwhile (the worker's come with the open's, read after this)."""
    r = await cdp.send("Runtime.evaluate", {"expression": """(async (steps) => {
        const cv = document.querySelector('[data-testid="timeline"]');
        const rf = document.querySelector('[data-testid="range-filter"]');
        cv.scrollIntoView({block: 'center'});
        const want = () => rf.dataset.start + '-' + rf.dataset.end;
        const x = cv.getBoundingClientRect().width * 0.6;
        const wheel = (dy) => { const b = cv.getBoundingClientRect();
            cv.dispatchEvent(new WheelEvent('wheel', {clientX: b.left + x, clientY: b.top + 100,
                deltaY: dy, bubbles: true, cancelable: true})); };
        const t0 = performance.now();
        const out = [];
        for (let i = 0; i < steps; i++) {
            await new Promise(r => setTimeout(r, 170));
            const before = want(), s = performance.now();
            wheel(i % 2 ? 100 : -100);
            out.push(await new Promise((resolve) => {
                const mo = new MutationObserver(() => { const w = want();
                    if (w !== before && cv.dataset.drawn === w) { mo.disconnect(); resolve(Math.round((performance.now() - s) * 10) / 10); } });
                mo.observe(cv, {attributes: true, attributeFilter: ['data-drawn']});
                setTimeout(() => { mo.disconnect(); resolve(null); }, 20000);
            }));
        }
        const measures = performance.getEntriesByType('measure')
            .filter(e => e.name.startsWith('memsnap:') && e.startTime >= t0)
            .map(e => [e.name.slice(8), Math.round((e.startTime - t0) * 10) / 10, Math.round(e.duration * 10) / 10]);
        return {steps: out, measures, origin: performance.timeOrigin + t0}; })(""" + str(steps) + ")",
        "awaitPromise": True, "returnByValue": True}, page)
    return r.get("result", {}).get("value")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dist")
    p.add_argument("files", nargs="+")
    p.add_argument("--opens", type=int, default=3)
    p.add_argument("--out", default="target/profile")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--interval-us", type=int, default=100)
    p.add_argument("--no-profiler", action="store_true",
                   help="only the page's and the worker's own measures: the sampling profiler "
                        "interrupts the worker and adds ~11 ms to an open")
    p.add_argument("--chromium-arg", action="append", default=[],
                   help="extra Chromium switch, e.g. --chromium-arg=--js-flags=--no-liftoff")
    p.add_argument("--reps", type=int, default=0,
                   help="then run the open's pipeline this many times in the worker")
    p.add_argument("--inclusive", default="",
                   help="also list total (inclusive) time of functions matching this regex")
    p.add_argument("--trace", action="store_true",
                   help="also a DevTools trace of the page's main thread (style, layout, paint)")
    p.add_argument("--zoom", type=int, default=0,
                   help="after each open, this many zoom steps that land during background analyses")
    p.add_argument("--settle", type=float, default=1.0,
                   help="seconds between the page mounting and the first pick")
    global ARGS
    ARGS = p.parse_args()
    asyncio.run(run(ARGS))


if __name__ == "__main__":
    main()
