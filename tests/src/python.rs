//! CPython, for the reference side of the comparisons (plain `pickle.load`, no torch).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `tests/py/<name>`
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("py").join(name)
}

/// Runs `python3 tests/py/<name> args...`; returns stdout, panicking with stderr on failure.
pub fn run(name: &str, args: &[&Path]) -> String {
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let out = Command::new(python)
        .arg(script(name))
        .args(args)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python3 {name} {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("python output is UTF-8")
}
