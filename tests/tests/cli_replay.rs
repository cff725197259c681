//! `memsnap replay` on the real fixtures: every trace replays with all decisions matched and
//! the dump's segments rebuilt, the torch_npu ones under torch_npu's rules (detected, or named
//! with `--allocator`); what-if writes a snapshot that reads back; bad `--set` values, and
//! settings torch_npu refuses, are one clear line.

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
    let (mut replayed, mut npu_replayed) = (0, 0);
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
            let npu = name.starts_with("memsnapdump-");
            assert_eq!(d["allocator"], if npu { "npu" } else { "cuda" }, "{name}");
            assert_eq!(d["allocator_source"], "detected", "{name}");
            assert_eq!(d["allocator_fits"], true, "{name}");
            assert_eq!(d["not_replayed"], serde_json::Value::Null, "{name}");
            npu_replayed += npu as usize;
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
    assert!(replayed >= 11, "replayed {replayed}");
    assert_eq!(npu_replayed, 2);
}

/// `--allocator` names the rules: torch_npu's on a torch_npu file is the detected result;
/// CUDA's on it replays with a warning and mismatches, never a refusal or a silent 100%.
#[test]
fn allocator_flag_names_the_rules() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let npu = fixtures::real_dir().join("memsnapdump-empty-cache.pkl");
    let npu = npu.to_str().expect("UTF-8");
    let j = json_of(&["replay", "--json", "--allocator", "npu", npu]);
    let d = &j["devices"][0];
    assert_eq!(
        (&d["allocator"], &d["allocator_source"]),
        (&"npu".into(), &"settings".into())
    );
    assert_eq!(d["decisions_matched"], d["decisions"]);
    let j = json_of(&["replay", "--json", "--allocator", "cuda", npu]);
    let d = &j["devices"][0];
    assert_eq!(d["allocator"], "cuda");
    assert_eq!(d["allocator_fits"], false);
    assert!(
        d["decisions_matched"].as_u64() < d["decisions"].as_u64(),
        "{d}"
    );
    let text = memsnap_bin::run(&["replay", "--allocator", "cuda", npu], None);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("warning: not a trace of PyTorch's CUDA caching allocator"),
        "{text}"
    );
    let out = memsnap_bin::run(&["replay", "--allocator", "tpu", npu], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown allocator `tpu` (expected cuda or npu)"),
        "{err}"
    );
}

/// A what-if torch_npu would refuse (expandable segments with max_split_size_mb) is one line
/// naming the setting, not a replay of a configuration that cannot exist.
#[test]
fn what_if_refuses_what_torch_npu_refuses() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let f = fixtures::real_dir().join("memsnapdump-expandable-empty-cache.pkl");
    let args = [
        "replay",
        "--set",
        "max_split_size_mb=512",
        f.to_str().expect("UTF-8"),
    ];
    let out = memsnap_bin::run(&args, None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`max_split_size_mb`: torch_npu refuses it with expandable_segments:True"),
        "{err}"
    );
    // The same change on the non-expandable run is replayed, under torch_npu's rules.
    let f = fixtures::real_dir().join("memsnapdump-empty-cache.pkl");
    let j = json_of(&[
        "replay",
        "--json",
        "--set",
        "max_split_size_mb=512",
        f.to_str().expect("UTF-8"),
    ]);
    let d = &j["devices"][0];
    assert_eq!(d["allocator"], "npu");
    assert!(d["what_if"]["changed_settings"]["settings"]
        .as_str()
        .is_some_and(|s| s.contains("max_split_size_mb:512")));
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
