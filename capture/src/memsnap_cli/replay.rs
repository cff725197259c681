//! `memsnap replay FILE [--set KEY=VALUE ...] [-o OUT] [--json]`: replay the file's trace through
//! the allocator model. Without a change: fidelity (every decision of the real allocator
//! compared). With `--set` (or a program change: `--memory-cap-bytes`, `--empty-cache-at`,
//! `--pad`): a what-if under the change, side by side with the file's settings, measured by
//! the same core call that weighs `memsnap diagnose`'s fixes (`verdicts::measure`), so a fix's
//! "saves" is what this prints for its `replay_args`. `-o` writes the model's final state and
//! trace as a snapshot PyTorch's viewer opens.


use memsnap_core::allocator::Rules;
use memsnap_core::analysis::replay::{
    device_config, empty_cache_calls_of, file_config, replay_with, traced_devices, what_if_snapshot, Figures, ReplayReport, Start,
};
use memsnap_core::analysis::verdicts::{measure, Change, Device, Outcome, Plan};
use memsnap_core::snapshot::Snapshot;

use super::allocator;
use super::input::{load, CliError};
use super::output::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle or gzipped pickle); `-` reads stdin.
    pub file: String,
    /// Change an allocator setting for a what-if replay (PYTORCH_CUDA_ALLOC_CONF keys), e.g.
    /// `--set expandable_segments=True --set max_split_size_mb=512`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Write the model's resulting snapshot (state and trace) here.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<String>,
    /// Device to replay (default: every device with a trace).
    #[arg(long)]
    pub device: Option<i64>,
    /// Start what-if replays from no segments instead of the reconstructed start state.
    #[arg(long, conflicts_with = "cold")]
    pub clean: bool,
    /// Start what-if replays cold: no segments, the blocks live at the trace's first entry
    /// allocated first under the settings replayed.
    #[arg(long)]
    pub cold: bool,
    /// What-if: replay up to the first OOM and its failing request, on a device of the memory
    /// the process had then (reserved + the driver's free bytes), as `diagnose` weighs fixes
    /// for a file that ran out of memory.
    #[arg(long, conflicts_with = "capacity_gib")]
    pub to_oom: bool,
    /// What-if: cap what may be reserved at this many bytes, as
    /// `torch.cuda.set_per_process_memory_fraction` does (garbage_collection_threshold acts
    /// only under one). Applies to the changed side only.
    #[arg(long, value_name = "BYTES")]
    pub memory_cap_bytes: Option<u64>,
    /// What-if: call `torch.cuda.empty_cache()` before the request at this trace entry
    /// (repeatable). Changed side only.
    #[arg(long, value_name = "ENTRY")]
    pub empty_cache_at: Vec<usize>,
    /// What-if: allocations whose block is FROM bytes ask for TO bytes instead (repeatable).
    /// Changed side only.
    #[arg(long, value_name = "FROM=TO", value_parser = Change::parse_pad)]
    pub pad: Vec<(u64, u64)>,
    /// Device memory for what-if replays, in GiB (default: unlimited), so that OOMs show.
    #[arg(long, value_name = "GIB")]
    pub capacity_gib: Option<f64>,
    /// Whose caching allocator to model: `cuda` or `npu` (torch_npu). Default: the one the
    /// file's sizes fit, per device.
    #[arg(long, value_name = "NAME", value_parser = Rules::parse)]
    pub allocator: Option<Rules>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

fn figures_json(f: &Figures) -> serde_json::Value {
    serde_json::json!({
        "peak_reserved": f.peak_reserved,
        "peak_allocated": f.peak_allocated,
        "final_reserved": f.final_reserved,
        "final_allocated": f.final_allocated,
        "peak_cached": f.peak_cached,
        "ooms": f.ooms,
        "segment_allocs": f.segment_allocs,
        "segment_frees": f.segment_frees,
    })
}

fn report_json(r: &ReplayReport) -> serde_json::Value {
    serde_json::json!({
        "device": r.device,
        "entries": r.entries,
        "complete_trace": r.complete_trace,
        "allocator": r.rules.rules.name(),
        "allocator_source": r.rules.source.as_str(),
        "allocator_fits": r.rules.fits(),
        "allocator_note": r.rules.describe(),
        "not_replayed": r.not_replayed,
        "decisions": r.decisions,
        "decisions_matched": r.decisions_matched,
        "first_mismatch": r.first_mismatch.as_ref().map(|m| serde_json::json!({"entry": m.entry, "what": m.what})),
        "segments_match": r.segments_match,
        "segments_difference": r.segments_difference,
        "inconsistencies": r.inconsistencies,
        "first_inconsistency": r.first_inconsistency,
        "settings": r.settings,
        "figures": figures_json(&r.figures),
    })
}

