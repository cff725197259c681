//! The `capture` command line.

use std::path::PathBuf;

use clap::{ArgGroup, Parser};

#[derive(Debug, Parser)]
#[command(
    name = "capture",
    about = "Make PyTorch CUDA memory snapshots by running the caching-allocator model, simulated or on a real GPU",
    long_about = "Make PyTorch CUDA memory snapshots (the pickle torch.cuda.memory._dump_snapshot() writes) by \
running a scenario, or the trace of an existing snapshot, through the caching-allocator model. \
By default the device is simulated; with --cuda the model allocates real memory on a GPU \
(cuMemAlloc, or cuMemCreate/cuMemMap for expandable segments) and the snapshot has the device's addresses.",
    after_long_help = AFTER_HELP,
    group(ArgGroup::new("input").required(true).args(["scenario", "replay"])),
)]
pub struct Args {
    /// A built-in scenario (see below) or a scenario file (TOML).
    #[arg(long, value_name = "NAME_OR_FILE")]
    pub scenario: Option<String>,

    /// Run the allocations and frees of an existing snapshot's trace again (with its frames and
    /// streams) under its allocator settings, or under --set / --alloc-conf.
    #[arg(long, value_name = "SNAPSHOT")]
    pub replay: Option<PathBuf>,

    /// Where to write the snapshot (pickle).
    #[arg(short = 'o', long = "output", value_name = "OUT.pickle")]
    pub output: PathBuf,

    /// Allocator settings as PYTORCH_CUDA_ALLOC_CONF writes them, e.g.
    /// "expandable_segments:True,max_split_size_mb:128".
    #[arg(long, value_name = "STRING")]
    pub alloc_conf: Option<String>,

    /// One allocator setting, applied after --alloc-conf (repeatable), e.g.
    /// --set expandable_segments=true --set garbage_collection_threshold=0.8.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,

    /// Device memory of the simulated device, e.g. 80GB, 24GiB, or bytes (default: the
    /// scenario's, else 80GB). With --cuda: a cap on what the allocator may reserve.
    #[arg(long, value_name = "BYTES", allow_hyphen_values = true)]
    pub capacity: Option<String>,

    /// Seed of the scenario's rand(...) draws.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Run on a real GPU through the CUDA driver.
    #[arg(long)]
    pub cuda: bool,

    /// The CUDA device index (with --cuda); with --replay, also the device whose trace is
    /// replayed (when the file has one for it, else the first traced device); a simulated
    /// scenario's snapshot names this device.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: i32,

    /// No progress bar and no summary.
    #[arg(short, long)]
    pub quiet: bool,
}

const AFTER_HELP: &str = "\
Built-in scenarios (each is a scenario file in capture/scenarios/, shown by its header):
  churn           alternating 1.5 GB / 1.8 GB buffers creeping up 64 MB a step, tiny losses
                  kept alive: reserved memory climbs to 10x what is ever allocated at once;
                  close to it with --set expandable_segments=true
  varying-seqlen  12-layer transformer training steps, sequence length drawn from 128..2048
                  each step (--seed): activations of changing size fragment the cache
  fixed-shape     the same steps with one sequence length: no fragmentation (the baseline)
  multi-stream    a copy stream and a comm stream: per-stream segments, record_stream and
                  active_pending_free blocks, synchronize
  pinning         a small long-lived tensor allocated in the middle of a large cached segment
                  leaves two holes that never merge
  kv-cache        vLLM-style serving: weights, a profiling pass, empty_cache, a per-layer
                  KV-cache arena managed in pages, decode steps with changing batch sizes
  example         a small training run with a pinning block and pending frees
  oom             1.5 GB / 1.8 GB batches pinned by small tensors until one fails with 8 GB
                  reserved and no 2 GB hole (the viewer's bundled example,
                  app/assets/example.pickle)

Scenario files (TOML): [scenario] name/description/capacity, then [[step]] tables, each doing
one thing:
  alloc = \"act{i}\", size = \"1.5GiB\" | \"seq * 4KiB\" | 4096, stream = \"side\", name = \"...\"
  free = \"act{i}\"                 record_stream = \"x\", stream = \"comm\"
  sync = true                     empty_cache = true
  let = \"seq\", value = \"rand(128, 2048)\"
  repeat = 10, var = \"i\"  ...  end = true
Sizes take B, KB, MB, GB, TB, PB (powers of 1000) and KiB, MiB, GiB, TiB, PiB; expressions
use + - * / %, parentheses, variables, rand(lo, hi), min, max, floor, ceil. Names take {expr}.
Each allocation's frames are its step (file, line, name) and the enclosing repeats.

Examples:
  capture --scenario churn -o churn.pickle
  capture --scenario churn --set expandable_segments=true -o churn-exp.pickle
  capture --scenario my-run.toml --capacity 24GB --seed 3 -o run.pickle
  capture --replay real.pickle --alloc-conf expandable_segments:True -o whatif.pickle
  capture --cuda --device 0 --scenario pinning -o pinning-gpu.pickle";
