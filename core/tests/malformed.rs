//! The malformed-input table (tests/malformed/cases.tsv, made by scripts/gen/gen-malformed.py):
//! each hostile or inconsistent file reads to the stated error, or reads with the stated
//! warnings. Also: every cut of a valid file is a "truncated" error, and memo bombs stay shared.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memsnap_core::snapshot::{read, validate, write, Value};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/malformed")
}

fn load(name: &str) -> Vec<u8> {
    let p = dir().join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

struct Case {
    file: String,
    outcome: String,
    words: Vec<String>,
}

fn cases() -> Vec<Case> {
    let text = String::from_utf8(load("cases.tsv")).expect("cases.tsv is UTF-8");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(
                cols.len(),
                3,
                "cases.tsv line {l:?} needs 3 tab-separated columns"
            );
            Case {
                file: cols[0].to_string(),
                outcome: cols[1].to_string(),
                words: match cols[2] {
                    "-" => vec![],
                    w => w.split('|').map(String::from).collect(),
                },
            }
        })
        .collect()
}

/// What reading one case gave, or why it does not match the table.
fn check(case: &Case) -> Result<(), String> {
    let bytes = load(&case.file);
    let got = read(&bytes);
    match (case.outcome.as_str(), got) {
        ("error", Err(e)) => {
            let msg = e.to_string();
            let missing: Vec<&String> = case.words.iter().filter(|w| !msg.contains(*w)).collect();
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("error {msg:?} lacks {missing:?}"))
            }
        }
        ("error", Ok(_)) => Err("read succeeded, expected an error".into()),
        (_, Err(e)) => Err(format!("read failed: {e}")),
        ("ok", Ok(snap)) => {
            let w = validate(&snap);
            if w.is_empty() {
                round_trip(&snap)
            } else {
                Err(format!("expected no warning, got {w:?}"))
            }
        }
        ("warn", Ok(snap)) => {
            let msgs: Vec<String> = validate(&snap).iter().map(|w| w.message.clone()).collect();
            let missing: Vec<&String> = case
                .words
                .iter()
                .filter(|w| !msgs.iter().any(|m| m.contains(*w)))
                .collect();
            if msgs.is_empty() || !missing.is_empty() {
                Err(format!("warnings {msgs:?} lack {missing:?}"))
            } else {
                round_trip(&snap)
            }
        }
        (other, _) => Err(format!("unknown outcome {other:?} in cases.tsv")),
    }
}

/// Files that read must also write and read back to the same bytes.
fn round_trip(snap: &memsnap_core::snapshot::Snapshot) -> Result<(), String> {
    let once = write(snap);
    let again = read(&once).map_err(|e| format!("written file does not read back: {e}"))?;
    if write(&again) == once {
        Ok(())
    } else {
        Err("write(read(write(x))) != write(x)".into())
    }
}

#[test]
fn malformed_table() {
    let cases = cases();
    assert!(cases.len() >= 60, "only {} cases in cases.tsv", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| check(c).err().map(|e| format!("{}: {e}", c.file)))
        .collect();
    assert!(
        failures.is_empty(),
        "{} case(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn table_covers_every_file() {
    let listed: Vec<String> = cases().into_iter().map(|c| c.file).collect();
    for entry in std::fs::read_dir(dir()).expect("tests/malformed exists") {
        let name = entry
            .expect("dir entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if name != "cases.tsv" {
            assert!(listed.contains(&name), "{name} is not in cases.tsv");
        }
    }
}

#[test]
fn every_cut_of_a_valid_file_is_a_truncation_error() {
    for p in 0..=5 {
        let name = format!("valid-protocol-{p}.pickle");
        let bytes = load(&name);
        for n in 0..bytes.len() {
            match read(&bytes[..n]) {
                Ok(_) => panic!("{name} cut to {n} bytes read fine"),
                Err(e) => {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("truncated") || (n == 0 && msg.contains("empty input")),
                        "{name} cut to {n} bytes: {msg}"
                    );
                }
            }
        }
    }
}

/// Depth of `[[..[1]..]]` whose two items at every level are one shared allocation.
fn shared_depth(v: &Value) -> usize {
    match v {
        Value::List(items) if items.len() == 2 => match (&items[0], &items[1]) {
            (Value::List(a), Value::List(b)) if Arc::ptr_eq(a, b) => 1 + shared_depth(&items[0]),
            _ => 0,
        },
        _ => 0,
    }
}

