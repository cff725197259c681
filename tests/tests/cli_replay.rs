//! `memsnap replay` on the real fixtures: every CUDA trace replays with all decisions matched
//! and the dump's segments rebuilt; torch_npu traces are named as another allocator's; what-if
//! writes a snapshot that reads back; bad `--set` values are one clear line.

use memsnap_tests::{fixtures, memsnap_bin};

fn json_of(args: &[&str]) -> serde_json::Value {
    let out = memsnap_bin::run(args, None);
    assert!(
        out.status.success(),
        "memsnap {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn replay_json_on_every_traced_fixture() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let mut replayed = 0;
    for f in &files {
        let path = f.to_str().expect("UTF-8 path");
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let out = memsnap_bin::run(&["replay", "--json", path], None);
        if !out.status.success() {
            // Files without a trace say so and fail.
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("no trace to replay"), "{name}: {err}");
            continue;
        }
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
        for d in j["devices"].as_array().expect("devices") {
            if name.starts_with("memsnapdump-") {
                assert_eq!(d["cuda_policy"], false, "{name}");
                assert!(
                    d["not_replayed"]
                        .as_str()
                        .is_some_and(|s| s.starts_with("not a CUDA allocator trace")),
                    "{name}"
                );
                continue;
            }
            replayed += 1;
            assert!(d["decisions"].as_u64().is_some_and(|n| n > 0), "{name}");
            assert_eq!(
                d["decisions_matched"], d["decisions"],
                "{name}: {}",
                d["first_mismatch"]
            );
            assert_eq!(
                d["segments_match"], true,
                "{name}: {}",
                d["segments_difference"]
            );
        }
    }
    assert!(replayed >= 9, "replayed {replayed}");
}

#[test]
fn what_if_writes_a_readable_snapshot() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let src = fixtures::real_dir().join("adam-small-settings.pickle");
    let out = fixtures::scratch("replay").join("whatif.pickle");
    let (src, out) = (src.to_str().expect("UTF-8"), out.to_str().expect("UTF-8"));
    let j = json_of(&[
        "replay",
        "--json",
        "--clean",
        "--set",
        "expandable_segments=True",
        "-o",
        out,
        src,
    ]);
    let w = &j["devices"][0]["what_if"];
    assert_eq!(
        w["changed_settings"]["settings"],
        "expandable_segments:True"
    );
    assert!(w["changed_settings"]["figures"]["peak_reserved"]
        .as_u64()
        .is_some_and(|r| r > 0));
    let stats = json_of(&["stats", "--json", out]);
    assert!(stats.is_object());
}

#[test]
fn bad_settings_name_the_key() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let src = fixtures::real_dir().join("tiny.pickle");
    let out = memsnap_bin::run(
        &[
            "replay",
            "--set",
            "max_split_size_mb=3",
            src.to_str().expect("UTF-8"),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("max_split_size_mb") && err.lines().count() == 1,
        "{err}"
    );
}
