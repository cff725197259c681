//! Writing a command's text to standard output (a closed pipe is the reader's choice, not an
//! error: `CliError::stdout` marks it so `main` exits 0).

use std::io::Write;

use super::input::CliError;

pub fn print(text: &str) -> Result<(), CliError> {
    std::io::stdout()
        .lock()
        .write_all(text.as_bytes())
        .map_err(CliError::stdout)
}
