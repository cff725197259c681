//! The real PyTorch snapshots (read-only, never copied into the repo).

use std::path::{Path, PathBuf};

/// `$MEMSNAP_REAL_FIXTURES`, else `<workspace root>/../shared/fixtures/real`.
pub fn real_dir() -> PathBuf {
    match std::env::var_os("MEMSNAP_REAL_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => workspace_root().join("../shared/fixtures/real"),
    }
}

pub fn workspace_root() -> PathBuf {
    // tests/ is one level below the workspace root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Every snapshot file in the real fixtures folder, sorted; `None` (after a loud warning on
/// stderr) when the folder is absent, so the caller can skip.
pub fn real_fixtures() -> Option<Vec<PathBuf>> {
    let dir = real_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "WARNING: real fixtures not found at {}, skipping",
            dir.display()
        );
        return None;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("pickle" | "pkl" | "gz")
            )
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no snapshot files in {}", dir.display());
    Some(files)
}

/// A fresh scratch directory under the target dir for one test.
pub fn scratch(name: &str) -> PathBuf {
    let base = std::env::var_os("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("memsnap-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// A snapshot WITH pinned host memory, BUILT (no real fixture has any) by
/// tests/py/add_host_memory.py from the real `adam-small-settings.pickle`: three of its
/// segments and their trace entries copied into `host_segments` / `host_traces` at host-like
/// addresses. `None` (after a loud warning) when the real fixtures are absent.
pub fn built_host_memory(dir: &Path) -> Option<PathBuf> {
    let src = real_dir().join("adam-small-settings.pickle");
    if !src.exists() {
        eprintln!(
            "WARNING: {} not found, skipping the host-memory checks",
            src.display()
        );
        return None;
    }
    let out = dir.join("adam-small-with-host-memory.pickle");
    crate::python::run("add_host_memory.py", &[&src, &out]);
    Some(out)
}
