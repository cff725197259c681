//! `memsnap phases --json` against CPython's reading of the same files (tests/py/phases.py,
//! from `pickle.load`): which phases, their nesting, the trace entries each holds, the allocs and
//! frees in it and the bytes asked for, the repairs counted, and each phase's memory figures
//! (peak allocated and where, peak reserved, block bytes allocated and freed, net change).
//!
//! Real: the four shared fixtures with `external_annotations` (and every other real fixture,
//! which must say it has none). Built (not recorded by PyTorch): the bundled example (made by
//! `capture`) given nested, unmatched, unclosed and out-of-order marks by core's writer.

use std::path::Path;
use std::sync::Arc;

use memsnap_core::snapshot::{self, Value};
use memsnap_tests::{fixtures, memsnap_bin, python, web::page};

const WITH_PHASES: [&str; 4] = [
    "cs336-a-2.7b-forward.pickle",
    "adam-small-settings.pickle",
    "cs336-c-medium512-training.pickle",
    "cs336-d-fullstep.pickle",
];

/// Each phase's memory figures, compared as they are.
const FIGURES: [&str; 6] = [
    "peak_allocated",
    "peak_index",
    "peak_reserved",
    "allocated_bytes",
    "freed_bytes",
    "net_bytes",
];

const COMPARED: [&str; 13] = [
    "name",
    "start_us",
    "end_us",
    "depth",
    "parent",
    "first",
    "end",
    "allocs",
    "requested_bytes",
    "frees",
    "unmatched_ends",
    "unclosed",
    "out_of_order",
];

