//! `memsnap phases FILE [--device N] [--compile] [--json]`: the program's phases (its
//! `external_annotations`: record_function, optimizer steps, torch.compile's timers) with what
//! memory did inside each, and the phase the peak fell in. Matching and figures are core's
//! (`analysis::phases`), as the page's phase band uses them.


use memsnap_core::analysis::phases::{phases, Phase, PhaseFigures, PhaseStats, Phases};
use memsnap_core::analysis::timeline::Timeline;

use super::format::{change, size};
use super::output::print;
use super::input::{devices, load, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle, gzipped pickle or JSON); `-` reads stdin.
    pub file: String,
    /// Device (default: every device of the file).
    #[arg(long)]
    pub device: Option<usize>,
    /// List compiler phases (dynamo, inductor) too; the table folds them by default.
    #[arg(long)]
    pub compile: bool,
    /// Print one JSON object instead (every phase, compiler ones included).
    #[arg(long)]
    pub json: bool,
}

/// One device's phases with their figures, or why it has none.
struct DevicePhases {
    device: usize,
    found: Result<(Phases, Vec<PhaseStats>), String>,
    peak_index: Option<usize>,
    peak_allocated: u64,
}

impl DevicePhases {
    fn of(snap: &memsnap_core::snapshot::Snapshot, device: usize) -> DevicePhases {
        let tl = Timeline::build(snap, device);
        let peak_index = tl.peak_index();
        let peak_allocated = tl.summary().peak_allocated;
        let found = phases(snap, device)
            .map(|p| {
                let figures = PhaseFigures::new(snap, &tl);
                let stats = p.phases.iter().map(|ph| figures.of(ph)).collect();
                (p, stats)
            })
            .map_err(|e| e.to_string());
        DevicePhases {
            device,
            found,
            peak_index,
            peak_allocated,
        }
    }

    /// The innermost phase of the peak.
    fn peak_phase(&self) -> Option<usize> {
        let (p, _) = self.found.as_ref().ok()?;
        p.innermost_at(self.peak_index?)
    }
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snap = load(&args.file)?;
    let text = render(&args, &snap)?;
    print(&text)
}

/// What the command prints for a snapshot already read.
pub fn render(args: &Args, snap: &memsnap_core::snapshot::Snapshot) -> Result<String, CliError> {
    let list: Vec<DevicePhases> = devices(&args.file, snap, args.device)?
        .into_iter()
        .map(|d| DevicePhases::of(snap, d))
        .collect();
    Ok(if args.json {
        json(&list).to_string() + "\n"
    } else {
        human(&list, args.compile)
    })
}

fn phase_json(p: &Phase, s: &PhaseStats, path: String) -> serde_json::Value {
    serde_json::json!({
        "name": p.name,
        "path": path,
        "start_us": p.start_us,
        "end_us": p.end_us,
        "duration_us": p.duration_us(),
        "depth": p.depth,
        "parent": p.parent,
        "first": p.first,
        "end": p.end,
        "compile": p.compile,
        "peak_allocated": s.peak_allocated,
        "peak_index": s.peak_index,
        "peak_reserved": s.peak_reserved,
        "allocs": s.allocs,
        "allocated_bytes": s.allocated_bytes,
        "requested_bytes": s.requested_bytes,
        "frees": s.frees,
        "freed_bytes": s.freed_bytes,
        "net_bytes": s.net_bytes,
        "left_live": s.left_live.iter().map(|g| serde_json::json!({
            "frame": g.frame, "bytes": g.bytes, "count": g.count,
        })).collect::<Vec<_>>(),
    })
}

fn json(list: &[DevicePhases]) -> serde_json::Value {
    let devices: Vec<serde_json::Value> = list
        .iter()
        .map(|d| {
            let peak = serde_json::json!({
                "index": d.peak_index,
                "allocated": d.peak_allocated,
                "phase": d.peak_phase(),
            });
            match &d.found {
                Ok((p, stats)) => serde_json::json!({
                    "device": d.device,
                    "none": null,
                    "phases": p.phases.iter().zip(stats).enumerate()
                        .map(|(i, (ph, s))| phase_json(ph, s, p.path(i)))
                        .collect::<Vec<_>>(),
                    "unmatched_ends": p.unmatched_ends,
                    "unclosed": p.unclosed,
                    "out_of_order": p.out_of_order,
                    "unreadable": p.unreadable,
                    "warnings": p.warnings(),
                    "peak": peak,
                }),
                Err(why) => serde_json::json!({
                    "device": d.device,
                    "none": why,
                    "phases": [],
                    "warnings": [],
                    "peak": peak,
                }),
            }
        })
        .collect();
    serde_json::json!({ "devices": devices })
}

/// Width of the phase column (longer names are cut with an ellipsis).
const NAME: usize = 44;

fn cut(name: &str, depth: usize) -> String {
    let indented = format!("{}{name}", "  ".repeat(depth.min(8)));
    if indented.chars().count() <= NAME {
        return indented;
    }
    let mut s: String = indented.chars().take(NAME - 1).collect();
    s.push('…');
    s
}

fn human(list: &[DevicePhases], compile: bool) -> String {
    let mut out = String::new();
    for d in list {
        let (p, stats) = match &d.found {
            Ok(found) => found,
            Err(why) => {
                out += &format!("cuda:{}: {why}\n", d.device);
                continue;
            }
        };
        let shown: Vec<usize> = (0..p.phases.len())
            .filter(|&i| compile || !p.phases[i].compile)
            .collect();
        let folded = p.phases.len() - shown.len();
        out += &format!("cuda:{}: {} phase(s)", d.device, p.phases.len());
        if folded > 0 {
            out += &format!(", {folded} compiler phase(s) folded (--compile lists them)");
        }
        out += "\n";
        for w in p.warnings() {
            out += &format!("  warning: {w}\n");
        }
        if !shown.is_empty() {
            out += &format!(
                "  {:<NAME$} {:>15} {:>11} {:>11} {:>11} {:>11} {:>11}  left live (top frame)\n",
                "phase", "entries", "peak alloc", "peak resv", "allocated", "freed", "net"
            );
        }
        for &i in &shown {
            let (ph, s) = (&p.phases[i], &stats[i]);
            let top = s
                .left_live
                .first()
                .map(|g| format!("{} {}", size(g.bytes), g.frame))
                .unwrap_or_default();
            out += &format!(
                "  {:<NAME$} {:>15} {:>11} {:>11} {:>11} {:>11} {:>11}  {top}\n",
                cut(&ph.name, ph.depth),
                format!("{}..{}", ph.first, ph.end),
                size(s.peak_allocated),
                size(s.peak_reserved),
                size(s.allocated_bytes),
                size(s.freed_bytes),
                change(s.net_bytes),
            );
        }
        match (d.peak_index, d.peak_phase()) {
            (Some(at), Some(i)) => {
                out += &format!(
                    "  peak: {} allocated after entry {at}, in {}\n",
                    size(d.peak_allocated),
                    p.path(i)
                )
            }
            (Some(at), None) => {
                out += &format!(
                    "  peak: {} allocated after entry {at}, outside every phase\n",
                    size(d.peak_allocated)
                )
            }
            _ => {}
        }
    }
    out
}
