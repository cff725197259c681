//! `memsnap compare BEFORE AFTER [--device N] [--json]`: two snapshots of one program side by
//! side (core `compare::compare`): peak, reserved and fragmentation, what grew and shrank by
//! frame, stacks new in AFTER, segments added and removed.


use memsnap_core::analysis::compare::{compare, Comparison, Side};
use memsnap_core::snapshot::Snapshot;

use super::format::{change, spoken};
use super::output::print;
use super::input::{devices, load, CliError};
use super::style::Style;

/// Rows of frames and of new stacks printed on a terminal (`--json` has them all).
const ROWS: usize = 12;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The earlier snapshot (the baseline).
    pub before: String,
    /// The later snapshot, compared against BEFORE.
    pub after: String,
    /// Only this device (default: every device of either file).
    #[arg(long)]
    pub device: Option<usize>,
    /// Print the comparison as one JSON object (schema: docs/cli-json.md).
    #[arg(long)]
    pub json: bool,
}

/// Devices of either file (`asked`: that one, which one of them must have).
pub fn devices_of_both(
    args: (&str, &str),
    snaps: (&Snapshot, &Snapshot),
    asked: Option<usize>,
) -> Result<Vec<usize>, CliError> {
    let b = devices(args.0, snaps.0, None)?;
    let mut all = devices(args.1, snaps.1, None)?;
    if let Some(d) = asked {
        if !b.contains(&d) && !all.contains(&d) {
            // Names the devices AFTER has.
            return devices(args.1, snaps.1, Some(d));
        }
        return Ok(vec![d]);
    }
    all.extend(b);
    all.sort_unstable();
    all.dedup();
    Ok(all)
}

pub fn run(args: Args) -> Result<(), CliError> {
    let before = load(&args.before)?;
    let after = load(&args.after)?;
    let text = render(&args, &before, &after)?;
    print(&text)
}

/// What the command prints for snapshots already read.
pub fn render(args: &Args, before: &Snapshot, after: &Snapshot) -> Result<String, CliError> {
    let devs = devices_of_both(
        (&args.before, &args.after),
        (before, after),
        args.device,
    )?;
    let result: Vec<Comparison> = devs.iter().map(|&d| compare(before, after, d)).collect();
    let text = if args.json {
        let doc = serde_json::json!({
            "before": args.before,
            "after": args.after,
            "devices": result,
        });
        serde_json::to_string(&doc).map_err(|e| CliError::new("<json>", e))? + "\n"
    } else {
        let st = Style::for_stdout();
        result
            .iter()
            .map(|c| human(&args.before, &args.after, c, st))
            .collect::<Vec<_>>()
            .join("\n")
    };
    Ok(text)
}

fn delta(st: Style, before: u64, after: u64) -> String {
    let d = after as i128 - before as i128;
    let text = change(d.clamp(i64::MIN as i128, i64::MAX as i128) as i64);
    let text = if before > 0 && d != 0 {
        format!("{text} ({:+.1}%)", d as f64 * 100.0 / before as f64)
    } else {
        text
    };
    colour_change(st, d, &text)
}

/// Growth red, shrinkage green: for memory, less is better.
fn colour_change(st: Style, d: i128, text: &str) -> String {
    match d {
        0 => text.to_string(),
        d if d > 0 => st.bad(text),
        _ => st.good(text),
    }
}

fn side_rows(b: &Side, a: &Side) -> [(&'static str, u64, u64); 7] {
    [
        ("peak allocated", b.peak_allocated, a.peak_allocated),
        ("peak reserved", b.peak_reserved, a.peak_reserved),
        ("allocated at dump", b.dump_allocated, a.dump_allocated),
        ("reserved at dump", b.dump_reserved, a.dump_reserved),
        (
            "reserved − allocated",
            b.reserved_minus_allocated,
            a.reserved_minus_allocated,
        ),
        ("free (cached)", b.free, a.free),
        ("largest hole", b.largest_free, a.largest_free),
    ]
}

fn human(before: &str, after: &str, c: &Comparison, st: Style) -> String {
    let (b, a) = (&c.before, &c.after);
    let mut out = st.head(&format!("{before} -> {after}: device {}", c.device));
    out.push('\n');
    out.push_str(&format!(
        "  {:<22}{:>13}{:>13}  change\n",
        "", "before", "after"
    ));
    for (name, x, y) in side_rows(b, a) {
        // The change is last on the line: its colour codes shift nothing.
        out.push_str(&format!(
            "  {name:<22}{:>13}{:>13}  {}\n",
            spoken(x),
            spoken(y),
            delta(st, x, y)
        ));
    }
    let points = (a.fragmentation - b.fragmentation) * 100.0;
    let frag = format!("{points:+.0} points");
    out.push_str(&format!(
        "  {:<22}{:>12.0}%{:>12.0}%  {}\n",
        "fragmentation",
        b.fragmentation * 100.0,
        a.fragmentation * 100.0,
        colour_change(st, (points.round()) as i128, &frag)
    ));
    for (name, x, y) in [
        ("segments", b.segments, a.segments),
        ("trace entries", b.entries, a.entries),
    ] {
        out.push_str(&format!(
            "  {name:<22}{x:>13}{y:>13}  {:+}\n",
            y as i128 - x as i128
        ));
    }

    if c.frames.is_empty() {
        out.push_str("no frame's live bytes changed at the peak or at the dump\n");
    } else {
        out.push_str(&st.head(
            "grew and shrank, by frame (live bytes at each file's peak; at its dump):",
        ));
        out.push('\n');
        for f in c.frames.iter().take(ROWS) {
            // Padded before colouring: escape codes would count toward the width.
            let cell = |d: i64| colour_change(st, d as i128, &format!("{:>12}", change(d)));
            out.push_str(&format!(
                "  {} {}  {}\n",
                cell(f.peak_change),
                cell(f.dump_change),
                f.label
            ));
        }
        if c.frames.len() > ROWS {
            out.push_str(&format!(
                "  {}\n",
                st.dim(&format!("... {} more frames", c.frames.len() - ROWS))
            ));
        }
    }

    if !c.new_stacks.is_empty() {
        let bytes: u64 = c.new_stacks.iter().map(|s| s.peak_bytes).sum();
        out.push_str(&st.head(&format!(
            "new in AFTER: {} stacks BEFORE never allocated from, {} live at AFTER's peak",
            c.new_stacks.len(),
            spoken(bytes)
        )));
        out.push('\n');
        for s in c.new_stacks.iter().take(ROWS) {
            out.push_str(&format!(
                "  {} at the peak ({} allocations), {} at the dump: {}\n",
                spoken(s.peak_bytes),
                s.peak_count,
                spoken(s.dump_bytes),
                s.label
            ));
        }
        if c.new_stacks.len() > ROWS {
            out.push_str(&format!(
                "  {}\n",
                st.dim(&format!("... {} more stacks", c.new_stacks.len() - ROWS))
            ));
        }
    }

    let total = |v: &[memsnap_core::analysis::compare::SegmentChange]| -> u64 {
        v.iter().map(|s| s.size).sum()
    };
    out.push_str(&format!(
        "segments added: {} ({}); removed: {} ({})\n",
        c.segments_added.len(),
        spoken(total(&c.segments_added)),
        c.segments_removed.len(),
        spoken(total(&c.segments_removed))
    ));
    out
}
