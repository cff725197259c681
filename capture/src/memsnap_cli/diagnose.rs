//! `memsnap diagnose FILE [--device N] [--json]`: what the page's diagnostics panel shows, from
//! the same core call (`diagnosis::diagnose_with`, the page's `diagnose_unplanned` plus the
//! planned lower bound): reserved − allocated, largest hole against total free, churn, pinning
//! blocks with their stacks, the peak by frame, and the fixes replayed through the allocator
//! model (`analysis::verdicts`), ranked by what each replay saved, with the line to try.
//! The JSON form is documented in docs/cli-json.md.

use std::collections::BTreeMap;

use memsnap_core::analysis::diagnosis::{diagnose_with, Diagnosis};
use memsnap_core::analysis::frames::{format, format_stack, is_hidden, label, visible_frames};
use memsnap_core::allocator::Rules;
use memsnap_core::analysis::policy::device_config_quick;
use memsnap_core::analysis::replay::{file_config, Start};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::analysis::verdicts::Verdicts;
use memsnap_core::snapshot::{Snapshot, StackId};

use super::allocator;
use super::format::spoken;
use super::output::print;
use super::input::{devices, load, CliError};
use super::style::Style;

/// Frames printed per stack on a terminal (`--json` has them all).
const STACK_LINES: usize = 4;
/// Pinning blocks printed on a terminal (as many as the page's side bar lists).
const PINNING_ROWS: usize = 10;
/// Rows of the peak's composition printed on a terminal.
const PEAK_ROWS: usize = 8;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle or gzipped pickle); `-` reads stdin.
    pub file: String,
    /// Only this device (default: every device in the file).
    #[arg(long)]
    pub device: Option<usize>,
    /// Whose caching allocator to model: `cuda` or `npu` (torch_npu). Default: the one the
    /// file's sizes fit, per device.
    #[arg(long, value_name = "NAME", value_parser = Rules::parse)]
    pub allocator: Option<Rules>,
    /// Print everything as one JSON object (schema: docs/cli-json.md).
    #[arg(long)]
    pub json: bool,
}

/// One device's diagnosis.
pub struct Device {
    pub diagnosis: Diagnosis,
}

/// The file's settings as an allocator-conf value, or why they cannot be read.
pub fn file_conf(snap: &Snapshot) -> Result<String, String> {
    file_config(snap)
        .map(|c| c.to_conf_string())
        .map_err(|e| e.to_string())
}

/// The variable the settings are given in: torch_npu's when every device follows its rules
/// (chosen by their sizes as the page's Analysis panel chooses them: the replays have weighed
/// every check already).
fn conf_var(snap: &Snapshot, result: &[Device]) -> &'static str {
    let npu = !result.is_empty()
        && result.iter().all(|d| {
            device_config_quick(snap, d.diagnosis.device as i64)
                .is_ok_and(|c| c.choice.rules == Rules::Npu)
        });
    if npu { Rules::Npu } else { Rules::Cuda }.conf_var()
}

/// The diagnosis of each device.
pub fn diagnose_devices(snap: &Snapshot, devs: &[usize]) -> Vec<Device> {
    devs.iter()
        .map(|&d| Device {
            diagnosis: diagnose_with(snap, d, &Timeline::build(snap, d)),
        })
        .collect()
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snap = load(&args.file)?;
    let text = render(&args, &snap)?;
    print(&text)
}

/// What the command prints for a snapshot already read.
pub fn render(args: &Args, snap: &Snapshot) -> Result<String, CliError> {
    let snap = &*allocator::under(snap, args.allocator);
    let devs = devices(&args.file, snap, args.device)?;
    let result = diagnose_devices(snap, &devs);
    Ok(if args.json {
        json(&args.file, snap, &result)? + "\n"
    } else {
        human(&args.file, snap, &result, Style::for_stdout())
    })
}

