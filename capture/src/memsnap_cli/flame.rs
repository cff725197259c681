//! `memsnap flame FILE [--at peak|dump|ENTRY] [--weight bytes|bytes-lifetime] [--all-frames]`:
//! folded stacks (`frame;frame;frame value`, outermost frame first) for flamegraph.pl, inferno
//! and speedscope. The tree and its frame filter are the page's flame graph's
//! (`flamegraph::flamegraph_by`, `live_weight`, `frames::is_hidden`). `--json` prints the tree
//! itself (`{name, value, children}`, largest child first).


use memsnap_core::analysis::flamegraph::{flamegraph_by, folded, live_weight, Node};
use memsnap_core::analysis::frames::is_hidden_id;
use memsnap_core::analysis::intervals::Allocation;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::{FrameId, Snapshot};

use super::output::print;
use super::input::{devices, load, CliError};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weight {
    /// Bytes live at the point --at names.
    Bytes,
    /// Block bytes × trace entries lived, over the whole trace.
    BytesLifetime,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle or gzipped pickle); `-` reads stdin.
    pub file: String,
    /// Device (default: the file's first).
    #[arg(long)]
    pub device: Option<usize>,
    /// Where live bytes are weighed: `peak` (most allocated), `dump`, or after trace entry N.
    #[arg(long, default_value = "peak", value_name = "peak|dump|ENTRY")]
    pub at: String,
    /// What a stack weighs.
    #[arg(long, value_enum, default_value = "bytes")]
    pub weight: Weight,
    /// Keep torch internals, the standard library and native frames (the page hides them).
    #[arg(long)]
    pub all_frames: bool,
    /// Print the tree as one JSON object instead (schema: docs/cli-json.md).
    #[arg(long)]
    pub json: bool,
}

/// Where `--at` points: `Some(entry)`, or `None` for the dump.
fn point(args: &Args, tl: &Timeline) -> Result<Option<usize>, CliError> {
    let bad = |m: String| CliError::new(&args.file, m);
    match args.at.as_str() {
        // Without a trace the dump is the peak.
        "peak" => Ok(tl.peak_index()),
        "dump" => Ok(None),
        n => {
            let i: usize = n.parse().map_err(|_| {
                bad(format!(
                    "--at {n}: expected peak, dump or a trace entry number"
                ))
            })?;
            if i >= tl.len() {
                return Err(bad(format!(
                    "--at {i}: the trace has {} entries (0 to {})",
                    tl.len(),
                    tl.len().saturating_sub(1)
                )));
            }
            Ok(Some(i))
        }
    }
}

/// The flame graph tree `args` asks for.
pub fn tree(args: &Args, snap: &Snapshot, device: usize) -> Result<Node, CliError> {
    let tl = Timeline::build(snap, device);
    let all = args.all_frames;
    let keep = |f: FrameId| all || !is_hidden_id(&snap.stacks, f);
    let list = &tl.allocations.list;
    Ok(match args.weight {
        Weight::Bytes => {
            let at = point(args, &tl)?;
            let n = tl.allocations.trace_len;
            flamegraph_by(snap, list, |a: &Allocation| live_weight(a, at, n), keep)
        }
        Weight::BytesLifetime => {
            if args.at != "peak" {
                return Err(CliError::new(
                    &args.file,
                    "--at applies to --weight bytes (bytes-lifetime covers the whole trace)",
                ));
            }
            flamegraph_by(
                snap,
                list,
                |a: &Allocation| a.size.saturating_mul(a.lifetime()),
                keep,
            )
        }
    })
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snap = load(&args.file)?;
    let text = render(&args, &snap)?;
    print(&text)
}

/// What the command prints for a snapshot already read.
pub fn render(args: &Args, snap: &Snapshot) -> Result<String, CliError> {
    let device = match args.device {
        Some(_) => devices(&args.file, snap, args.device)?[0],
        None => devices(&args.file, snap, None)?
            .first()
            .copied()
            .unwrap_or(0),
    };
    let root = tree(args, snap, device)?;
    if args.json {
        let weight = match args.weight {
            Weight::Bytes => "bytes",
            Weight::BytesLifetime => "bytes-lifetime",
        };
        let doc = serde_json::json!({
            "file": args.file,
            "device": device,
            "at": args.at,
            "weight": weight,
            "all_frames": args.all_frames,
            "root": root,
        });
        return Ok(doc.to_string() + "\n");
    }
    let mut text = folded(&root).join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    Ok(text)
}
