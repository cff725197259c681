//! The built `memsnap` and `capture` binaries, for CLI tests and for tests that make snapshots.
//!
//! Cargo exposes `CARGO_BIN_EXE_*` only to tests of the package that owns the binary, so this
//! crate finds it next to its own test executable (`target/<profile>/deps/..` ->
//! `target/<profile>/memsnap`) after asking cargo to build it once per test process (a no-op
//! when it is up to date). `$MEMSNAP_BIN` overrides both.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

pub fn path() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| locate("memsnap", "MEMSNAP_BIN")).clone()
}

/// The built `capture` binary (`$CAPTURE_BIN` overrides), found and built as `memsnap` is.
pub fn capture_path() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| locate("capture", "CAPTURE_BIN")).clone()
}

fn locate(name: &str, env: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env) {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test> -> target/<profile>
    let profile_dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("test executable is in target/<profile>/deps")
        .to_path_buf();
    let target_dir = profile_dir.parent().expect("target dir").to_path_buf();
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet", "-p", "memsnap-capture", "--bin", name])
        .arg("--target-dir")
        .arg(&target_dir)
        .current_dir(crate::fixtures::workspace_root());
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("run cargo build");
    assert!(status.success(), "cargo build of {name} failed");
    let bin = profile_dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.exists(), "{name} not found at {}", bin.display());
    bin
}

/// Runs `memsnap args...` with `stdin` bytes (or no stdin).
pub fn run(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(path());
    cmd.args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().expect("spawn memsnap");
    if let Some(input) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin pipe");
        // The CLI may exit before reading everything (bad input): ignore a broken pipe.
        let _ = pipe.write_all(input);
    }
    child.wait_with_output().expect("wait for memsnap")
}

/// Runs `memsnap args...` (no stdin), asserts it succeeded (naming its stderr otherwise) and
/// returns its standard output.
pub fn stdout(args: &[&str]) -> String {
    stdout_with(args, None)
}

/// [`stdout`] with `stdin` bytes (or no stdin).
pub fn stdout_with(args: &[&str], stdin: Option<&[u8]>) -> String {
    let o = run(args, stdin);
    assert!(
        o.status.success(),
        "memsnap {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("memsnap writes UTF-8")
}