/// Every stack id a diagnosis names (pinning blocks, peak stacks, anomalies).
fn stack_ids(d: &Diagnosis) -> impl Iterator<Item = StackId> + '_ {
    let a = &d.anomalies;
    d.pinning
        .iter()
        .map(|p| p.stack)
        .chain(d.peak.by_stack.iter().map(|g| g.stack))
        .chain(a.pending_frees.iter().map(|p| p.stack))
        .chain(a.leak_suspects.iter().map(|l| l.stack))
        .chain(a.ooms.iter().map(|o| o.stack))
        .flatten()
}

fn json(file: &str, snap: &Snapshot, result: &[Device]) -> Result<String, CliError> {
    let encode = |e: serde_json::Error| CliError::new("<json>", e);
    let mut stacks: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    let mut out = Vec::new();
    for dev in result {
        for s in stack_ids(&dev.diagnosis) {
            stacks
                .entry(s.0)
                .or_insert_with(|| format_stack(&snap.stacks, s, true));
        }
        out.push(serde_json::to_value(&dev.diagnosis).map_err(encode)?);
    }
    let (conf, settings_error) = match file_conf(snap) {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e)),
    };
    let doc = serde_json::json!({
        "file": file,
        "conf": conf,
        "settings_error": settings_error,
        "devices": out,
        // Integer keys are written as JSON strings.
        "stacks": stacks,
    });
    serde_json::to_string(&doc).map_err(encode)
}

fn pct(r: f64) -> String {
    format!("{:.0}%", r * 100.0)
}

/// A stack's user and library frames (the page's flame graph filter), innermost first; its
/// label (as the page names it) when it has none of those.
fn push_stack(out: &mut String, snap: &Snapshot, stack: Option<StackId>, st: Style) {
    let Some(s) = stack else {
        out.push_str(&format!("      {}\n", st.dim("<no stack>")));
        return;
    };
    let user: Vec<String> = visible_frames(&snap.stacks, s, true)
        .into_iter()
        .filter(|f| !is_hidden(f))
        .map(format)
        .collect();
    let lines = if user.is_empty() {
        vec![label(&snap.stacks, Some(s))]
    } else {
        user
    };
    for l in lines.iter().take(STACK_LINES) {
        out.push_str(&format!("      {}\n", st.dim(l)));
    }
    if lines.len() > STACK_LINES {
        let more = format!("... {} more", lines.len() - STACK_LINES);
        out.push_str(&format!("      {}\n", st.dim(&more)));
    }
}

fn human(file: &str, snap: &Snapshot, result: &[Device], st: Style) -> String {
    let mut out = String::new();
    if result.is_empty() {
        out.push_str(&format!("{file}: no devices (no segments and no trace)\n"));
    }
    for dev in result {
        device_text(&mut out, file, snap, dev, st);
    }
    match file_conf(snap) {
        Ok(c) if c.is_empty() => out.push_str("settings: the allocator's defaults (the file sets none)\n"),
        Ok(c) => out.push_str(&format!("settings: {}={c}\n", conf_var(snap, result))),
        Err(e) => out.push_str(&format!("settings: cannot be read ({e})\n")),
    }
    out
}

