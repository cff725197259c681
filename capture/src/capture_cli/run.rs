//! One `capture` run: pick the device and the input, run it through the allocator model,
//! write the snapshot, report.

use memsnap_core::allocator::{Allocator, Config};
use memsnap_core::analysis::phases::mark_value;
use memsnap_core::snapshot::{self, Value};

use super::args::Args;
use super::device::{Device, Sim};
use super::exec::Executor;
use super::outcome::Outcome;
use super::progress::Progress;
use super::replay;
use super::settings;
use super::stacks;
use super::summary::Summary;
use crate::cuda::{self, CudaBacking};
use crate::scenario::{self, builtin, expr, size, Counter, Scenario};

/// Device memory when neither the scenario nor --capacity says (an 80 GB A100/H100).
pub const DEFAULT_CAPACITY: u64 = 80_000_000_000;

enum Input {
    Scenario(Scenario),
    Replay(Box<replay::Requests>),
}

pub fn parse_capacity(text: &str) -> Result<u64, String> {
    let e = expr::parse(text).map_err(|e| format!("--capacity `{text}`: {}", e.message))?;
    let v = e
        .eval(&|_| None, &mut scenario::rng::Rng::new(0))
        .map_err(|m| format!("--capacity `{text}`: {m}"))?;
    size::to_bytes(v).map_err(|m| format!("--capacity `{text}`: {m}"))
}

/// Runs the command line's request; the error is the one line `capture:` prints.
pub fn run(args: &Args) -> Result<Outcome, String> {
    let (input, base, label) = match (&args.scenario, &args.replay) {
        (Some(name), _) => {
            let s = builtin::load(name).map_err(|e| e.to_string())?;
            let label = format!("scenario {}", s.name);
            (Input::Scenario(s), Config::default(), label)
        }
        (None, Some(path)) => {
            let r = replay::load(path, args.device as i64)?;
            let base = r.config.clone();
            let label = format!("replay of {}", path.display());
            (Input::Replay(Box::new(r)), base, label)
        }
        (None, None) => return Err("give --scenario or --replay".into()),
    };
    let config = settings::build(base, args.alloc_conf.as_deref(), &args.set)?;
    let capacity = match &args.capacity {
        Some(c) => Some(parse_capacity(c)?),
        None => None,
    };
    let outcome = if args.cuda {
        let dev = cuda::open(args.device).map_err(|e| format!("--cuda: {e}"))?;
        let backing = CudaBacking::new(dev).map_err(|e| format!("--cuda: {e}"))?;
        let mut alloc = Allocator::new(backing, config).with_device(args.device as i64);
        if let Some(c) = capacity {
            alloc.set_capacity(c);
        }
        let label = format!("{label} on CUDA device {}", args.device);
        let out = execute(&mut alloc, &input, args, label)?;
        alloc
            .backing_mut()
            .synchronize()
            .map_err(|e| format!("--cuda: {e}"))?;
        out
    } else {
        let cap = capacity
            .or(match &input {
                Input::Scenario(s) => s.capacity,
                Input::Replay(_) => None,
            })
            .unwrap_or(DEFAULT_CAPACITY);
        // A replay keeps the device index of the trace it replays; a scenario runs as the
        // --device the user named (a multi-GPU job's other ranks, an OOM on cuda:1).
        let device = match &input {
            Input::Replay(r) => r.device as i64,
            Input::Scenario(_) => args.device as i64,
        };
        let mut alloc = Allocator::new(Sim::new(cap), config).with_device(device);
        let label = format!("{label} (simulated device of {})", size::human(cap));
        execute(&mut alloc, &input, args, label)?
    };
    let bytes = snapshot::write(&outcome.snapshot);
    std::fs::write(&args.output, bytes)
        .map_err(|e| format!("cannot write {}: {e}", args.output.display()))?;
    Ok(outcome)
}

fn execute<D: Device>(
    alloc: &mut Allocator<D>,
    input: &Input,
    args: &Args,
    label: String,
) -> Result<Outcome, String> {
    match input {
        Input::Scenario(s) => run_scenario(alloc, s, args.seed, args.quiet, label),
        Input::Replay(r) => replay::run(alloc, r, args.quiet, label),
    }
}

/// Runs `scenario` on `alloc` and takes the snapshot.
pub fn run_scenario<D: Device>(
    alloc: &mut Allocator<D>,
    scenario: &Scenario,
    seed: u64,
    quiet: bool,
    label: String,
) -> Result<Outcome, String> {
    let mut counter = Counter::default();
    let total = scenario::run(scenario, seed, &mut counter).map_err(|e| e.to_string())?;
    let progress = Progress::new(total, &scenario.name, quiet);
    let ids = stacks::intern(scenario, alloc.stacks_mut());
    let mut exec = Executor::new(alloc, ids, &progress);
    let actions = scenario::run(scenario, seed, &mut exec).map_err(|e| e.to_string());
    let ooms = std::mem::take(&mut exec.ooms);
    let marks = std::mem::take(&mut exec.marks);
    progress.finish();
    let actions = actions?;
    let mut snapshot = alloc.snapshot();
    if !marks.is_empty() {
        let device = alloc.device();
        let list = marks
            .iter()
            .map(|(stage, name, t)| mark_value(stage.as_str(), name, device, *t))
            .collect();
        snapshot.external_annotations = Some(Value::List(std::sync::Arc::new(list)));
    }
    let summary = Summary::new(label, alloc.stats(), &snapshot, actions);
    Ok(Outcome {
        snapshot,
        summary,
        ooms,
    })
}
