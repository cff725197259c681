//! Every fix `memsnap diagnose` ranks is what `memsnap replay` of that fix prints: on every
//! real fixture with a CUDA trace, each ranked fix's "saves" and the peak it reaches equal
//! the what-if of its `replay_args`, from the ranking start and from the other one (`--cold`
//! or not), and no fix that saves nothing is ranked. The OOM case is a file built with
//! `capture` (cuda:1 runs out of memory), replayed `--to-oom`.

use std::path::Path;

use memsnap_tests::{built, fixtures, memsnap_bin};
use serde_json::Value;

fn json_of(args: &[&str]) -> Value {
    let out = memsnap_bin::run(args, None);
    assert!(
        out.status.success(),
        "memsnap {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// `memsnap replay` of one fix from `start`: (saves, the changed side's peak reserved).
fn replayed(file: &str, device: u64, start: &str, oom: bool, fix: &Value) -> (i64, u64) {
    let dev = device.to_string();
    let mut args = vec!["replay", file, "--json", "--device", &dev];
    if start == "cold" {
        args.push("--cold");
    }
    if oom {
        args.push("--to-oom");
    }
    let extra: Vec<&str> = fix["replay_args"]
        .as_array()
        .expect("replay_args")
        .iter()
        .map(|a| a.as_str().expect("an argument"))
        .collect();
    args.extend(&extra);
    let j = json_of(&args);
    let w = &j["devices"][0]["what_if"];
    assert_eq!(w["start"], start, "{args:?}");
    (
        w["saves"].as_i64().expect("saves"),
        w["changed_settings"]["figures"]["peak_reserved"]
            .as_u64()
            .expect("peak"),
    )
}

/// Checks every fix of every device of `file`'s diagnosis against its replay; the number of
/// ranked fixes checked.
fn check_file(file: &Path) -> usize {
    let path = file.to_str().expect("UTF-8 path");
    let doc = json_of(&["diagnose", "--json", path]);
    let mut checked = 0;
    for d in doc["devices"].as_array().expect("devices") {
        let v = &d["verdicts"];
        if !v["not_replayed"].is_null() {
            continue;
        }
        let device = d["device"].as_u64().expect("device");
        let start = v["ranked_on"].as_str().expect("ranked_on");
        let other = if start == "cold" {
            "reconstructed"
        } else {
            "cold"
        };
        let oom = !v["capacity"].is_null();
        let one_start = v["base_other_start"].is_null();
        for f in v["fixes"].as_array().expect("fixes") {
            let name = format!("{path} device {device}: {}", f["setting"]);
            assert_eq!(f["helps"], true, "{name}");
            let saves = f["saves"].as_i64().expect("saves");
            assert!(
                saves > 0 || f["oom"]["served"] == true,
                "{name}: ranked though it saves {saves}"
            );
            let (s, peak) = replayed(path, device, start, oom, f);
            assert_eq!(s, saves, "{name}: saves, {start} start");
            assert_eq!(peak, f["with"]["peak_reserved"], "{name}: peak");
            if !one_start {
                let (s, _) = replayed(path, device, other, oom, f);
                assert_eq!(
                    Value::from(s),
                    f["saves_other_start"],
                    "{name}: saves, {other} start"
                );
            }
            checked += 1;
        }
        for f in v["no_saving"].as_array().expect("no_saving") {
            let name = format!("{path} device {device}: {}", f["setting"]);
            assert_eq!(f["helps"], false, "{name}");
            let (s, _) = replayed(path, device, start, oom, f);
            assert_eq!(Value::from(s), f["saves"], "{name}: saves, {start} start");
        }
        // The line to try is the best fix's.
        if let Some(first) = v["fixes"].as_array().and_then(|f| f.first()) {
            let setting = first["setting"].as_str().expect("setting");
            let try_line = v["try_line"].as_str().expect("try_line");
            for part in setting.split(" + ") {
                let part = part
                    .strip_prefix("PYTORCH_CUDA_ALLOC_CONF=")
                    .unwrap_or(part);
                assert!(try_line.contains(part), "{try_line} lacks {part}");
            }
        }
    }
    checked
}

#[test]
fn every_ranked_fix_saves_what_its_replay_saves() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let checked: usize = files.iter().map(|f| check_file(f)).sum();
    assert!(checked > 0, "no real fixture has a fix to check");
    eprintln!("{checked} ranked fixes replayed on the real fixtures");
}

#[test]
fn an_oom_is_weighed_by_whether_the_failing_request_is_served() {
    let dir = fixtures::scratch("cli-verdicts-oom");
    let file = built::oom_on_cuda1(&dir);
    let doc = json_of(&["diagnose", "--json", file.to_str().unwrap()]);
    let dev1 = doc["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .find(|d| d["device"] == 1)
        .expect("cuda:1");
    let v = &dev1["verdicts"];
    assert!(
        v["capacity"].as_u64().is_some(),
        "replayed on the OOM's memory"
    );
    assert_eq!(
        v["base"]["failed_last"], true,
        "the file's settings fail the request again"
    );
    for f in v["fixes"].as_array().expect("fixes") {
        assert_eq!(f["oom"]["served"], true, "{}", f["setting"]);
    }
    check_file(&file);
}