fn ours(path: &Path) -> serde_json::Value {
    let o = memsnap_bin::run(&["phases", "--json", path.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Checks every device of `path` against the reference; returns the phases found in all.
fn check(path: &Path) -> usize {
    let ours = ours(path);
    let theirs: serde_json::Value =
        serde_json::from_str(&python::run("phases.py", &[path])).unwrap();
    let mut found = 0;
    for d in ours["devices"].as_array().unwrap() {
        let device = d["device"].to_string();
        let Some(t) = theirs.get(&device) else {
            assert!(
                d["none"].is_string() && d["phases"].as_array().unwrap().is_empty(),
                "{}: device {device} has no phases for CPython but memsnap found {d}",
                path.display()
            );
            continue;
        };
        assert!(d["none"].is_null(), "{}: {}", path.display(), d["none"]);
        for key in ["unmatched_ends", "unclosed", "out_of_order", "unreadable"] {
            assert_eq!(d[key], t[key], "{}: device {device} {key}", path.display());
        }
        let (a, b) = (
            d["phases"].as_array().unwrap(),
            t["phases"].as_array().unwrap(),
        );
        assert_eq!(
            a.len(),
            b.len(),
            "{}: device {device} phases",
            path.display()
        );
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            for key in COMPARED.iter().take(10).chain(&FIGURES) {
                assert_eq!(
                    x[key],
                    y[key],
                    "{}: device {device} phase {i} ({}) {key}",
                    path.display(),
                    x["name"]
                );
            }
            // memsnap's own figures hold together: the net change is what was allocated
            // less what was freed, and blocks are never smaller than what was asked for.
            let num = |k: &str| x[k].as_i64().unwrap();
            assert_eq!(
                num("net_bytes"),
                num("allocated_bytes") - num("freed_bytes"),
                "{}: phase {i}",
                path.display()
            );
            assert!(num("allocated_bytes") >= num("requested_bytes"));
            assert!(num("peak_allocated") <= num("peak_reserved") || num("first") == num("end"));
        }
        found += a.len();
    }
    found
}

#[test]
fn phases_of_real_fixtures_match_python() {
    let Some(all) = fixtures::real_fixtures() else {
        return;
    };
    for path in &all {
        let name = path.file_name().unwrap().to_str().unwrap();
        let found = check(path);
        assert_eq!(
            found > 0,
            WITH_PHASES.contains(&name),
            "{name}: {found} phases"
        );
    }
    // The compile phases of the 2.7b forward pass: 901 START/END pairs, all matched.
    let j = ours(&fixtures::real_dir().join(WITH_PHASES[0]));
    let d = &j["devices"][0];
    assert_eq!(d["phases"].as_array().unwrap().len(), 901);
    assert!(d["phases"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["compile"] == true));
    assert_eq!(d["warnings"], serde_json::json!([]));
}

#[test]
fn the_peaks_phase_is_named() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let path = fixtures::real_dir().join("adam-small-settings.pickle");
    let j = ours(&path);
    let d = &j["devices"][0];
    let peak = d["peak"]["index"].as_u64().unwrap();
    let i = d["peak"]["phase"]
        .as_u64()
        .expect("the peak is inside the step") as usize;
    let p = &d["phases"][i];
    assert!(p["first"].as_u64().unwrap() <= peak && peak < p["end"].as_u64().unwrap());
    assert_eq!(p["peak_allocated"], d["peak"]["allocated"]);
    let text = memsnap_bin::stdout(&["phases", path.to_str().unwrap()]);
    assert!(text.contains("in Optimizer.step#AdamW.step"), "{text}");
}

fn mark(stage: &str, name: &str, time_us: i64) -> Value {
    let s = |x: &str| Value::Str(Arc::from(x));
    Value::Dict(Arc::new(vec![
        (s("stage"), s(stage)),
        (s("name"), s(name)),
        (s("device"), Value::Int(0)),
        (s("time_us"), Value::Int(time_us)),
    ]))
}

#[test]
fn built_nested_and_unmatched_marks_match_python() {
    let root = fixtures::workspace_root();
    let mut snap = page::load(&root.join("app/assets/example.pickle"));
    let t0 = snap.trace(0)[0].time_us().expect("the example has times");
    let at = |entry: i64| t0 + entry;
    snap.external_annotations = Some(Value::List(Arc::new(vec![
        // Ended with no START in the file: open from the trace's start.
        mark("END", "warmup", at(5)),
        mark("START", "step", at(10)),
        mark("START", "forward", at(12)),
        mark("END", "forward", at(30)),
        mark("START", "backward", at(31)),
        // Written after a later mark: sorted into place.
        mark("START", "late", at(20)),
        mark("END", "backward", at(50)),
        mark("END", "step", at(55)),
        // Never ended: open to the dump.
        mark("START", "optimizer", at(60)),
        // Not a mark at all.
        Value::Dict(Arc::new(vec![(
            Value::Str(Arc::from("stage")),
            Value::Int(3),
        )])),
    ])));
    let dir = fixtures::scratch("cli-phases");
    let path = dir.join("example-phases.pickle");
    std::fs::write(&path, snapshot::write(&snap)).unwrap();
    assert_eq!(check(&path), 6);
    let j = ours(&path);
    let d = &j["devices"][0];
    assert_eq!(
        (
            d["unmatched_ends"].as_u64(),
            d["unclosed"].as_u64(),
            d["out_of_order"].as_u64(),
            d["unreadable"].as_u64()
        ),
        (Some(1), Some(1), Some(1), Some(1))
    );
    assert_eq!(d["warnings"].as_array().unwrap().len(), 4);
    let text = memsnap_bin::stdout(&["phases", path.to_str().unwrap()]);
    assert!(
        text.contains("warning: 1 END mark(s) without a START"),
        "{text}"
    );
    assert!(text.contains("    late"), "{text}");
}

/// A scenario whose `phase` / `end_phase` steps nest, repeat, end what never started and
/// start what never ends: `capture` writes the marks, and CPython and memsnap read them alike.
const MARKED: &str = r#"
[scenario]
name = "marked"
capacity = "8GB"

[[step]]
alloc = "weights"
size = "64MiB"

[[step]]
end_phase = "setup"

[[step]]
repeat = 3
var = "i"

[[step]]
phase = "step{i}"

[[step]]
phase = "forward"

[[step]]
alloc = "act{i}"
size = "(i + 1) * 24MiB"

[[step]]
end_phase = "forward"

[[step]]
phase = "backward"

[[step]]
alloc = "grad{i}"
size = "3MiB"

[[step]]
free = "act{i}"

[[step]]
end_phase = "step{i}"

[[step]]
end = true

[[step]]
phase = "optimizer"

[[step]]
alloc = "state"
size = "128MiB"
"#;

#[test]
fn capture_written_marks_match_python() {
    let dir = fixtures::scratch("cli-phases-capture");
    let toml = dir.join("marked.toml");
    std::fs::write(&toml, MARKED).unwrap();
    let path = dir.join("marked.pickle");
    memsnap_tests::built::capture(&["--scenario", toml.to_str().unwrap()], &path);
    // 1 END without a START, 3 steps each holding forward and backward (backward is closed
    // by its step's END), and the optimizer never ended.
    assert_eq!(check(&path), 1 + 3 * 3 + 1);
    let j = ours(&path);
    let d = &j["devices"][0];
    assert_eq!(
        (d["unmatched_ends"].as_u64(), d["unclosed"].as_u64()),
        (Some(1), Some(1))
    );
    let phases = d["phases"].as_array().unwrap();
    let named = |n: &str| phases.iter().find(|p| p["name"] == n).unwrap();
    let step2 = named("step2");
    assert_eq!(step2["depth"], 0);
    // Step 2's forward allocates 72 MiB and backward 3 MiB while freeing the 72.
    let forward = phases
        .iter()
        .filter(|p| p["name"] == "forward")
        .nth(2)
        .unwrap();
    assert_eq!(forward["depth"], 1);
    assert_eq!(forward["allocated_bytes"], 72 << 20);
    assert_eq!(step2["net_bytes"], 3 << 20);
    assert_eq!(named("optimizer")["end_us"], serde_json::Value::Null);
}

#[test]
fn a_file_without_annotations_says_so() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let path = fixtures::real_dir().join("select-n-multidevice.pickle");
    let text = memsnap_bin::stdout(&["phases", path.to_str().unwrap()]);
    assert!(text.contains("no phases:"), "{text}");
}

