//! `memsnap fleet`: the table lists ranks by peak, highest first, and flags the odd ones; the
//! JSON carries the same ranks and flags.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temp path")
}

#[test]
fn table_sorted_by_peak_with_outliers_flagged() {
    let dir = common::temp_dir("fleet");
    let runs: [(&str, &[&str]); 4] = [
        (
            "rank0.pickle",
            &["--scenario", "varying-seqlen", "--seed", "1"],
        ),
        (
            "rank1.pickle",
            &["--scenario", "varying-seqlen", "--seed", "2"],
        ),
        (
            "rank2.pickle",
            &["--scenario", "varying-seqlen", "--seed", "3"],
        ),
        // A smaller device: lower peak and out-of-memory entries.
        (
            "rank3.pickle",
            &[
                "--scenario",
                "varying-seqlen",
                "--seed",
                "4",
                "--capacity",
                "6GB",
            ],
        ),
    ];
    for (name, args) in runs {
        let out = dir.join(name);
        let mut all = vec!["-q", "-o", s(&out)];
        all.extend_from_slice(args);
        let o = common::capture(&all);
        assert!(o.status.success(), "{}", common::stderr(&o));
    }
    let memsnap = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_memsnap"))
            .args(args)
            .output()
            .expect("memsnap runs")
    };
    let o = memsnap(&["fleet", "--json", s(&dir)]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let flags = v["fleet"]["ranks"].as_array().expect("flags");
    let peaks: Vec<(u64, u64)> = flags
        .iter()
        .map(|f| {
            (
                f["rank"].as_u64().expect("rank"),
                f["peak_allocated_bytes"].as_u64().expect("peak"),
            )
        })
        .collect();
    assert_eq!(
        peaks.iter().map(|p| p.0).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!(flags[3]["ooms"].as_u64() > Some(0) && flags[3]["low_peak"] == true);
    assert!(flags[..3]
        .iter()
        .all(|f| f["ooms"] == 0 && f["low_peak"] == false));
    // Each summary stays small: a few KB of JSON per rank, whatever the trace length.
    for r in v["ranks"].as_array().expect("ranks") {
        let len = r.to_string().len();
        assert!(len < 32 * 1024, "rank summary of {len} bytes");
    }

    let o = memsnap(&["fleet", s(&dir)]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    // Data rows start with the right-aligned rank; their order must be by peak, highest first.
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(' ') && l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    let listed: Vec<u64> = rows
        .iter()
        .map(|l| {
            l.split_whitespace()
                .next()
                .expect("rank")
                .parse()
                .expect("rank")
        })
        .collect();
    let mut want = peaks.clone();
    want.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    assert_eq!(
        listed,
        want.iter().map(|p| p.0).collect::<Vec<_>>(),
        "{text}"
    );
    let oom_row = rows
        .iter()
        .find(|l| l.trim_start().starts_with("3 "))
        .expect("rank 3");
    assert!(
        oom_row.contains("OOM x") && oom_row.contains("LOW"),
        "{text}"
    );
    assert!(text.starts_with("4 ranks, median peak allocated"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}
