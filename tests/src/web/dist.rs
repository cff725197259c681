//! Where the built site is: `$MEMSNAP_DIST`, else `<workspace root>/dist`.

use std::path::PathBuf;

use crate::fixtures::workspace_root;

/// The dist/ folder with an index.html; `None` after a loud warning when there is none
/// (scripts/test.sh always builds it and sets MEMSNAP_DIST, so there it never skips).
pub fn dist_dir() -> Option<PathBuf> {
    let (dir, from_env) = match std::env::var_os("MEMSNAP_DIST") {
        Some(d) => (PathBuf::from(d), true),
        None => (workspace_root().join("dist"), false),
    };
    if dir.join("index.html").is_file() {
        return Some(dir);
    }
    if from_env {
        panic!(
            "MEMSNAP_DIST={} has no index.html: build it with `trunk build --release --offline`",
            dir.display()
        );
    }
    eprintln!(
        "WARNING: built site not found at {} (MEMSNAP_DIST unset): skipping the page test; \
         run scripts/test.sh, or `trunk build --release --offline` then set MEMSNAP_DIST",
        dir.display()
    );
    None
}
