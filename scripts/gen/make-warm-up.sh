#!/usr/bin/env bash
# Regenerates app/assets/warm-up.pickle.gz, the input the viewer's worker parses and indexes
# while the user picks a file (app/src/worker/warm_up.rs), so that V8 has optimised the code a
# real file runs before one arrives.
#
# A `capture` run of the varying-seqlen scenario (its allocations, segments and blocks), cut to
# its first entries, with every trace entry and block given a deep Python-and-C++ stack like
# those PyTorch records (60-110 frames: the interpreter's C frames between Python ones, a
# training loop's outer frames, a walk down nested modules, the allocator's C++ frames on top),
# then pickled by CPython and gzipped. PyTorch's files are CPython pickles, whose opcodes (every
# container memoised, LONG_BINGET past 256 memo entries) differ from memsnap's own writer's,
# and real files spend most of their parse on frames: the first version of this input (4
# frames an entry, one file name) left the first real file's parse at 2.5x its warm time
# (scripts/profile/profile_page.py, cs336-a-2.7b-forward cold against warm). Every name here is made up;
# only the shape matters, and it is never shown.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
cargo run --quiet -p memsnap-capture --bin capture -- \
    --scenario varying-seqlen --seed 0 --quiet -o "$tmp"
python3 - "$tmp" app/assets/warm-up.pickle.gz <<'PY'
import gzip, pickle, random, sys

rng = random.Random(0)
with open(sys.argv[1], "rb") as f:
    snap = pickle.load(f)

site = "/opt/venv/lib/python3.12/site-packages/"
torch_files = [site + "torch/" + p for p in (
    "nn/modules/module.py", "nn/modules/linear.py", "nn/modules/normalization.py",
    "nn/modules/activation.py", "nn/modules/container.py", "nn/modules/sparse.py",
    "nn/modules/dropout.py", "nn/functional.py", "_tensor.py", "autograd/__init__.py",
    "autograd/graph.py", "optim/optimizer.py", "optim/adamw.py", "utils/_contextlib.py",
    "cuda/memory.py", "_ops.py", "functional.py", "amp/autocast_mode.py")]
user_files = ["/home/user/project/" + p for p in (
    "train.py", "model/transformer.py", "model/attention.py", "model/mlp.py",
    "model/embedding.py", "model/norm.py", "data/loader.py", "utils/checkpoint.py",
    "utils/profile.py", "optim/schedule.py")]
files = torch_files + user_files
names = [f"{verb}_{noun}" for verb in ("forward", "_call_impl", "_wrapped_call_impl", "apply",
         "step", "backward", "run", "compute", "scaled", "project", "update", "_fused")
         for noun in ("attention", "mlp", "block", "layer", "norm", "embed", "logits",
                      "loss", "weights", "grads", "state", "heads", "rotary", "kv")]
cpp = ["torch::unwind::unwind()", "torch::CapturedTraceback::gather(bool, bool, bool)",
       "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(int, unsigned long, CUstream_st*)",
       "c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::allocate(unsigned long)",
       "at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*)",
       "at::detail::empty_cuda(c10::ArrayRef<long>, c10::ScalarType, std::optional<c10::Device>)",
       "at::native::empty_cuda(c10::ArrayRef<long>, std::optional<c10::ScalarType>)",
       "at::(anonymous namespace)::wrapper_CUDA_memory_format_empty(c10::ArrayRef<c10::SymInt>)",
       "at::native::structured_mm_out_cuda::impl(at::Tensor const&, at::Tensor const&)",
       "at::native::add_kernel(at::TensorIteratorBase&, c10::Scalar const&)",
       "torch::autograd::THPVariable_matmul(_object*, _object*, _object*)",
       "torch::autograd::python::PythonEngine::thread_init(int, std::shared_ptr<torch::autograd::ReadyQueue> const&, bool)",
       "cfunction_call", "_PyObject_MakeTpCall", "PyObject_Call"]
libc = [(n, "??", 0) for n in ("_start", "__libc_start_main", "__libc_init_first",
                                "Py_BytesMain", "Py_RunMain", "pymain_run_python")]
# Call sites: (name, file, line), so one site keeps its line like real code.
sites = [(rng.choice(names), rng.choice(files), rng.randrange(20, 2000)) for _ in range(400)]
outer = [(n, "/home/user/project/train.py", l) for n, l in
         (("<module>", 412), ("main", 380), ("train", 251), ("train_step", 190))]
eval_frame = ("_PyEval_EvalFrameDefault", "??", 0)

shared = {}
previous = []

def stack():
    # A stack seen before, as an entry's free repeats its allocation's (one list, memo gets).
    if previous and rng.random() < 0.25:
        return rng.choice(previous[-50:])
    # Innermost first, as PyTorch lists them.
    frames = [(c, "??", 0) for c in rng.sample(cpp, rng.randrange(6, 12))]
    depth = rng.choice((14, 20, 26, 32, 38))
    walk = [sites[(i * 37 + rng.randrange(3)) % len(sites)] for i in range(depth)]
    for site in reversed(walk + outer):
        frames.append(site)
        frames.append(eval_frame)
    frames.extend(reversed(libc))
    # One dict per distinct frame, shared by every stack holding it, as PyTorch's symbolizer
    # makes them: in the pickle, most frames are memo gets of a dict written once.
    made = [shared.setdefault(f, {"name": f[0], "filename": f[1], "line": f[2]}) for f in frames]
    previous.append(made)
    return made

trace = snap["device_traces"][0][:1000]
for entry in trace:
    entry["frames"] = stack()
snap["device_traces"] = [trace]
for segment in snap["segments"]:
    for block in segment["blocks"]:
        if block.get("state") == "active_allocated":
            block["frames"] = stack()
raw = pickle.dumps(snap, protocol=4)
with open(sys.argv[2], "wb") as f:
    # mtime 0: the same input gives the same bytes.
    f.write(gzip.compress(raw, compresslevel=9, mtime=0))
raw = len(raw)
print(f"entries {len(trace)}, pickle {raw} bytes")
PY
echo "wrote app/assets/warm-up.pickle.gz ($(wc -c < app/assets/warm-up.pickle.gz) bytes)"
