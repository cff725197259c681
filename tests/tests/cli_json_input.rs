//! JSON snapshots: the real fixtures written as JSON (and gzipped JSON) by CPython's `json`
//! (tests/py/to_json.py) read to the same numbers and trace as the pickle, and bad JSON gets a
//! reader error with a byte offset. Files above [`MAX_FILE`] are left out to keep the debug-build
//! test to seconds (the reader is the same for every size).

use memsnap_tests::{fixtures, memsnap_bin, python};

/// Largest pickle converted (ten of the sixteen fixtures, the legacy one among them).
const MAX_FILE: u64 = 1 << 20;

#[test]
fn json_and_gzipped_json_read_like_the_pickle() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let dir = fixtures::scratch("json-input");
    let small = files
        .iter()
        .filter(|f| std::fs::metadata(f).is_ok_and(|m| m.len() <= MAX_FILE));
    for f in small {
        let name = f.file_name().and_then(|n| n.to_str()).expect("name");
        let json = dir.join(format!("{name}.json"));
        let gz = dir.join(format!("{name}.json.gz"));
        python::run("to_json.py", &[f, &json]);
        python::run("to_json.py", &[f, &gz, std::path::Path::new("--gzip")]);
        let want = memsnap_bin::stdout(&["stats", "--json", f.to_str().unwrap()]);
        for j in [&json, &gz] {
            let got = memsnap_bin::stdout(&["stats", "--json", j.to_str().unwrap()]);
            assert_eq!(got, want, "{}", j.display());
        }
        // Stacks and the trace survive too: the trace listing is the same.
        let want = memsnap_bin::stdout(&["trace", f.to_str().unwrap()]);
        let got = memsnap_bin::stdout(&["trace", json.to_str().unwrap()]);
        assert_eq!(got, want, "{name}: trace of the JSON");
    }
}

#[test]
fn bad_json_says_where() {
    let dir = fixtures::scratch("json-bad");
    let path = dir.join("bad.json");
    std::fs::write(&path, br#"{"segments": [{"device": 0,]}"#).unwrap();
    let o = memsnap_bin::run(&["stats", path.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("at byte 27") && err.contains("JSON"), "{err}");
    assert!(
        !err.contains("not a snapshot"),
        "a JSON file is not called a stray: {err}"
    );
}

/// JSON nested past what the reader takes is refused as such, not called a stray file: the
/// reader's JSON limit (256 levels), and the limit on what it keeps of a key it does not know
/// (100).
#[test]
fn deep_json_says_how_deep() {
    let dir = fixtures::scratch("json-deep");
    for (levels, says) in [
        (300, "nested deeper than 256 levels"),
        (250, "nests deeper than 100 levels"),
    ] {
        let path = dir.join(format!("deep-{levels}.json"));
        let nested = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        let text = format!(r#"{{"segments": [], "device_traces": [[]], "nested": {nested}}}"#);
        std::fs::write(&path, text).unwrap();
        let o = memsnap_bin::run(&["stats", path.to_str().unwrap()], None);
        assert_eq!(o.status.code(), Some(1), "{levels} levels");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{levels} levels: {err}");
        assert!(!err.contains("not a snapshot"), "{levels} levels: {err}");
    }
}
