//! `memsnap check FILE --max-peak 40GiB ... [--baseline OLD --max-growth 5%]`: limits for CI.
//! One line per limit and device on stdout, `ok` or `FAIL`; exit status 0 within every limit,
//! 1 when one failed (then `memsnap: FILE: N of M limits failed` on stderr). The numbers are those of `memsnap compare`
//! (core `compare::Side`), for every device of FILE unless `--device` names one.

use std::io::Write;

use memsnap_core::analysis::compare::{compare, Side};
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::Snapshot;

use super::format::spoken;
use super::input::{devices, load, CliError};
use super::limits;

#[derive(clap::Args, Debug)]
#[command(group(
    clap::ArgGroup::new("limit")
        .required(true)
        .multiple(true)
        .args(["max_peak", "max_reserved", "max_fragmentation", "max_reserved_gap", "max_growth"])
))]
pub struct Args {
    /// Snapshot file (pickle or gzipped pickle); `-` reads stdin.
    pub file: String,
    /// Only this device (default: every device in the file).
    #[arg(long)]
    pub device: Option<usize>,
    /// Most bytes allocated at the peak, e.g. 40GiB.
    #[arg(long, value_name = "SIZE", value_parser = limits::size)]
    pub max_peak: Option<u64>,
    /// Most bytes reserved at any point, e.g. 48GiB.
    #[arg(long, value_name = "SIZE", value_parser = limits::size)]
    pub max_reserved: Option<u64>,
    /// Largest fragmentation at the dump (1 − largest hole / free), e.g. 0.3 or 30%.
    #[arg(long, value_name = "FRACTION", value_parser = limits::fraction)]
    pub max_fragmentation: Option<f64>,
    /// Most reserved − allocated bytes at the dump, e.g. 8GiB.
    #[arg(long, value_name = "SIZE", value_parser = limits::size)]
    pub max_reserved_gap: Option<u64>,
    /// Baseline snapshot for --max-growth.
    #[arg(long, value_name = "OLD", requires = "max_growth")]
    pub baseline: Option<String>,
    /// Largest growth of peak allocated and peak reserved over the baseline, e.g. 5%.
    #[arg(
        long,
        value_name = "FRACTION",
        value_parser = limits::fraction,
        requires = "baseline"
    )]
    pub max_growth: Option<f64>,
}

/// What one check found: a description of the number, and whether it is within its limit.
struct Outcome {
    failed: bool,
    line: String,
}

fn over(failed: bool, line: String) -> Outcome {
    Outcome { failed, line }
}

fn pct(f: f64) -> String {
    format!("{:.1}%", f * 100.0)
}

/// The absolute limits on one file's numbers.
fn absolute(args: &Args, s: &Side, out: &mut Vec<Outcome>) {
    let sizes = [
        ("peak allocated", s.peak_allocated, args.max_peak, "--max-peak"),
        ("peak reserved", s.peak_reserved, args.max_reserved, "--max-reserved"),
        (
            "reserved − allocated at the dump",
            s.reserved_minus_allocated,
            args.max_reserved_gap,
            "--max-reserved-gap",
        ),
    ];
    for (what, v, limit, flag) in sizes {
        if let Some(l) = limit {
            let failed = v > l;
            let rel = if failed { "is over" } else { "is within" };
            out.push(over(
                failed,
                format!("{what} {} {rel} {flag} {}", spoken(v), spoken(l)),
            ));
        }
    }
    if let Some(l) = args.max_fragmentation {
        let v = s.fragmentation;
        let failed = v > l;
        let rel = if failed { "is over" } else { "is within" };
        out.push(over(
            failed,
            format!(
                "fragmentation {} {rel} --max-fragmentation {} (largest hole {} of {} free)",
                pct(v),
                pct(l),
                spoken(s.largest_free),
                spoken(s.free)
            ),
        ));
    }
}

/// Growth over the baseline of peak allocated and peak reserved.
fn growth(baseline: &str, limit: f64, b: &Side, a: &Side, out: &mut Vec<Outcome>) {
    for (what, x, y) in [
        ("peak allocated", b.peak_allocated, a.peak_allocated),
        ("peak reserved", b.peak_reserved, a.peak_reserved),
    ] {
        let g = if x == 0 {
            if y == 0 {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            (y as f64 - x as f64) / x as f64
        };
        let failed = g > limit;
        let rel = if failed { "over" } else { "within" };
        out.push(over(
            failed,
            format!(
                "{what} {} -> {} ({}{}) since {baseline}, {rel} --max-growth {}",
                spoken(x),
                spoken(y),
                if g >= 0.0 { "+" } else { "" },
                pct(g),
                pct(limit)
            ),
        ));
    }
}

fn checks(
    args: &Args,
    snap: &Snapshot,
    base: Option<&Snapshot>,
    device: usize,
) -> Vec<Outcome> {
    let mut out = Vec::new();
    match (base, &args.baseline, args.max_growth) {
        (Some(base), Some(name), Some(limit)) => {
            let c = compare(base, snap, device);
            absolute(args, &c.after, &mut out);
            growth(name, limit, &c.before, &c.after, &mut out);
        }
        _ => {
            let s = Side::of(snap, device, &Timeline::build(snap, device));
            absolute(args, &s, &mut out);
        }
    }
    out
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snap = load(&args.file)?;
    let base = match &args.baseline {
        Some(b) => Some(load(b)?),
        None => None,
    };
    let devs = devices(&args.file, &snap, args.device)?;
    let mut text = String::new();
    let (mut failed, mut total) = (0, 0);
    for &d in &devs {
        for o in checks(&args, &snap, base.as_ref(), d) {
            total += 1;
            failed += usize::from(o.failed);
            let mark = if o.failed { "FAIL" } else { "ok  " };
            text.push_str(&format!("{mark} {} device {d}: {}\n", args.file, o.line));
        }
    }
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(CliError::stdout)?;
    if failed > 0 {
        let s = if failed == 1 { "" } else { "s" };
        return Err(CliError::new(
            &args.file,
            format!("{failed} of {total} limit{s} failed"),
        ));
    }
    Ok(())
}
