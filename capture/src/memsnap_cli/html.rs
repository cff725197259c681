//! `memsnap html FILE -o report.html [--device N] [--entries A..B]`: one self-contained HTML
//! file of the viewer and the snapshot, which opens from `file://` with no server and no
//! network (see [`crate::report`]).

use std::path::PathBuf;
use std::time::Instant;

use memsnap_core::analysis::trim::{trim, Trim};
use memsnap_core::snapshot::write;

use super::format::size;
use super::input::{bytes, parse, CliError};
use crate::report::{build, viewer, Viewer};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle, gzipped pickle or JSON); `-` reads stdin.
    pub file: String,
    /// The report to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Keep only this device (its segments and trace).
    #[arg(long)]
    pub device: Option<i64>,
    /// Keep only trace entries START..END of the device (the dump becomes the state after
    /// END's last entry).
    #[arg(long, value_name = "START..END", value_parser = entry_range)]
    pub entries: Option<(usize, usize)>,
    /// The viewer's built files (Trunk's dist/); default: $MEMSNAP_VIEWER, `viewer/` beside
    /// this program, or the checkout's dist/.
    #[arg(long, value_name = "DIR")]
    pub viewer: Option<PathBuf>,
    /// Print nothing on success.
    #[arg(short, long)]
    pub quiet: bool,
}

fn entry_range(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected START..END, got `{s}`"))?;
    let n = |x: &str| {
        x.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{x}` is not an entry number"))
    };
    Ok((n(a)?, n(b)?))
}

/// The report's file name for the snapshot: its own name, or `<stdin>`.
fn shown_name(file: &str) -> String {
    if file == "-" {
        return "stdin.pickle".to_string();
    }
    std::path::Path::new(file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.to_string())
}

/// The report's bytes and a line saying what it weighs; shared with the Python module.
pub fn render(args: &Args, data: &[u8]) -> Result<(String, String), CliError> {
    let started = Instant::now();
    // Parsed even when carried as it is: a report of a file the viewer cannot read would
    // only say so when opened.
    let snap = parse(&args.file, data, !args.quiet)?;
    let cut = Trim {
        device: args.device,
        entries: args.entries,
    };
    let rewritten;
    let carried: &[u8] = if cut == Trim::default() {
        data
    } else {
        let trimmed = trim(&snap, &cut).map_err(|e| CliError::new(&args.file, e))?;
        rewritten = write(&trimmed);
        &rewritten
    };
    drop(snap);
    let dir = viewer::find(args.viewer.as_deref()).map_err(|e| CliError::new("--viewer", e))?;
    let v = Viewer::read(&dir).map_err(|e| CliError::new("--viewer", e))?;
    let report =
        build(&v, &shown_name(&args.file), carried).map_err(|e| CliError::new("--viewer", e))?;
    let line = format!(
        "wrote {} ({}: the snapshot {} gzipped, the viewer {} as built) in {:.2} s\n",
        args.output.display(),
        size(report.html.len() as u64),
        size(report.snapshot_gz),
        size(report.viewer),
        started.elapsed().as_secs_f64()
    );
    Ok((report.html, line))
}

pub fn run(args: Args) -> Result<(), CliError> {
    let data = bytes(&args.file)?;
    let (html, line) = render(&args, &data)?;
    drop(data);
    std::fs::write(&args.output, html)
        .map_err(|e| CliError::new(args.output.display().to_string(), e))?;
    if !args.quiet {
        print!("{line}");
    }
    Ok(())
}
