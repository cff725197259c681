//! Pinned host memory in `memsnap stats` and `memsnap convert`, on a file BUILT from a real
//! fixture by tests/py/add_host_memory.py (no real fixture has host memory).

use memsnap_tests::{fixtures, memsnap_bin, python};

fn stdout_of(args: &[&str]) -> String {
    let out = memsnap_bin::run(args, None);
    assert!(
        out.status.success(),
        "memsnap {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn stats_counts_host_memory_apart_and_agrees_with_cpython() {
    let dir = fixtures::scratch("host-stats");
    let Some(built) = fixtures::built_host_memory(&dir) else {
        return;
    };
    let path = built.to_str().expect("UTF-8 path");
    let ours: serde_json::Value =
        serde_json::from_str(&stdout_of(&["stats", "--json", path])).expect("JSON");
    let theirs: serde_json::Value =
        serde_json::from_str(&python::run("stats.py", &[&built])).expect("JSON");
    assert_eq!(ours, theirs);
    let host = &ours["host"];
    assert_eq!(host["segments"], 3, "{host}");
    assert!(host["trace_entries"].as_u64().unwrap() > 0, "{host}");
    assert!(host["reserved_bytes"].as_u64().unwrap() > 0, "{host}");

    // The device totals are those of the file without host memory.
    let real = fixtures::real_dir().join("adam-small-settings.pickle");
    let plain: serde_json::Value = serde_json::from_str(&stdout_of(&[
        "stats",
        "--json",
        real.to_str().expect("UTF-8 path"),
    ]))
    .expect("JSON");
    assert_eq!(plain["host"], serde_json::Value::Null);
    for k in [
        "segments",
        "reserved_bytes",
        "allocated_bytes",
        "trace_entries",
        "devices",
    ] {
        assert_eq!(ours[k], plain[k], "{k}");
    }

    let text = stdout_of(&["stats", path]);
    let line = format!(
        "host (pinned, not in the total): 3 segments, {} blocks, {} trace entries",
        host["blocks"], host["trace_entries"]
    );
    assert!(text.contains(&line), "{text}");
    assert!(
        text.contains(&format!("({} bytes)", host["reserved_bytes"])),
        "{text}"
    );
}

#[test]
fn convert_keeps_host_memory() {
    let dir = fixtures::scratch("host-convert");
    let Some(built) = fixtures::built_host_memory(&dir) else {
        return;
    };
    let out = dir.join("converted.pickle");
    let (i, o) = (built.to_str().expect("path"), out.to_str().expect("path"));
    stdout_of(&["convert", i, "-o", o]);
    let verdict = python::run("roundtrip_equal.py", &[&built, &out]);
    assert_eq!(verdict.trim(), "equal");
}