fn device_text(out: &mut String, file: &str, snap: &Snapshot, dev: &Device, st: Style) {
    let d = &dev.diagnosis;
    let f = &d.fragmentation;
    let trace = if d.has_trace {
        format!("{} trace entries", d.timeline.entries)
    } else {
        "no trace".to_string()
    };
    out.push_str(&st.head(&format!("{file}: device {} ({trace})", d.device)));
    out.push('\n');
    out.push_str(&format!(
        "  reserved {}, allocated {}: reserved − allocated = {}\n",
        spoken(f.reserved),
        spoken(f.allocated),
        spoken(f.reserved_minus_allocated)
    ));
    out.push_str(&format!(
        "  free {} in {} segments, largest hole {} (fragmentation {})\n",
        spoken(f.free),
        f.segments_with_free,
        spoken(f.largest_free),
        pct(f.ratio)
    ));
    if f.releasable > 0 {
        out.push_str(&format!(
            "  {} segments with no active block hold {} (releasable)\n",
            f.releasable_segments,
            spoken(f.releasable)
        ));
    }

    // The peak and what it is made of.
    let p = &d.peak;
    let at = match (p.index, &d.peak_phase) {
        (Some(i), Some(phase)) => format!("after entry {i} (in {phase})"),
        (Some(i), None) => format!("after entry {i}"),
        (None, _) => "at the dump (no trace)".to_string(),
    };
    out.push_str(&st.head(&format!(
        "peak: {} allocated {at}, {} reserved, {} live allocations",
        spoken(p.allocated),
        spoken(p.reserved),
        p.live_allocations
    )));
    out.push('\n');
    for g in p.by_top_frame.iter().take(PEAK_ROWS) {
        out.push_str(&format!(
            "  {:>11}  {:>6}  {}\n",
            spoken(g.bytes),
            g.count,
            g.label
        ));
    }
    if p.by_top_frame.len() > PEAK_ROWS {
        out.push_str(&format!(
            "  {}\n",
            st.dim(&format!(
                "... {} more frames (--json has them all)",
                p.by_top_frame.len() - PEAK_ROWS
            ))
        ));
    }

    // Churn.
    let c = &d.churn;
    if d.has_trace {
        out.push_str(&st.head("churn: "));
        out.push_str(&format!(
            "{} ({} distinct sizes, turnover {:.1}x the peak)\n",
            c.verdict, c.distinct_sizes, c.turnover
        ));
        if let Some(al) = &c.alternating {
            out.push_str(&format!(
                "  sizes {} and {} alternate {} times ({} and {} allocations), new segments needed: {}, {} left over per reuse\n",
                spoken(al.smaller),
                spoken(al.larger),
                al.alternations,
                al.allocs_smaller,
                al.allocs_larger,
                al.new_segments,
                spoken(al.remainder)
            ));
        }
    }

    // Pinning blocks.
    if !d.pinning.is_empty() {
        out.push_str(&st.head(&format!("pinning: {} blocks", d.pinning.len())));
        out.push('\n');
        for b in d.pinning.iter().take(PINNING_ROWS) {
            let age = match (b.alloc_index, b.age_entries) {
                (Some(i), Some(a)) => format!("allocated at entry {i}, {a} entries ago"),
                _ => "allocated before the trace".to_string(),
            };
            out.push_str(&format!(
                "  {} block at {:#x} keeps {} of segment {:#x} ({}) reserved; {age}\n",
                spoken(b.block_size),
                b.block_address,
                spoken(b.pinned),
                b.segment_address,
                spoken(b.segment_size)
            ));
            push_stack(out, snap, b.stack, st);
        }
        if d.pinning.len() > PINNING_ROWS {
            let more = format!(
                "... {} more blocks (--json has them all)",
                d.pinning.len() - PINNING_ROWS
            );
            out.push_str(&format!("  {}\n", st.dim(&more)));
        }
    }

    // Anomalies, in one line each when present.
    let a = &d.anomalies;
    if !a.leak_suspects.is_empty() {
        out.push_str(&format!(
            "leak suspects: {} allocations live at the dump hold {}\n",
            a.leak_suspects.len(),
            spoken(a.leak_bytes)
        ));
    }
    if !a.pending_frees.is_empty() {
        out.push_str(&format!(
            "pending frees: {} blocks ({}) wait on other streams\n",
            a.pending_frees.len(),
            spoken(a.pending_bytes)
        ));
    }
    if !a.ooms.is_empty() {
        out.push_str(&st.bad(&format!("out of memory: {} recorded", a.ooms.len())));
        out.push('\n');
    }

    fixes_text(out, file, d.device, &d.verdicts, st);

    // The planned lower bound.
    match &d.plan {
        Some(pl) => out.push_str(&format!(
            "planned lower bound: {} arena for {} live at the peak ({} allocations planned); reserved peaked at {}\n",
            spoken(pl.arena_size),
            spoken(pl.peak_live_block),
            pl.planned,
            spoken(d.timeline.peak_reserved)
        )),
        None => out.push_str("planned lower bound: needs a trace\n"),
    }
    out.push('\n');
}

