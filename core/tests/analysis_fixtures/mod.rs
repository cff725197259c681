//! Loading the real PyTorch snapshots for the analysis tests (read-only, never copied here).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use memsnap_core::snapshot::{read, Snapshot};

/// `$MEMSNAP_REAL_FIXTURES`, else `<workspace root>/../shared/fixtures/real`.
pub fn real_dir() -> PathBuf {
    match std::env::var_os("MEMSNAP_REAL_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real"),
    }
}

/// Every fixture, read; `None` after a loud warning when the folder is absent.
pub fn all() -> Option<Vec<(String, Snapshot)>> {
    let dir = real_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "WARNING: real fixtures not found at {}, skipping",
            dir.display()
        );
        return None;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("pickle" | "pkl")
            )
        })
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no fixtures in {}", dir.display());
    Some(
        paths
            .into_iter()
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                let snap = read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (name, snap)
            })
            .collect(),
    )
}

/// One fixture by file name; `None` after a warning when the folder is absent.
pub fn one(name: &str) -> Option<Snapshot> {
    let p = real_dir().join(name);
    let Ok(bytes) = std::fs::read(&p) else {
        eprintln!(
            "WARNING: real fixtures not found at {}, skipping",
            p.display()
        );
        return None;
    };
    Some(read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// Device indices with a trace or a segment.
pub fn devices(s: &Snapshot) -> Vec<usize> {
    s.devices()
        .into_iter()
        .filter(|d| *d >= 0)
        .map(|d| d as usize)
        .collect()
}
