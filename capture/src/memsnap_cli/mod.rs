//! `memsnap`: read PyTorch CUDA memory snapshots on the command line.
//!
//! Each subcommand is a module with `Args` (clap) and `run(Args) -> Result<(), CliError>`,
//! registered by one line in `subcommands!` below. Errors print as one line,
//! `memsnap: <file>: <error>`, and exit 1; usage errors are clap's (exit 2).

mod format;
mod input;
mod limits;
mod many;
mod progress;
mod style;

use std::process::ExitCode;

use clap::Parser;

pub use input::{load, CliError};

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
    let cli = Cli::parse();
    match cli.command.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.closed_pipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memsnap: {e}");
            ExitCode::from(1)
        }
    }
}
