//! The malformed-input table (tests/malformed/cases.tsv) through the `memsnap` binary:
//! errors are one `memsnap: <file>: ...` line with exit 1 (never a panic, exit 101);
//! inconsistent files read with `memsnap: warning: <file>: ...` lines; clean files say nothing.

use std::path::{Path, PathBuf};
use std::process::Output;

use memsnap_tests::memsnap_bin;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("malformed")
}

fn cases() -> Vec<(String, String, Vec<String>)> {
    let text = std::fs::read_to_string(dir().join("cases.tsv")).expect("read cases.tsv");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            assert_eq!(c.len(), 3, "cases.tsv line {l:?}");
            let words = match c[2] {
                "-" => vec![],
                w => w.split('|').map(String::from).collect(),
            };
            (c[0].to_string(), c[1].to_string(), words)
        })
        .collect()
}

fn check(path: &Path, outcome: &str, words: &[String], out: &Output) -> Result<(), String> {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    if code == Some(101) || stderr.contains("panicked") {
        return Err(format!("panicked (exit {code:?}): {stderr}"));
    }
    let name = path.display().to_string();
    let lacks =
        |text: &str| -> Vec<&String> { words.iter().filter(|w| !text.contains(*w)).collect() };
    match outcome {
        "error" => {
            let prefix = format!("memsnap: {name}: ");
            if code != Some(1) || stderr.lines().count() != 1 || !stderr.starts_with(&prefix) {
                return Err(format!(
                    "expected one '{prefix}...' line and exit 1, got exit {code:?}: {stderr}"
                ));
            }
            let missing = lacks(&stderr);
            if !missing.is_empty() {
                return Err(format!("{stderr:?} lacks {missing:?}"));
            }
        }
        "warn" => {
            let prefix = format!("memsnap: warning: {name}: ");
            if code != Some(0)
                || stderr.is_empty()
                || !stderr.lines().all(|l| l.starts_with(&prefix))
            {
                return Err(format!(
                    "expected '{prefix}...' lines and exit 0, got exit {code:?}: {stderr}"
                ));
            }
            let missing = lacks(&stderr);
            if !missing.is_empty() {
                return Err(format!("{stderr:?} lacks {missing:?}"));
            }
        }
        "ok" => {
            if code != Some(0) || !stderr.is_empty() {
                return Err(format!(
                    "expected exit 0 and no stderr, got exit {code:?}: {stderr}"
                ));
            }
        }
        other => return Err(format!("unknown outcome {other:?}")),
    }
    Ok(())
}

#[test]
fn malformed_table_through_the_cli() {
    let cases = cases();
    assert!(cases.len() >= 60, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for (file, outcome, words) in &cases {
        let path = dir().join(file);
        let arg = path.to_str().expect("UTF-8 path");
        let out = memsnap_bin::run(&["stats", arg], None);
        if let Err(e) = check(&path, outcome, words, &out) {
            failures.push(format!("{file}: {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
