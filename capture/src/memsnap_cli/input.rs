//! Loading a snapshot named on the command line (`-` = stdin), and the CLI's error type.

use std::io::Read;
use std::path::Path;

use memsnap_core::snapshot::{read_with, starts_like_a_snapshot, validate, Frames, Snapshot};

use super::progress::Reading;

/// Largest input read (the reader's gzip bound is the same).
const MAX_INPUT: u64 = 4 << 30;

/// One line for the user: `<what>: <message>` (what = the file, or `<stdin>`/`<stdout>`).
#[derive(Debug)]
pub struct CliError {
    pub what: String,
    pub message: String,
    /// Stdout was closed by the reader (`| head`): nothing to report.
    pub closed_pipe: bool,
}

impl CliError {
    pub fn new(what: impl Into<String>, message: impl std::fmt::Display) -> CliError {
        CliError {
            what: what.into(),
            message: message.to_string(),
            closed_pipe: false,
        }
    }
}

impl CliError {
    /// A failed write to stdout. A closed pipe (`memsnap segments f | head`) is not reported:
    /// [`super::main`] exits quietly for it.
    pub fn stdout(e: std::io::Error) -> CliError {
        let closed_pipe = e.kind() == std::io::ErrorKind::BrokenPipe;
        CliError {
            closed_pipe,
            ..CliError::new("<stdout>", e)
        }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.message)
    }
}

fn display_name(path: &str) -> &str {
    if path == "-" {
        "<stdin>"
    } else {
        path
    }
}

/// A file's bytes: mapped when it is a regular file, read otherwise (stdin, a pipe, a device).
pub enum Bytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Read(v) => v,
        }
    }
}

/// The raw bytes of `path`, refusing a file over the input limit (4 GiB) before reading it.
pub fn bytes(path: &str) -> Result<Bytes, CliError> {
    let name = display_name(path);
    let too_big = |n: u64| {
        CliError::new(
            name,
            format!(
                "{n} bytes or more, larger than the {} GiB memsnap reads",
                MAX_INPUT >> 30
            ),
        )
    };
    let mut buf = Vec::new();
    if path == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_INPUT + 1)
            .read_to_end(&mut buf)
            .map_err(|e| CliError::new(name, e))?;
    } else {
        let file = std::fs::File::open(Path::new(path)).map_err(|e| CliError::new(name, e))?;
        let meta = file.metadata().map_err(|e| CliError::new(name, e))?;
        if meta.is_dir() {
            return Err(CliError::new(name, "is a directory, not a snapshot file"));
        }
        if meta.len() > MAX_INPUT {
            return Err(too_big(meta.len()));
        }
        if meta.is_file() && meta.len() > 0 {
            // Mapping the file spares the kernel's copy into a fresh buffer and that buffer's
            // page faults: on a 3.9 MB file, `memsnap stats` took 1,462 page faults against
            // 2,365 and 5.9 ms of system time against 8.8-10.7 (docs/performance.md).
            // SAFETY: the map is only read. Another process truncating the file while it is
            // read would end this one (SIGBUS), the trade ripgrep makes for files it searches.
            // Where mapping fails, the file is read.
            if let Ok(map) = unsafe { memmap2::Mmap::map(&file) } {
                return Ok(Bytes::Mapped(map));
            }
        }
        file.take(MAX_INPUT + 1)
            .read_to_end(&mut buf)
            .map_err(|e| CliError::new(name, e))?;
    }
    if buf.len() as u64 > MAX_INPUT {
        return Err(too_big(buf.len() as u64));
    }
    Ok(Bytes::Read(buf))
}

/// Reads and parses the snapshot at `path` (`-` = stdin). Inconsistencies that do not stop
/// reading (`validate`) go to stderr as `memsnap: warning: <file>: ...` lines.
/// A terminal gets a progress bar on stderr while a large file is parsed.
pub fn load(path: &str) -> Result<Snapshot, CliError> {
    load_with(path, true, Frames::Keep).map(|(snap, _)| snap)
}

/// [`load`] for a command that shows no stack: every `frames` is left out (see [`Frames::Skip`];
/// it accepts and refuses what [`load`] does, with the same message).
pub fn load_without_frames(path: &str) -> Result<Snapshot, CliError> {
    load_with(path, true, Frames::Skip).map(|(snap, _)| snap)
}

/// [`load`] without the reading bar (commands over many files draw one bar for the set), with
/// the number of bytes read (the file's size; compressed size when gzipped). The bytes are
/// dropped before returning: only the snapshot stays in memory.
pub fn load_sized(path: &str) -> Result<(Snapshot, u64), CliError> {
    load_with(path, false, Frames::Keep)
}

fn load_with(path: &str, bar: bool, frames: Frames) -> Result<(Snapshot, u64), CliError> {
    let data = bytes(path)?;
    let snap = parse_with(path, &data, bar, frames)?;
    Ok((snap, data.len() as u64))
}

/// Parses `data`, the bytes of the file `path` names, as [`load`] does (`bar`: a progress bar
/// on a terminal).
pub fn parse(path: &str, data: &[u8], bar: bool) -> Result<Snapshot, CliError> {
    parse_with(path, data, bar, Frames::Keep)
}

fn parse_with(path: &str, data: &[u8], bar: bool, frames: Frames) -> Result<Snapshot, CliError> {
    let mut reading = bar.then(|| Reading::new(data.len() as u64, display_name(path)));
    let snap = read_with(data, frames, &mut |done| {
        if let Some(r) = reading.as_mut() {
            r.set(done)
        }
    })
    .map_err(|e| CliError::new(display_name(path), read_error(data, e)))?;
    drop(reading);
    for w in validate(&snap) {
        eprintln!("memsnap: warning: {}: {w}", display_name(path));
    }
    Ok(snap)
}

/// The reader's error, with a plain word when the bytes are not even a pickle, gzip or JSON
/// data: a stray file in a directory of snapshots. (The reader already says so for an empty
/// file.)
fn read_error(data: &[u8], e: impl std::fmt::Display) -> String {
    if data.is_empty() || starts_like_a_snapshot(data) {
        e.to_string()
    } else {
        format!("{e} (this is not a snapshot: neither a pickle, gzip nor JSON data)")
    }
}

/// The devices a command looks at: `--device N` (which must be in the file), or every device
/// of the file. Devices are the file's segment `device` keys and trace indices.
pub fn devices(path: &str, snap: &Snapshot, asked: Option<usize>) -> Result<Vec<usize>, CliError> {
    let all: Vec<usize> = snap
        .devices()
        .into_iter()
        .filter_map(|d| usize::try_from(d).ok())
        .collect();
    match asked {
        None => Ok(all),
        Some(d) if all.contains(&d) => Ok(vec![d]),
        Some(d) => {
            let have: Vec<String> = all.iter().map(|d| d.to_string()).collect();
            let have = if have.is_empty() {
                "none".to_string()
            } else {
                have.join(", ")
            };
            Err(CliError::new(
                display_name(path),
                format!("no device {d} in this file (devices: {have})"),
            ))
        }
    }
}
