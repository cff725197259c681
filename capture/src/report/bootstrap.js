// memsnap report: unpacks the viewer and the snapshot this one file carries (capture/src/report)
// and hands them to the page as `window.memsnapReport` (app/src/report.rs). From file:// a page
// may neither start a worker from a script file nor fetch beside itself, so the worker starts
// from a Blob and is sent its compiled module, and the snapshot becomes a File.
"use strict";
(function () {
  // base85.rs holds the same alphabet and the reference encoder.
  const ALPHABET = "!#$%()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_abcdefghijklmnopqrstuvwxyz{}";
  const DIGIT = new Uint8Array(128).fill(255);
  for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;

  // The bytes of a data element; the element is removed so its text can be collected.
  function take(id) {
    const el = document.getElementById(id);
    if (!el) throw new Error("this report lacks its " + id + " part");
    const text = el.textContent;
    const n = Number(el.dataset.bytes);
    const out = new Uint8Array(Math.ceil(n / 4) * 4);
    let o = 0;
    for (let i = 0; i < text.length; i += 5) {
      let v = 0;
      for (let k = 0; k < 5; k++) {
        // A short last group is padded with the highest digit (base85.rs).
        const c = i + k < text.length ? text.charCodeAt(i + k) : 0x7d;
        const d = c < 128 ? DIGIT[c] : 255;
        if (d === 255) throw new Error("this report's " + id + " part is damaged at character " + (i + k));
        v = v * 85 + d;
      }
      out[o] = v >>> 24; out[o + 1] = (v >>> 16) & 255; out[o + 2] = (v >>> 8) & 255; out[o + 3] = v & 255;
      o += 4;
    }
    el.remove();
    return { bytes: out.subarray(0, n), el };
  }

  async function gunzip(bytes) {
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  }

  function fail(e) {
    const p = document.createElement("pre");
    p.setAttribute("data-testid", "report-error");
    p.textContent = "memsnap: this report could not start: " + e;
    document.body.prepend(p);
    throw e;
  }

  window.memsnapBoot = (async function () {
    const app = take("memsnap-app-wasm").bytes;
    const worker = take("memsnap-worker-wasm").bytes;
    const snap = take("memsnap-snapshot");
    const js = document.getElementById("memsnap-worker-js");
    const workerJs = js.textContent;
    js.remove();
    const [appWasm, workerWasm] = await Promise.all([gunzip(app), gunzip(worker)]);
    const workerModule = await WebAssembly.compile(workerWasm);
    const workerUrl = URL.createObjectURL(new Blob([
      workerJs,
      "\n;self.onmessage = function (e) { self.onmessage = null; wasm_bindgen({ module_or_path: e.data }); };\n",
    ], { type: "text/javascript" }));
    const file = new File([snap.bytes], snap.el.dataset.name, { type: "application/octet-stream" });
    window.memsnapReport = {
      file,
      worker() {
        const w = new Worker(workerUrl, { name: "memsnap-worker" });
        w.postMessage(workerModule);
        return w;
      },
    };
    return { appWasm };
  })().catch(fail);
})();
