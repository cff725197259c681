//! `memsnap export FILES_OR_DIRS... --parquet OUT_DIR [--rank R]`: each snapshot as eight
//! Hive-partitioned Parquet tables (`OUT_DIR/<table>/rank=<R>/part-0.parquet`, see
//! docs/parquet-schema.md) for DuckDB, DataFusion or Spark. One file per process works too
//! (`--rank`), so a cluster can convert each rank where its snapshot lies.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use memsnap_core::analysis::rank_summary::RankSummary;

use super::format::size;
use super::input::{load_sized, CliError};
use super::many::{expand, ranked, report, run_all, RankFile};
use crate::export::{export_rank, Written};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot files, or directories holding only snapshot files (searched recursively).
    /// The rank comes from each file's name (rank12, _r12, -12.pickle), else the files' order.
    #[arg(required = true, value_name = "FILES_OR_DIRS")]
    pub files: Vec<String>,
    /// Directory to write the Parquet dataset into (created when missing; a rank's earlier
    /// files are replaced, other ranks' are kept).
    #[arg(long, value_name = "OUT_DIR")]
    pub parquet: PathBuf,
    /// The rank of the one file given, instead of the one its name states (one process per
    /// file, e.g. `--rank $SLURM_PROCID`).
    #[arg(long, value_name = "R")]
    pub rank: Option<u32>,
    /// Files converted at once (each holds one snapshot in memory); 0 = one per CPU core.
    #[arg(short, long, default_value_t = 0, value_name = "N")]
    pub jobs: usize,
    /// No summary line on stdout.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Reads one file, writes its tables, and drops the snapshot before the next file.
fn convert(f: &RankFile, out: &std::path::Path) -> Result<(u64, Written), CliError> {
    let (snap, file_bytes) = load_sized(&f.name)?;
    let summary = RankSummary::of(&snap, &f.name, f.rank, file_bytes);
    let written = export_rank(&snap, &summary, out).map_err(|e| CliError::new(&f.name, e))?;
    Ok((file_bytes, written))
}

pub fn run(args: Args) -> Result<(), CliError> {
    let mut files = ranked(expand(&args.files)?);
    if let Some(rank) = args.rank {
        match files.as_mut_slice() {
            [one] => one.rank = rank,
            _ => {
                return Err(CliError::new(
                    "--rank",
                    format!("names the rank of one file, but {} were given", files.len()),
                ))
            }
        }
    }
    let start = Instant::now();
    let results = run_all(&files, args.jobs, "exporting", |f| convert(f, &args.parquet))?;
    let seconds = start.elapsed().as_secs_f64();
    let (done, failed) = report("export", results);
    if !args.quiet {
        let read: u64 = done.iter().map(|(b, _)| b).sum();
        let wrote: u64 = done.iter().map(|(_, w)| w.bytes).sum();
        let line = format!(
            "exported {} of {} files ({}) to {} in {seconds:.2} s ({:.1} MB/s); Parquet {}\n",
            done.len(),
            files.len(),
            size(read),
            args.parquet.display(),
            read as f64 / 1e6 / seconds.max(1e-9),
            size(wrote),
        );
        std::io::stdout()
            .lock()
            .write_all(line.as_bytes())
            .map_err(CliError::stdout)?;
    }
    failed.map_or(Ok(()), Err)
}