#[test]
fn memo_bomb_stays_shared() {
    let bytes = load("memo-bomb-2-pow-60.pickle");
    let snap = read(&bytes).expect("the bomb is valid data");
    let bomb = snap
        .extra
        .iter()
        .find(|(k, _)| &**k == "bomb")
        .map(|(_, v)| v)
        .expect("the 'bomb' key is kept");
    // 2^60 leaves are 60 levels of one shared list each: memory is linear in the file.
    assert_eq!(shared_depth(bomb), 60);
    let out = write(&snap);
    assert!(
        out.len() < 4 * bytes.len(),
        "written bomb is {} bytes",
        out.len()
    );
}

/// The real fixtures are consistent: validate() must not cry wolf on files PyTorch wrote.
#[test]
fn real_fixtures_have_no_warnings() {
    let dir = std::env::var_os("MEMSNAP_REAL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real")
        });
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "WARNING: real fixtures not found at {}, skipping",
            dir.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pickle" || x == "pkl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    let mut bad = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let snap = read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for w in validate(&snap) {
            bad.push(format!("{}: {w}", f.display()));
        }
    }
    assert!(
        bad.is_empty(),
        "{} warning(s):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// A protocol-4 pickle of `{"segments": [], <extra pairs>}`; `pair(i)` writes key and value.
fn wide_dict(n: usize, pair: impl Fn(usize, &mut Vec<u8>)) -> Vec<u8> {
    let mut b = vec![0x80, 4, b'}', b'(', 0x8c, 8];
    b.extend_from_slice(b"segments");
    b.push(b']');
    for i in 0..n {
        pair(i, &mut b);
    }
    b.extend_from_slice(b"u.");
    b
}

fn short_str(s: &str, b: &mut Vec<u8>) {
    b.push(0x8c);
    b.push(s.len() as u8);
    b.extend_from_slice(s.as_bytes());
}

/// 100k unknown keys in one dict were quadratic (minutes): now linear, all kept, and repeated
/// keys still fold as in Python (first position, last value).
#[test]
fn wide_dicts_read_in_linear_time() {
    let n = 100_000;
    let bytes = wide_dict(n, |i, b| {
        short_str(&format!("k{i}"), b);
        b.push(b'J');
        b.extend_from_slice(&(i as i32).to_le_bytes());
    });
    let snap = read(&bytes).expect("wide dict reads");
    assert_eq!(snap.extra.len(), n);
    assert_eq!(snap.extra[n - 1].1, Value::Int(n as i64 - 1));

    let repeated = wide_dict(40, |i, b| {
        short_str(&format!("k{}", i % 20), b);
        b.extend_from_slice(&[b'K', i as u8]);
    });
    let snap = read(&repeated).expect("repeated keys read");
    let got: Vec<(String, Value)> = snap
        .extra
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let want: Vec<(String, Value)> = (0..20)
        .map(|i| (format!("k{i}"), Value::Int(i + 20)))
        .collect();
    assert_eq!(got, want);
}

/// 20k tuple keys in one generic dict were compared pairwise (quadratic): now kept as they are.
#[test]
fn tuple_keys_are_not_compared_pairwise() {
    let n = 20_000;
    let mut b = vec![0x80, 4, b'}', b'(', 0x8c, 8];
    b.extend_from_slice(b"segments");
    b.extend_from_slice(b"]");
    short_str("t", &mut b);
    b.extend_from_slice(b"}(");
    for i in 0..n {
        b.push(b'J');
        b.extend_from_slice(&(i as i32).to_le_bytes());
        b.extend_from_slice(&[0x85, b'N']); // (i,): None
    }
    b.extend_from_slice(b"uu.");
    let snap = read(&b).expect("tuple keys read");
    let t = snap.extra.iter().find(|(k, _)| &**k == "t").map(|(_, v)| v);
    assert_eq!(t.and_then(|v| v.as_dict()).map(|d| d.len()), Some(n));
}

/// Inputs over the stated limit are refused up front with a clear message. The buffer is
/// zero-filled lazily by the OS, so this costs no real memory.
#[test]
fn oversized_input_is_refused() {
    use memsnap_core::snapshot::read::MAX_INPUT_BYTES;
    let mut big = vec![0u8; MAX_INPUT_BYTES as usize + 1];
    big[0] = 0x80;
    let e = read(&big).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("larger than the 2 GiB memsnap reads"), "{e}");
}
