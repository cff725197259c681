//! `memsnap fleet FILES_OR_DIRS... [--json]`: one snapshot per rank of a job, each reduced to a
//! [`RankSummary`], shown as a table sorted by peak with the odd ranks flagged ([`fleet`]).


use memsnap_core::analysis::fleet::{fleet, Fleet, RankFlags, PEAK_TOLERANCE};
use memsnap_core::analysis::rank_summary::RankSummary;

use super::format::size;
use super::output::print;
use super::input::{load_sized, CliError};
use super::many::{expand, ranked, report, run_all, RankFile};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot files, or directories holding only snapshot files (searched recursively).
    /// The rank comes from each file's name (rank12, _r12, -12.pickle), else the files' order.
    #[arg(required = true, value_name = "FILES_OR_DIRS")]
    pub files: Vec<String>,
    /// Print {"fleet": ..., "ranks": [...]} as one JSON object instead: the fleet's flags and
    /// every rank's summary, in rank order.
    #[arg(long)]
    pub json: bool,
    /// Files read at once (each holds one snapshot in memory); 0 = one per CPU core.
    #[arg(short, long, default_value_t = 0, value_name = "N")]
    pub jobs: usize,
}

/// Reads one file into its summary; the snapshot is dropped on return.
pub fn summarize(f: &RankFile) -> Result<RankSummary, CliError> {
    let (snap, file_bytes) = load_sized(&f.name)?;
    Ok(RankSummary::of(&snap, &f.name, f.rank, file_bytes))
}

pub fn run(args: Args) -> Result<(), CliError> {
    let (text, failed) = render(&args)?;
    print(&text)?;
    failed.map_or(Ok(()), Err)
}

/// What the command prints, and the error naming the files that could not be read (they are
/// left out of the text).
pub fn render(args: &Args) -> Result<(String, Option<CliError>), CliError> {
    let files = ranked(expand(&args.files)?);
    let results = run_all(&files, args.jobs, "reading", summarize)?;
    let (mut ranks, failed) = report("fleet", results);
    ranks.sort_by_key(|r| r.rank);
    let overview = fleet(&ranks);
    let text = if args.json {
        let value = serde_json::json!({ "fleet": overview, "ranks": ranks });
        value.to_string() + "\n"
    } else {
        table(&ranks, &overview)
    };
    Ok((text, failed))
}

/// Short words for why a rank is flagged.
fn flags(f: &RankFlags) -> String {
    let mut out = Vec::new();
    if f.high_peak {
        out.push(format!("HIGH +{:.0}%", (f.peak_vs_median - 1.0) * 100.0));
    }
    if f.low_peak {
        out.push(format!("LOW -{:.0}%", (1.0 - f.peak_vs_median) * 100.0));
    }
    if f.ooms > 0 {
        out.push(format!("OOM x{}", f.ooms));
    }
    if f.fragmented {
        out.push("FRAGMENTED".to_string());
    }
    if f.top_frame_differs {
        out.push("OTHER-FRAME".to_string());
    }
    if f.peak_phase_differs {
        out.push("OTHER-PHASE".to_string());
    }
    out.join(" ")
}

/// Ranks by allocated peak, highest first, with the flags and the frame holding most at the peak.
fn table(ranks: &[RankSummary], overview: &Fleet) -> String {
    let mut order: Vec<usize> = (0..ranks.len()).collect();
    order.sort_by(|&a, &b| {
        ranks[b]
            .peak_allocated_bytes()
            .cmp(&ranks[a].peak_allocated_bytes())
            .then(ranks[a].rank.cmp(&ranks[b].rank))
    });
    let outliers = overview.ranks.iter().filter(|f| f.is_outlier()).count();
    let mut out = format!(
        "{} ranks, median peak allocated {}, {} flagged (peak beyond ±{:.0}% of the median, OOM, \
         fragmented cache, another top frame or another peak phase than most ranks)\n",
        ranks.len(),
        size(overview.median_peak_allocated_bytes),
        outliers,
        PEAK_TOLERANCE * 100.0
    );
    if let Some(m) = &overview.majority_top_frame {
        out.push_str(&format!("most ranks' top frame at the peak: {m}\n"));
    }
    if let Some(m) = &overview.majority_peak_phase {
        out.push_str(&format!("most ranks peak in: {m}\n"));
    }
    let words: Vec<String> = overview.ranks.iter().map(flags).collect();
    let w = words.iter().map(String::len).max().unwrap_or(0).max("flags".len());
    out.push_str(&format!(
        "{:>6}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:<w$}  {}\n",
        "rank",
        "peak alloc",
        "peak resv",
        "resv@dump",
        "free@dump",
        "max hole",
        "flags",
        "top frame at peak"
    ));
    for &i in &order {
        let r = &ranks[i];
        let (free, hole) = r.devices.iter().fold((0, 0), |(f, h), d| {
            (
                f + d.total_free_bytes,
                h.max(d.largest_free_block_bytes),
            )
        });
        let reserved: u64 = r.devices.iter().map(|d| d.reserved_bytes).sum();
        let frame = r.top_frame().map_or("-", |f| f.frame.as_str());
        out.push_str(&format!(
            "{:>6}  {:>10}  {:>10}  {:>10}  {:>10}  {:>10}  {:<w$}  {}\n",
            r.rank,
            size(r.peak_allocated_bytes()),
            size(r.peak_reserved_bytes()),
            size(reserved),
            size(free),
            size(hole),
            words[i],
            frame
        ));
    }
    out
}
