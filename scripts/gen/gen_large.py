#!/usr/bin/env python3
"""Writes a large synthetic PyTorch memory snapshot for benchmarks, pickled by CPython's own
pickler so that its memo sharing is the one real `_dump_snapshot()` files have:

- frame dicts ({name, filename, line}) come from one pool and are shared between stacks, and
  their strings are shared too (memo gets, as in real files);
- each allocation gets a fresh frame list (a CapturedTraceback is symbolized once per block),
  shared by its `alloc` and `free_completed` entries; `free_requested` gets its own list of the
  free site when recorded with `context="all"` (`--context all`), or shares the allocation's
  list with `context="alloc"` (`--context alloc`), as torch does;
- stacks are 20-40 frames deep: C++ frames of the op, then Python frames of the model;
- addresses fall inside the listed segments, and blocks add up to their segment's size, so
  `_memory_viz.py stats` and `trace` run on the file as on a real one.

Usage: gen_large.py OUT.pickle --entries N [--context all|alloc] [--seed S]. Prints the counts it checked by
reading the file back with pickle.load.
"""

import argparse
import os
import pickle
import random
import sys
import time

MIN_DEPTH, MAX_DEPTH = 20, 40
SEGMENTS = 64
MiB = 1 << 20


def frame_pool(rng):
    """Shared frame dicts: C++ op frames and Python model frames, with shared strings."""
    cpp_files = ["??", "", "RegisterCUDA.cpp", "VariableType_0.cpp", "VariableType_3.cpp",
                 "CUDACachingAllocator.cpp", "memory_snapshot.cpp", "python_variable_methods.cpp"]
    py_files = [f"/root/project/model/layer_{i}.py" for i in range(24)] + [
        "/root/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py",
        "/root/.venv/lib/python3.12/site-packages/torch/_tensor.py",
        "/usr/local/src/python-3.12.3/Objects/call.c",
        "/usr/local/src/python-3.12.3/Python/ceval.c",
    ]
    ops = [f"op{i}" for i in range(120)]
    cpp = []
    for op in ops:
        for tmpl in ("at::native::{op}_out_cuda(at::Tensor const&, c10::ArrayRef<long>, at::Tensor&)",
                     "at::_ops::{op}::call(at::Tensor const&, c10::Scalar const&)",
                     "at::_ops::{op}::redispatch(c10::DispatchKeySet, at::Tensor const&)",
                     "torch::autograd::VariableType::(anonymous namespace)::{op}(c10::DispatchKeySet, at::Tensor const&)",
                     "at::(anonymous namespace)::wrapper_CUDA_{op}(at::Tensor const&, c10::Scalar const&)",
                     "at::meta::structured_{op}::meta(at::Tensor const&, at::Tensor const&)"):
            cpp.append({"name": tmpl.format(op=op), "filename": rng.choice(cpp_files), "line": 0})
    alloc_frames = [
        {"name": n, "filename": rng.choice(cpp_files), "line": 0}
        for n in ("torch::unwind::unwind()", "torch::CapturedTraceback::gather(bool, bool, bool)",
                  "torch::cuda::(anonymous namespace)::gather_with_cpp()",
                  "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)",
                  "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",
                  "at::detail::empty_cuda(c10::ArrayRef<long>, c10::TensorOptions const&)")
    ]
    py_names = ["forward", "_call_impl", "_wrapped_call_impl", "backward", "step", "train_step",
                "main", "<module>", "attention", "mlp", "layer_norm", "_PyEval_EvalFrameDefault",
                "PyCFunction_Call", "slot_tp_call", "_PyObject_MakeTpCall"]
    py = []
    for f in py_files:
        for _ in range(40):
            py.append({"name": rng.choice(py_names), "filename": f, "line": rng.randrange(1, 3000)})
    return alloc_frames, cpp, py