/// `w` quoted for a POSIX shell when it holds anything but plain characters.
fn shell_word(w: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !w.is_empty() && w.chars().all(plain) {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// A signed byte difference as people say it: "saves 1.2 GiB", "costs 16 MiB", "saves nothing".
fn saving(bytes: i64) -> String {
    match bytes {
        0 => "saves nothing".to_string(),
        b if b > 0 => format!("saves {}", spoken(b as u64)),
        b => format!("costs {}", spoken(b.unsigned_abs())),
    }
}

fn fixes_text(out: &mut String, file: &str, device: usize, v: &Verdicts, st: Style) {
    if let Some(why) = &v.not_replayed {
        out.push_str(&format!("fixes: none replayed ({why})\n"));
        return;
    }
    out.push_str(&format!("replayed under {}\n", v.allocator));
    let start = v.ranked_on.as_str();
    let other = match v.ranked_on {
        Start::Cold => "reconstructed",
        _ => "cold",
    };
    let failing = v.capacity.map_or(String::new(), |c| {
        format!(" on a device of {}", spoken(c))
    });
    if v.fixes.is_empty() {
        out.push_str(&st.good(&format!(
            "fixes: none needed: of {} replayed, none lowers {}{failing}",
            v.fixes.len() + v.no_saving.len(),
            v.figure
        )));
        out.push('\n');
    } else {
        out.push_str(&st.head(&format!(
            "fixes, replayed ({} replays, {start} start{failing}), most saving first:",
            v.replays
        )));
        out.push('\n');
    }
    out.push_str(&format!("  {}\n", st.dim(&format!("start: {}", v.why_start))));
    for (i, x) in v.fixes.iter().enumerate() {
        out.push_str(&format!("  {}. {}\n", i + 1, x.title));
        out.push_str(&format!("     {}\n", st.accent(&x.setting)));
        for e in &x.evidence {
            out.push_str(&format!("     - {e}\n"));
        }
        let oom = match x.oom {
            Some(o) if o.served => format!(
                "; the failing request is served with {} to spare",
                spoken(o.spare)
            ),
            _ => String::new(),
        };
        out.push_str(&format!(
            "     {} of peak reserved (replayed, {start} start: {} -> {}){oom}\n",
            saving(x.saves),
            spoken(v.base.peak_reserved),
            spoken(x.with.peak_reserved)
        ));
        if let (Some(s), Some(o)) = (x.saves_other_start, &x.other_start) {
            out.push_str(&format!(
                "     {} from the {other} start (-> {})\n",
                saving(s),
                spoken(o.peak_reserved)
            ));
        }
        out.push_str(&format!("     {}\n", st.dim(&format!("cost: {}", x.cost))));
        let mut cmd = vec!["memsnap replay".to_string(), shell_word(file)];
        cmd.push(format!("--device {device}"));
        cmd.extend(v.start_args(v.ranked_on).iter().map(|a| a.to_string()));
        cmd.extend(x.replay_args.iter().map(|a| shell_word(a)));
        out.push_str(&format!(
            "     {}\n",
            st.dim(&format!("replay it: {}", cmd.join(" ")))
        ));
    }
    if let Some(c) = &v.combined {
        out.push_str(&format!("  {}\n", st.dim(&format!("replayed: {c}"))));
    }
    if let Some(line) = &v.try_line {
        out.push_str(&format!("try: {}\n", st.accent(line)));
    }
    if !v.no_saving.is_empty() {
        out.push_str(&st.head("tried, and not a fix here:"));
        out.push('\n');
        for x in &v.no_saving {
            let failed = if x.with.failed_requests > v.base.failed_requests {
                format!(
                    ", {} requests fail",
                    x.with.failed_requests - v.base.failed_requests
                )
            } else {
                String::new()
            };
            out.push_str(&format!(
                "  - {}: {} of peak reserved ({} -> {}{failed})\n",
                x.setting,
                saving(x.saves),
                spoken(v.base.peak_reserved),
                spoken(x.with.peak_reserved)
            ));
        }
    }
}
