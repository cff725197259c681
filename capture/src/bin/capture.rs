//! `capture`: make memory snapshots with the caching-allocator model (see `capture --help`).

use clap::Parser;
use memsnap_capture::capture_cli::{run, Args};

fn main() {
    let args = Args::parse();
    match run(&args) {
        Ok(out) => {
            if !args.quiet {
                for oom in out.ooms.iter().take(3) {
                    eprintln!("capture: out of memory: {oom}");
                }
                if out.ooms.len() > 3 {
                    eprintln!(
                        "capture: ... {} more out-of-memory errors",
                        out.ooms.len() - 3
                    );
                }
                eprint!("{}", out.summary.render());
                eprintln!("  written to       {}", args.output.display());
            }
        }
        Err(msg) => {
            eprintln!("capture: {msg}");
            std::process::exit(1);
        }
    }
}
