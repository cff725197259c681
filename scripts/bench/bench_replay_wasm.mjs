// Times the replay of the generated 1M-entry trace in wasm under node: the same code and
// workload as the native `replay_rate` example (core/examples/replay_wasm.rs, built for
// wasm32-unknown-unknown). Prints one JSON line in replay_rate's form.
//
//   node scripts/bench/bench_replay_wasm.mjs REPLAY_WASM.wasm [RUNS [ENTRIES]]
//
// Best of RUNS (after one warm-up run, so that V8's optimising tier has compiled the module):
// wall time, and the process's CPU time (user + system, which also counts V8's helper threads).
import { readFileSync } from "node:fs";

const [path, runsArg, nArg] = process.argv.slice(2);
if (!path) {
  console.error("usage: node bench_replay_wasm.mjs REPLAY_WASM.wasm [RUNS [ENTRIES]]");
  process.exit(2);
}
const runs = Number(runsArg ?? 7);
const n = Number(nArg ?? 1000000);
const { instance } = await WebAssembly.instantiate(readFileSync(path), {});
const { prepare, replay_once } = instance.exports;
const entries = prepare(n);
let bestWall = Infinity;
let bestCpu = Infinity;
for (let i = 0; i <= runs; i++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const ok = replay_once();
  const wall = (performance.now() - t0) / 1e3;
  const c = process.cpuUsage(c0);
  if (ok !== 1) {
    console.error(`bench_replay_wasm: the replay does not match its own trace (code ${ok})`);
    process.exit(1);
  }
  if (i === 0) continue;
  bestWall = Math.min(bestWall, wall);
  bestCpu = Math.min(bestCpu, (c.user + c.system) / 1e6);
}
console.log(
  JSON.stringify({
    entries,
    runs,
    wall_entries_per_s: Math.round(entries / bestWall),
    cpu_entries_per_s: Math.round(entries / bestCpu),
  }),
);
