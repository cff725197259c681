//! `memsnap` on the real fixtures, checked against CPython's `pickle.load` of the same files.

use std::path::Path;

use memsnap_tests::{fixtures, memsnap_bin, python};

fn stdout_of(args: &[&str], stdin: Option<&[u8]>) -> Vec<u8> {
    let out = memsnap_bin::run(args, stdin);
    assert!(
        out.status.success(),
        "memsnap {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("valid JSON")
}

#[test]
fn stats_json_matches_python_on_every_fixture() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    for f in &files {
        let path = f.to_str().expect("UTF-8 path");
        let ours = json(&stdout_of(&["stats", "--json", path], None));
        let theirs = json(python::run("stats.py", &[f]).as_bytes());
        let (ours, theirs) = (
            ours.as_object().expect("object"),
            theirs.as_object().expect("object"),
        );
        let mut keys: Vec<&String> = ours.keys().collect();
        keys.sort();
        let mut expected: Vec<&String> = theirs.keys().collect();
        expected.sort();
        assert_eq!(keys, expected, "{path}: field names");
        for k in keys {
            assert_eq!(ours[k], theirs[k], "{path}: field {k}");
        }
    }
}

#[test]
fn convert_round_trips_through_cpython_on_every_fixture() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let dir = fixtures::scratch("convert");
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).expect("name");
        let out = dir.join(format!("{name}.converted.pickle"));
        let (i, o) = (f.to_str().expect("path"), out.to_str().expect("path"));
        stdout_of(&["convert", i, "-o", o], None);
        let verdict = python::run("roundtrip_equal.py", &[f, &out]);
        assert_eq!(verdict.trim(), "equal", "{name}");
        // Converting the converted file gives the same bytes (the writer is deterministic).
        let again = dir.join(format!("{name}.again.pickle"));
        stdout_of(&["convert", o, "-o", again.to_str().expect("path")], None);
        assert!(
            std::fs::read(&out).expect("read") == std::fs::read(&again).expect("read"),
            "{name}: second conversion differs"
        );
    }
}

#[test]
fn dash_reads_stdin_and_writes_stdout() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let f: &Path = &files[0];
    let bytes = std::fs::read(f).expect("read");
    let from_file = stdout_of(&["stats", "--json", f.to_str().expect("path")], None);
    let from_stdin = stdout_of(&["stats", "--json", "-"], Some(&bytes));
    assert_eq!(json(&from_file), json(&from_stdin));
    let converted = stdout_of(&["convert", "-", "-o", "-"], Some(&bytes));
    assert_eq!(&converted[..2], &[0x80, 4], "protocol 4 header");
    let reconverted = stdout_of(&["stats", "--json", "-"], Some(&converted));
    assert_eq!(json(&from_file), json(&reconverted));
}

#[test]
fn segments_lists_every_segment_and_block() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    for f in &files {
        let path = f.to_str().expect("path");
        let stats = json(&stdout_of(&["stats", "--json", path], None));
        let text = String::from_utf8(stdout_of(&["segments", path], None)).expect("UTF-8");
        let segs = text.lines().filter(|l| l.starts_with("segment 0x")).count();
        let blocks = text.lines().filter(|l| l.starts_with("  +0x")).count();
        assert_eq!(
            segs as u64,
            stats["segments"].as_u64().expect("int"),
            "{path}"
        );
        assert_eq!(
            blocks as u64,
            stats["blocks"].as_u64().expect("int"),
            "{path}"
        );
    }
}

#[test]
fn stats_human_output_names_devices_and_sizes() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let f = files
        .iter()
        .find(|p| p.ends_with("select-n-multidevice.pickle"))
        .unwrap_or(&files[0]);
    let path = f.to_str().expect("path");
    let stats = json(&stdout_of(&["stats", "--json", path], None));
    let text = String::from_utf8(stdout_of(&["stats", path], None)).expect("UTF-8");
    let reserved = stats["reserved_bytes"].as_u64().expect("int");
    assert!(
        text.contains(&format!("({reserved} bytes)")),
        "exact reserved bytes in:\n{text}"
    );
    assert!(text.contains("MiB") || text.contains("GiB"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("device ")), "{text}");
}
