//! Helpers shared by the capture tests: running the binary, temp dirs, fixtures, CPython.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn capture(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capture"))
        .args(args)
        .output()
        .expect("the capture binary runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh directory for one test's files.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memsnap-capture-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The real fixtures folder, or `None` (with a loud warning) when it is absent.
pub fn real_fixtures() -> Option<PathBuf> {
    let dir = match std::env::var_os("MEMSNAP_REAL_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "WARNING: real fixtures not found at {}, skipping",
            dir.display()
        );
        None
    }
}

/// CPython's view of a snapshot file: (segments, blocks, total reserved bytes, trace entries),
/// or `None` with a warning when python3 is missing.
pub fn cpython_counts(path: &Path) -> Option<(usize, usize, u64, usize)> {
    const SCRIPT: &str = "import pickle,sys\n\
d = pickle.load(open(sys.argv[1], 'rb'))\n\
segs = d['segments']\n\
print(len(segs), sum(len(s['blocks']) for s in segs), sum(s['total_size'] for s in segs), sum(len(t) for t in d['device_traces']))\n";
    let out = match Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(path)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            eprintln!("WARNING: python3 not runnable ({e}), skipping the CPython check");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "CPython could not unpickle {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Vec<u64> = text
        .split_whitespace()
        .map(|t| t.parse().expect("numbers"))
        .collect();
    Some((v[0] as usize, v[1] as usize, v[2], v[3] as usize))
}