def stack_templates(rng, alloc_frames, cpp, py, count):
    """(C++ part, Python part) pairs; a stack is their concatenation, 20-40 frames."""
    out = []
    for _ in range(count):
        depth = rng.randint(MIN_DEPTH, MAX_DEPTH)
        n_cpp = rng.randint(len(alloc_frames) + 4, min(depth - 6, len(alloc_frames) + 16))
        op = rng.randrange(len(cpp) // 6)
        op_frames = cpp[op * 6:(op + 1) * 6]
        body = alloc_frames + [rng.choice(op_frames) for _ in range(n_cpp - len(alloc_frames))]
        tail = rng.sample(py, depth - n_cpp)
        out.append(body + tail)
    return out


def segments(rng, base):
    """Segments with blocks that add up to the segment size (as segsum checks)."""
    segs = []
    addr = base
    for i in range(SEGMENTS):
        total = rng.choice([2 * MiB, 20 * MiB, 64 * MiB, 512 * MiB])
        blocks, off = [], 0
        while off < total:
            size = min(total - off, 512 * rng.randint(1, max(1, total // (512 * 8))))
            state = rng.choice(["active_allocated", "inactive"])
            b = {"address": addr + off, "size": size, "requested_size": size if state == "inactive" else size - rng.randrange(0, 512, 8),
                 "state": state, "frames": []}
            blocks.append(b)
            off += size
        active = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
        segs.append({"device": 0, "address": addr, "total_size": total, "allocated_size": active,
                     "active_size": active, "requested_size": sum(b["requested_size"] for b in blocks if b["state"] == "active_allocated"),
                     "stream": 0, "segment_type": "small" if total == 2 * MiB else "large",
                     "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks})
        addr += total + 2 * MiB
    return segs


def trace(rng, n, segs, templates, free_context):
    """alloc / free_requested / free_completed entries, `n` in all."""
    out, live = [], []
    t = 1754641328380304
    strs = {a: a for a in ("alloc", "free_requested", "free_completed")}
    while len(out) < n:
        t += rng.randrange(1, 400)
        if not live or (len(live) < 5000 and rng.random() < 0.52) or n - len(out) < 2:
            seg = rng.choice(segs)
            span = max(seg["allocated_size"], 512)
            addr = seg["address"] + 512 * rng.randrange(span // 512)
            size = 512 * rng.randint(1, 4096)
            frames = list(rng.choice(templates))
            e = {"action": strs["alloc"], "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": frames}
            out.append(e)
            live.append(e)
        else:
            e = live.pop(rng.randrange(len(live)))
            free_frames = list(rng.choice(templates)) if free_context else e["frames"]
            out.append({"action": strs["free_requested"], "addr": e["addr"], "size": e["size"], "stream": 0,
                        "time_us": t, "frames": free_frames})
            out.append({"action": strs["free_completed"], "addr": e["addr"], "size": e["size"], "stream": 0,
                        "time_us": t + 1, "frames": e["frames"]})
    return out[:n]


def check(path, n):
    """Reads the file back with CPython's pickle.load and counts what the benchmark relies on."""
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        d = pickle.load(f)
    dt = time.perf_counter() - t0
    tr = d["device_traces"][0]
    stacks, frames, depths = set(), set(), []
    for e in tr:
        fr = e["frames"]
        if id(fr) not in stacks:
            stacks.add(id(fr))
            depths.append(len(fr))
            frames.update(id(x) for x in fr)
    ok = len(tr) == n and min(depths) >= MIN_DEPTH and max(depths) <= MAX_DEPTH
    size = os.path.getsize(path)
    print(f"{path}: {size / 1e6:.1f} MB, {len(tr)} trace entries, {len(stacks)} distinct stacks "
          f"(depth {min(depths)}-{max(depths)}, mean {sum(depths) / len(depths):.1f}), "
          f"{len(frames)} distinct frames, {len(d['segments'])} segments; pickle.load {dt:.2f} s")
    if not ok:
        sys.exit(f"{path}: counts are not as intended (wanted {n} entries, depth {MIN_DEPTH}-{MAX_DEPTH})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, required=True)
    ap.add_argument("--context", choices=["all", "alloc"], default="all")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    alloc_frames, cpp, py = frame_pool(rng)
    templates = stack_templates(rng, alloc_frames, cpp, py, 4000)
    segs = segments(rng, 0x7F0000000000)
    snap = {
        "segments": segs,
        "device_traces": [trace(rng, args.entries, segs, templates, args.context == "all")],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                               "garbage_collection_threshold": 0.0, "expandable_segments": False},
        "external_annotations": [],
    }
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        # PyTorch's _dump_snapshot uses pickle.dump with the default protocol (4 on 3.8-3.13).
        pickle.dump(snap, f, protocol=4)
    os.replace(tmp, args.out)
    del snap
    check(args.out, args.entries)


if __name__ == "__main__":
    main()