fn whatif_json(w: &Outcome) -> serde_json::Value {
    serde_json::json!({
        "settings": w.settings,
        "requests": w.requests,
        "failed_requests": w.failed_requests,
        "figures": {
            "peak_reserved": w.peak_reserved,
            "peak_allocated": w.peak_allocated,
            "final_reserved": w.final_reserved,
        },
        "segment_creations": w.segment_creations,
        "bytes_mapped": w.bytes_mapped,
        "bytes_unmapped": w.bytes_unmapped,
        "peak_at": w.peak_at,
    })
}

fn gib(b: u64) -> String {
    format!("{:.3} GiB", b as f64 / (1u64 << 30) as f64)
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snapshot = load(&args.file)?;
    let (text, written) = render(&args, &snapshot)?;
    print(&text)?;
    if let (Some(path), Some(snap)) = (&args.output, written) {
        std::fs::write(path, memsnap_core::snapshot::write(&snap))
            .map_err(|e| CliError::new(path, e))?;
    }
    Ok(())
}

/// What the command prints for a snapshot already read, and the model's snapshot when
/// `--output` asks for one.
pub fn render(args: &Args, snapshot: &Snapshot) -> Result<(String, Option<Snapshot>), CliError> {
    let snapshot = &*allocator::under(snapshot, args.allocator);
    let mut change = Change {
        memory_cap: args.memory_cap_bytes,
        empty_cache_at: args.empty_cache_at.clone(),
        pad: args.pad.clone(),
        ..Change::default()
    };
    for kv in &args.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| CliError::new("--set", format!("expected KEY=VALUE, got `{kv}`")))?;
        change.set.push((k.trim().to_string(), v.trim().to_string()));
    }
    // Bad keys and values are refused before anything is replayed; what a device's allocator
    // refuses is weighed per device below.
    let mut probe = file_config(snapshot).map_err(|e| CliError::new(&args.file, e))?;
    for (k, v) in &change.set {
        probe.set(k, v).map_err(|e| CliError::new("--set", e))?;
    }
    let devices = match args.device {
        Some(d) => vec![d],
        None => traced_devices(snapshot),
    };
    if devices.is_empty() {
        return Err(CliError::new(
            &args.file,
            "no trace to replay (device_traces is empty)",
        ));
    }
    let capacity = match args.capacity_gib {
        Some(g) if g.is_finite() && g > 0.0 => Some((g * (1u64 << 30) as f64) as u64),
        Some(g) => {
            return Err(CliError::new(
                "--capacity-gib",
                format!("expected a positive number, got {g}"),
            ))
        }
        None => None,
    };
    let start = if args.clean {
        Start::Clean
    } else if args.cold {
        Start::Cold
    } else {
        Start::Reconstructed
    };
    let mut out = String::new();
    let mut json_devices = Vec::new();
    let mut written = None;
    for &dev in &devices {
        let dc = device_config(snapshot, dev).map_err(|e| CliError::new(&args.file, e))?;
        let base = dc.config.clone();
        let changed = change
            .config(&base)
            .map_err(|e| CliError::new("--set", e))?;
        let report =
            replay_with(snapshot, dev, dc.clone()).map_err(|e| CliError::new(&args.file, e))?;
        let what_if = if change.is_empty() {
            None
        } else {
            // The report above is the fidelity replay the plan needs: it is not run twice.
            let calls = empty_cache_calls_of(&report, snapshot.trace(dev.max(0) as usize));
            let p = if args.to_oom {
                Plan::to_oom_with(snapshot, dev, &dc.config, &calls)
            } else {
                Plan::whole_with(snapshot, dev, &calls)
            };
            let on = Device {
                device: dev,
                start,
                capacity: if args.to_oom { p.capacity } else { capacity },
            };
            let b = measure(snapshot, on, &base, &p.reqs, &Change::default())
                .map_err(|e| CliError::new(&args.file, e))?;
            let c = measure(snapshot, on, &base, &p.reqs, &change)
                .map_err(|e| CliError::new(&args.file, e))?;
            if args.output.is_some() && written.is_none() {
                let (_, snap) = what_if_snapshot(snapshot, dev, changed.clone(), start, on.capacity)
                    .map_err(|e| CliError::new(&args.file, e))?;
                written = Some(snap);
            }
            Some((b, c, on.capacity))
        };
        if written.is_none() && args.output.is_some() {
            let (_, snap) = what_if_snapshot(snapshot, dev, base.clone(), start, capacity)
                .map_err(|e| CliError::new(&args.file, e))?;
            written = Some(snap);
        }
        if args.json {
            let mut j = report_json(&report);
            if let Some((b, c, cap)) = &what_if {
                j["what_if"] = serde_json::json!({
                    "start": start.as_str(),
                    "capacity": cap,
                    "file_settings": whatif_json(b),
                    "changed_settings": whatif_json(c),
                    "saves": b.peak_reserved as i64 - c.peak_reserved as i64,
                    "moved_allocations": c.moved_from(b),
                });
            }
            json_devices.push(j);
            continue;
        }
        let mut text = format!("device {dev}: {} trace entries", report.entries);
        text.push_str(if report.complete_trace {
            " (complete history)\n"
        } else {
            " (starts after segments existed: replayed from the reconstructed state)\n"
        });
        text.push_str(&format!("  rules: {}\n", report.rules.describe()));
        if let (None, Some(m)) = (&report.not_replayed, report.rules.misfit()) {
            text.push_str(&format!("  warning: {m}\n"));
        }
        match &report.not_replayed {
            Some(why) => text.push_str(&format!("  {why}\n")),
            None => {
                text.push_str(&format!(
                    "  decisions matched {}/{}; final segments {}\n",
                    report.decisions_matched,
                    report.decisions,
                    if report.segments_match {
                        "match"
                    } else {
                        "differ"
                    }
                ));
                if let Some(m) = &report.first_mismatch {
                    text.push_str(&format!(
                        "  first mismatch at entry {}: {}\n",
                        m.entry, m.what
                    ));
                }
                if let Some(d) = &report.segments_difference {
                    text.push_str(&format!("  segments: {d}\n"));
                }
                text.push_str(&format!(
                    "  peak reserved {}, peak allocated {}, OOMs {}\n",
                    gib(report.figures.peak_reserved),
                    gib(report.figures.peak_allocated),
                    report.figures.ooms
                ));
            }
        }
        if report.inconsistencies > 0 {
            text.push_str(&format!(
                "  {} trace entries the state history cannot explain, first: {}\n",
                report.inconsistencies,
                report.first_inconsistency.clone().unwrap_or_default()
            ));
        }
        if let Some((b, c, _)) = &what_if {
            let name = |s: &str| {
                if s.is_empty() {
                    "(defaults)".to_string()
                } else {
                    s.to_string()
                }
            };
            text.push_str(&format!(
                "  what-if          {:>24} {:>24}\n",
                name(&b.settings),
                name(&c.settings)
            ));
            let rows = [
                ("peak reserved", b.peak_reserved, c.peak_reserved),
                ("peak allocated", b.peak_allocated, c.peak_allocated),
                ("final reserved", b.final_reserved, c.final_reserved),
                ("bytes mapped", b.bytes_mapped, c.bytes_mapped),
                ("bytes unmapped", b.bytes_unmapped, c.bytes_unmapped),
            ];
            for (label, x, y) in rows {
                text.push_str(&format!("  {label:<16} {:>24} {:>24}\n", gib(x), gib(y)));
            }
            text.push_str(&format!(
                "  {:<16} {:>24} {:>24}\n",
                "segments made", b.segment_creations, c.segment_creations
            ));
            text.push_str(&format!(
                "  {:<16} {:>24} {:>24}\n",
                "OOMs", b.failed_requests, c.failed_requests
            ));
        }
        if let Some((b, c, _)) = &what_if {
            let d = b.peak_reserved as i64 - c.peak_reserved as i64;
            text.push_str(&format!(
                "  {} start: the change saves {} of peak reserved; {} allocations in another segment\n",
                start.as_str(),
                if d >= 0 { gib(d as u64) } else { format!("-{}", gib(d.unsigned_abs())) },
                c.moved_from(b)
            ));
        }
        out.push_str(&text);
    }
    if args.json {
        let j = serde_json::json!({"file": args.file, "devices": json_devices});
        out.push_str(&format!("{j}\n"));
    }
    Ok((out, written))
}