/// DuckDB's rows of a `-- query: NAME` block of docs/parquet-schema.md over `dataset`
/// (capture/tests/py/parquet_check.py), or `None` after a loud warning without duckdb.
fn duckdb_query(dataset: &Path, name: &str) -> Option<Vec<serde_json::Value>> {
    let root = fixtures::workspace_root();
    let out = std::process::Command::new("python3")
        .arg(root.join("capture/tests/py/parquet_check.py"))
        .arg(dataset)
        .arg(root.join("docs/parquet-schema.md"))
        .output()
        .expect("run python3");
    if out.status.code() == Some(3) {
        eprintln!("WARNING: python3 has no duckdb module (scripts/setup.sh installs it): skipping the DuckDB check");
        return None;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Some(v["queries"][name].as_array().unwrap().clone())
}

#[test]
fn the_parquet_phases_table_gives_each_ranks_peak_phase() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let dir = fixtures::scratch("cli-phases-parquet");
    let out = dir.join("parquet");
    let files = [
        fixtures::real_dir().join("adam-small-settings.pickle"),
        fixtures::real_dir().join("cs336-d-fullstep.pickle"),
        fixtures::real_dir().join("cs336-a-2.7b-forward.pickle"),
    ];
    for (rank, f) in files.iter().enumerate() {
        let o = memsnap_bin::run(
            &[
                "export",
                f.to_str().unwrap(),
                "--parquet",
                out.to_str().unwrap(),
                "--rank",
                &rank.to_string(),
            ],
            None,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let Some(rows) = duckdb_query(&out, "peak-by-phase") else {
        return;
    };
    // What `memsnap phases` says of each file's peak: rank -> phase path.
    let mut expected = Vec::new();
    for (rank, f) in files.iter().enumerate() {
        let j = ours(f);
        let d = &j["devices"][0];
        if let Some(i) = d["peak"]["phase"].as_u64() {
            let p = &d["phases"][i as usize];
            expected.push(serde_json::json!([
                rank,
                0,
                d["peak"]["allocated"],
                i,
                p["path"],
                p["peak_allocated"],
                p["allocated_bytes"],
                p["freed_bytes"],
                p["net_bytes"]
            ]));
        }
    }
    // The full step peaks outside both of its phases; the other two inside one.
    assert_eq!(expected.len(), 2, "{expected:?}");
    assert_eq!(rows, expected);
}
