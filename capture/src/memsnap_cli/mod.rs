//! `memsnap`: read PyTorch CUDA memory snapshots on the command line.
//!
//! Each subcommand is a module with `Args` (clap) and `run(Args) -> Result<(), CliError>`,
//! registered by one line in `subcommands!` below. Errors print as one line,
//! `memsnap: <file>: <error>`, and exit 1; usage errors are clap's (exit 2).

mod allocator;
mod format;
mod input;
mod limits;
mod many;
mod output;
mod progress;
mod style;

use std::process::ExitCode;

use clap::Parser;
use memsnap_core::snapshot::Snapshot;

pub use input::{bytes, load, parse, CliError};

/// Declares the subcommand modules, the `Command` enum and its dispatch from one list.
macro_rules! subcommands {
    ($($(#[$doc:meta])* $variant:ident => $module:ident),* $(,)?) => {
        $(pub mod $module;)*

        #[derive(clap::Subcommand, Debug)]
        pub enum Command {
            $($(#[$doc])* $variant($module::Args),)*
        }

        impl Command {
            fn run(self) -> Result<(), CliError> {
                match self {
                    $(Command::$variant(args) => $module::run(args),)*
                }
            }
        }
    };
}

subcommands! {
    /// Counts and byte totals per device (allocated, reserved, free, requested).
    Stats => stats,
    /// One line per segment, then its blocks (offset, size, state, requested, top frame).
    Segments => segments,
    /// Re-write a snapshot (pickle, gzipped pickle) as a protocol-4 pickle PyTorch's viewer opens.
    Convert => convert,
    /// The trace as a Python-style listing, one line per entry (like `_memory_viz trace`).
    Trace => trace,
    /// Replay the trace through the allocator model: fidelity, or what-if with --set KEY=VALUE.
    Replay => replay,
    /// The page's diagnostics: fragmentation, churn, pinning, the peak by frame, ranked fixes.
    Diagnose => diagnose,
    /// Two snapshots of one program side by side: what grew and shrank, by frame.
    Compare => compare,
    /// Exit 1 when a limit is exceeded (peak, reserved, fragmentation, growth): for CI.
    Check => check,
    /// Folded stacks (`frame;frame;frame bytes`) for flamegraph.pl, inferno and speedscope.
    Flame => flame,
    /// One snapshot per rank of a job: a table sorted by peak with the odd ranks flagged.
    Fleet => fleet,
    /// Snapshots as Hive-partitioned Parquet tables (by rank) for DuckDB, DataFusion or Spark.
    Export => export,
    /// The program's phases (record_function, optimizer steps, torch.compile) and memory in each.
    Phases => phases,
    /// Why the file ran out of memory: request, free blocks by pool, live frames, replayed fixes.
    Oom => oom,
    /// One self-contained HTML file of the viewer and the snapshot, for file:// (no server).
    Html => html,
}

#[derive(Parser, Debug)]
#[command(
    name = "memsnap",
    version,
    about = "Read PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot pickles)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The whole program: parse arguments, run, report.
pub fn main() -> ExitCode {
    ExitCode::from(main_from(std::env::args_os()))
}

/// [`main`] over the given command line (the program's name first), returning the exit status:
/// the Python package's `memsnap` command runs this.
pub fn main_from<I, T>(argv: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(e) => {
            // clap's own report (usage, --help, --version) and status.
            let _ = e.print();
            return e.exit_code().clamp(0, 255) as u8;
        }
    };
    match cli.command.run() {
        Ok(()) => 0,
        Err(e) if e.closed_pipe => 0,
        Err(e) => {
            eprintln!("memsnap: {e}");
            1
        }
    }
}

/// What a command prints for snapshots already read, so the Python module answers with the
/// command line's arguments, checks and text, field for field. `args` is the command line
/// after `memsnap`; each FILE in it names the snapshot at the same place in `snaps` (its name
/// is what the output quotes).
pub fn render_loaded(args: &[String], snaps: &[&Snapshot]) -> Result<String, CliError> {
    let command = parse_command(args)?;
    let snap = |i: usize| {
        snaps
            .get(i)
            .copied()
            .ok_or_else(|| CliError::new("arguments", format!("no snapshot {i} was given")))
    };
    match command {
        Command::Stats(a) => Ok(stats::render(&a, snap(0)?)),
        Command::Diagnose(a) => diagnose::render(&a, snap(0)?),
        Command::Oom(a) => oom::render(&a, snap(0)?),
        Command::Phases(a) => phases::render(&a, snap(0)?),
        Command::Flame(a) => flame::render(&a, snap(0)?),
        Command::Compare(a) => compare::render(&a, snap(0)?, snap(1)?),
        Command::Replay(a) if a.output.is_none() => Ok(replay::render(&a, snap(0)?)?.0),
        _ => Err(CliError::new(
            "arguments",
            "this command does not run over snapshots already read",
        )),
    }
}

/// The command line after `memsnap`, parsed as the program parses it; a usage error is one
/// line naming the argument.
pub fn parse_command(args: &[String]) -> Result<Command, CliError> {
    let argv = std::iter::once("memsnap".to_string()).chain(args.iter().cloned());
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or("invalid arguments");
        CliError::new("arguments", first.trim_start_matches("error: "))
    })?;
    Ok(cli.command)
}
