//! `memsnap convert IN -o OUT`: reads any snapshot memsnap reads (pickle protocol 0–5,
//! gzipped) and writes a protocol-4 pickle with the same data, which PyTorch's MemoryViz.js
//! opens (it cannot read protocol 5, which Python 3.14 writes by default).

use std::io::Write;

use memsnap_core::snapshot::write;

use super::input::{load, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Input snapshot; `-` reads stdin.
    pub input: String,
    /// Output file; `-` writes stdout.
    #[arg(short, long)]
    pub output: String,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snapshot = load(&args.input)?;
    let bytes = write(&snapshot);
    if args.output == "-" {
        let mut out = std::io::stdout().lock();
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .map_err(CliError::stdout)
    } else {
        std::fs::write(&args.output, &bytes).map_err(|e| CliError::new(&args.output, e))
    }
}
