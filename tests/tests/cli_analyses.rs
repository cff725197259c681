//! `memsnap diagnose`, `compare`, `check` and `flame` on the real fixtures, against the core
//! analyses computed in this process and the page worker's own answers (`viewmodel::answer`).

use std::path::{Path, PathBuf};
use std::process::Output;

use memsnap_app::protocol::{Request, Response};
use memsnap_app::viewmodel::{answer, Analyses};
use memsnap_core::analysis::diagnosis::diagnose;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::{read, Snapshot};
use memsnap_tests::{fixtures, memsnap_bin};
use serde_json::Value;

fn run(args: &[&str]) -> Output {
    memsnap_bin::run(args, None)
}

fn stdout_of(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "memsnap {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn json_of(args: &[&str]) -> Value {
    serde_json::from_str(&stdout_of(args)).expect("valid JSON")
}

fn load(path: &Path) -> Snapshot {
    read(&std::fs::read(path).expect("read fixture")).expect("parse fixture")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Devices with a trace, as usize.
fn traced(snap: &Snapshot) -> Vec<usize> {
    snap.devices()
        .into_iter()
        .filter_map(|d| usize::try_from(d).ok())
        .filter(|&d| !snap.trace(d).is_empty())
        .collect()
}

/// The real fixtures that have a trace, parsed.
fn traced_fixtures() -> Option<Vec<(PathBuf, Snapshot)>> {
    let files = fixtures::real_fixtures()?;
    Some(
        files
            .into_iter()
            .map(|f| {
                let s = load(&f);
                (f, s)
            })
            .filter(|(_, s)| !traced(s).is_empty())
            .collect(),
    )
}

fn fixture(name: &str) -> Option<PathBuf> {
    let p = fixtures::real_dir().join(name);
    if p.exists() {
        Some(p)
    } else {
        eprintln!("WARNING: real fixture {} not found, skipping", p.display());
        None
    }
}

/// A value through JSON text, as the CLI's output went (parsing is the same both ways).
fn via_text<T: serde::Serialize>(v: &T) -> Value {
    serde_json::from_str(&serde_json::to_string(v).expect("serialise")).expect("parse")
}

#[test]
fn diagnose_json_equals_core_and_the_page_worker() {
    let Some(all) = traced_fixtures() else {
        return;
    };
    assert!(!all.is_empty(), "no fixture with a trace");
    for (path, snap) in &all {
        let doc = json_of(&["diagnose", "--json", path_str(path)]);
        let devices = doc["devices"].as_array().expect("devices");
        let listed: Vec<u64> = devices
            .iter()
            .map(|d| d["device"].as_u64().expect("device"))
            .collect();
        let expected: Vec<u64> = snap.devices().iter().map(|&d| d as u64).collect();
        assert_eq!(listed, expected, "{path:?}: devices");
        for dev in traced(snap) {
            let ours = devices
                .iter()
                .find(|d| d["device"] == dev as u64)
                .expect("device listed");
            // The same core call, field for field.
            let core = via_text(&diagnose(snap, dev));
            assert_eq!(
                ours, &core,
                "{path:?} device {dev}: diagnose --json vs core"
            );
            let v = &ours["verdicts"];
            assert!(v["fixes"].is_array(), "{path:?}: fixes key");

            // What the page's worker answers for the side bar.
            let Response::Insights(page) = answer(
                snap,
                &mut Analyses::new(),
                &Request::Insights { device: dev as i64 },
            ) else {
                panic!("{path:?}: the worker did not answer Insights");
            };
            // The page's fixes are the same replays: setting, saving and the peak it reaches.
            let fix_rows = |fixes: &Value| -> Vec<(String, i64, u64, Option<i64>)> {
                fixes
                    .as_array()
                    .expect("fixes")
                    .iter()
                    .map(|f| {
                        (
                            f["setting"].as_str().expect("setting").to_string(),
                            f["saves"].as_i64().expect("saves"),
                            f["with"]["peak_reserved"].as_u64().expect("peak"),
                            f["saves_other_start"].as_i64(),
                        )
                    })
                    .collect()
            };
            let page_rows = |fixes: &[memsnap_app::protocol::analysis::FixVm]| -> Vec<_> {
                fixes
                    .iter()
                    .map(|f| {
                        (
                            f.setting.clone(),
                            f.saves,
                            f.peak_reserved,
                            f.saves_other_start,
                        )
                    })
                    .collect()
            };
            assert_eq!(
                fix_rows(&v["fixes"]),
                page_rows(&page.fixes),
                "{path:?}: fixes"
            );
            assert_eq!(
                fix_rows(&v["no_saving"]),
                page_rows(&page.no_saving),
                "{path:?}: fixes tried"
            );
            assert_eq!(v["try_line"], via_text(&page.try_line), "{path:?}: try");
            assert_eq!(v["ranked_on"], page.ranked_on, "{path:?}: start");
            let frag = &ours["fragmentation"];
            assert_eq!(frag["free"], page.free, "{path:?}");
            assert_eq!(frag["largest_free"], page.largest_free, "{path:?}");
            assert_eq!(frag["ratio"], via_text(&page.fragmentation), "{path:?}");
            assert_eq!(frag["releasable"], page.releasable, "{path:?}");
            assert_eq!(ours["churn"]["verdict"], page.churn_verdict, "{path:?}");
            assert_eq!(
                ours["pinning"].as_array().map(Vec::len),
                Some(page.pinning_count as usize),
                "{path:?}"
            );
            assert_eq!(ours["peak"]["allocated"], page.peak_allocated, "{path:?}");
            assert_eq!(
                ours["peak"]["index"],
                via_text(&page.peak_index),
                "{path:?}"
            );
            for (g, p) in ours["peak"]["by_top_frame"]
                .as_array()
                .expect("by_top_frame")
                .iter()
                .zip(&page.peak_frames)
            {
                assert_eq!(g["label"], p.label, "{path:?}");
                assert_eq!(g["bytes"], p.bytes, "{path:?}");
            }
            assert_eq!(doc["conf"], page.conf, "{path:?}: settings");
            // Every stack a pinning block names is resolved to frames.
            for p in ours["pinning"].as_array().expect("pinning") {
                if let Some(s) = p["stack"].as_u64() {
                    assert!(
                        doc["stacks"][s.to_string()].is_array(),
                        "{path:?}: stack {s}"
                    );
                }
            }
        }
    }
}

#[test]
fn diagnose_text_names_the_fixes_and_is_plain_when_piped() {
    let Some(f) = fixture("cs336-c-medium512-training.pickle") else {
        return;
    };
    let snap = load(&f);
    let text = stdout_of(&["diagnose", path_str(&f)]);
    assert!(!text.contains('\x1b'), "colour codes in piped output");
    let d = diagnose(&snap, 0);
    for fix in &d.verdicts.fixes {
        assert!(text.contains(&fix.setting), "missing fix {}", fix.setting);
    }
    assert!(text.contains("reserved − allocated"));
    assert!(text.contains("planned lower bound"));
}

fn changes(c: &Value) -> (usize, usize, usize, usize) {
    let n = |k: &str| c[k].as_array().map_or(usize::MAX, Vec::len);
    (
        n("frames"),
        n("new_stacks"),
        n("segments_added"),
        n("segments_removed"),
    )
}

#[test]
fn compare_a_file_with_itself_reports_no_growth() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    for f in &files {
        let p = path_str(f);
        let doc = json_of(&["compare", "--json", p, p]);
        for c in doc["devices"].as_array().expect("devices") {
            assert_eq!(c["before"], c["after"], "{p}");
            assert_eq!(changes(c), (0, 0, 0, 0), "{p}");
        }
        let text = stdout_of(&["compare", p, p]);
        assert!(
            text.contains("no frame's live bytes changed"),
            "{p}: {text}"
        );
    }
}

#[test]
fn compare_inference_with_training_names_the_frames_that_grew() {
    let (Some(inf), Some(train)) = (
        fixture("cs336-c-medium128-inference.pickle"),
        fixture("cs336-c-medium512-training.pickle"),
    ) else {
        return;
    };
    let (a, b) = (load(&inf), load(&train));
    let doc = json_of(&["compare", "--json", path_str(&inf), path_str(&train)]);
    let c = &doc["devices"][0];
    // Sides are the files' own timelines.
    let (ta, tb) = (
        Timeline::build(&a, 0).summary(),
        Timeline::build(&b, 0).summary(),
    );
    assert_eq!(c["before"]["peak_allocated"], ta.peak_allocated);
    assert_eq!(c["after"]["peak_allocated"], tb.peak_allocated);
    assert!(
        tb.peak_allocated > ta.peak_allocated,
        "training peaks higher"
    );
    // Frame changes are the difference of each file's peak composition (diagnose's).
    let (pa, pb) = (diagnose(&a, 0).peak, diagnose(&b, 0).peak);
    let at = |p: &memsnap_core::analysis::peak::Peak, label: &str| -> i64 {
        p.by_top_frame
            .iter()
            .filter(|g| g.label == label)
            .map(|g| g.bytes as i64)
            .sum()
    };
    let frames = c["frames"].as_array().expect("frames");
    assert!(!frames.is_empty(), "nothing grew");
    let grown: Vec<&str> = frames
        .iter()
        .filter(|f| f["peak_change"].as_i64().expect("change") > 0)
        .map(|f| f["label"].as_str().expect("label"))
        .collect();
    assert!(!grown.is_empty(), "no frame grew at the peak");
    for f in frames {
        let label = f["label"].as_str().expect("label");
        assert_eq!(
            f["peak_change"].as_i64(),
            Some(at(&pb, label) - at(&pa, label)),
            "{label}"
        );
    }
    // Training allocates from the backward pass and the optimizer: stacks inference never has.
    assert!(
        !c["new_stacks"].as_array().expect("new").is_empty(),
        "no new stacks"
    );
    let text = stdout_of(&["compare", path_str(&inf), path_str(&train)]);
    assert!(text.contains(grown[0]), "text names {}", grown[0]);

    // The page's before/after panel answers with the same comparison.
    let page = memsnap_app::viewmodel::compare_view(&a, &b, "before", 0);
    assert_eq!(c["before"], via_text(&page.before));
    assert_eq!(c["after"], via_text(&page.after));
    let n = memsnap_app::viewmodel::COMPARE_ROWS.min(frames.len());
    assert_eq!(Value::from(frames[..n].to_vec()), via_text(&page.frames));
    assert_eq!(page.frames_total as usize, frames.len());
    assert_eq!(
        c["segments_added"].as_array().map(Vec::len),
        Some(page.segments_added as usize)
    );
    eprintln!("{text}");
}

#[test]
fn check_fails_with_the_limit_named_and_passes_within_limits() {
    let (Some(inf), Some(train)) = (
        fixture("cs336-c-medium128-inference.pickle"),
        fixture("cs336-c-medium512-training.pickle"),
    ) else {
        return;
    };
    let t = path_str(&train);
    let peak = Timeline::build(&load(&train), 0).summary().peak_allocated;
    let below = (peak - 1).to_string();
    let out = run(&["check", t, "--max-peak", &below]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let fails: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL")).collect();
    assert_eq!(fails.len(), 1, "{stdout}");
    assert!(fails[0].contains("--max-peak"), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 of 1 limit failed"));

    let at = peak.to_string();
    let ok = run(&["check", t, "--max-peak", &at, "--max-fragmentation", "100%"]);
    assert_eq!(ok.status.code(), Some(0), "{ok:?}");
    let ok = String::from_utf8_lossy(&ok.stdout);
    assert_eq!(
        ok.lines().filter(|l| l.starts_with("ok")).count(),
        2,
        "{ok}"
    );

    // Against a baseline: training grew far more than 5% over inference, nothing over itself.
    let out = run(&[
        "check",
        t,
        "--baseline",
        path_str(&inf),
        "--max-growth",
        "5%",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l.starts_with("FAIL")
            && l.contains("peak allocated")
            && l.contains("--max-growth")),
        "{stdout}"
    );
    let out = run(&["check", t, "--baseline", t, "--max-growth", "0%"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // Usage errors are clap's (exit 2): no limit, a bad size.
    assert_eq!(run(&["check", t]).status.code(), Some(2));
    let out = run(&["check", t, "--max-peak", "40 gigs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown size unit `gigs`"));
}

/// `frame;frame value` lines: their values' sum.
fn folded_total(text: &str) -> u64 {
    text.lines()
        .map(|l| {
            let (_, v) = l.rsplit_once(' ').expect("value after the last space");
            v.parse::<u64>().expect("integer value")
        })
        .sum()
}

#[test]
fn flame_totals_equal_the_live_bytes_at_the_point() {
    let Some(all) = traced_fixtures() else {
        return;
    };
    for (path, snap) in &all {
        let p = path_str(path);
        let dev = traced(snap)[0];
        let d = dev.to_string();
        let tl = Timeline::build(snap, dev);
        let s = tl.summary();
        let at_peak = stdout_of(&["flame", p, "--device", &d]);
        assert_eq!(folded_total(&at_peak), s.peak_allocated, "{p}: peak");
        let all_frames = stdout_of(&["flame", p, "--device", &d, "--all-frames"]);
        assert_eq!(
            folded_total(&all_frames),
            s.peak_allocated,
            "{p}: all frames"
        );
        let mid = (tl.len() / 2).to_string();
        assert_eq!(
            folded_total(&stdout_of(&["flame", p, "--device", &d, "--at", &mid])),
            tl.allocated.values()[tl.len() / 2],
            "{p}: entry {mid}"
        );
        if s.end_allocated_matches_dump {
            assert_eq!(
                folded_total(&stdout_of(&["flame", p, "--device", &d, "--at", "dump"])),
                tl.dump_allocated,
                "{p}: dump"
            );
        }
        let lifetime: u64 = tl
            .allocations
            .list
            .iter()
            .map(|a| a.size * a.lifetime())
            .sum();
        assert_eq!(
            folded_total(&stdout_of(&[
                "flame",
                p,
                "--device",
                &d,
                "--weight",
                "bytes-lifetime"
            ])),
            lifetime,
            "{p}: bytes-lifetime"
        );
        // The page's filter: no torch or native frames unless all frames are asked for.
        assert!(
            !at_peak.contains("site-packages/torch/"),
            "{p}: torch frames in the filtered graph"
        );
    }
}

#[test]
fn no_progress_bar_or_colour_when_piped() {
    let Some(f) = fixture("cs336-d-fullstep.pickle") else {
        return;
    };
    for cmd in ["stats", "diagnose", "flame"] {
        let out = run(&[cmd, path_str(&f)]);
        assert!(out.status.success(), "{cmd}");
        assert!(
            out.stderr.is_empty(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.stdout.contains(&0x1b), "{cmd}: escape codes on a pipe");
    }
}

#[test]
fn a_device_not_in_the_file_is_named() {
    let Some(f) = fixture("tiny.pickle") else {
        return;
    };
    for cmd in ["diagnose", "flame"] {
        let out = run(&[cmd, path_str(&f), "--device", "7"]);
        assert_eq!(out.status.code(), Some(1), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no device 7 in this file (devices: 1)"),
            "{cmd}: {err}"
        );
    }
}

#[test]
fn flame_rejects_a_point_past_the_trace() {
    let Some(f) = fixture("tiny.pickle") else {
        return;
    };
    let out = run(&["flame", path_str(&f), "--at", "99999999"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--at 99999999"));
}

#[test]
fn inferno_renders_the_folded_stacks() {
    let Some(f) = fixture("cs336-c-medium512-training.pickle") else {
        return;
    };
    let found = std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| d.join("inferno-flamegraph").is_file())
    });
    if !found {
        eprintln!(
            "WARNING: inferno-flamegraph not on PATH (cargo install inferno), skipping the render test"
        );
        return;
    }
    let folded = stdout_of(&["flame", path_str(&f)]);
    let mut child = std::process::Command::new("inferno-flamegraph")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start inferno-flamegraph");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(folded.as_bytes()).expect("feed inferno");
    }
    let out = child.wait_with_output().expect("inferno-flamegraph");
    assert!(
        out.status.success(),
        "inferno-flamegraph failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = String::from_utf8_lossy(&out.stdout);
    assert!(svg.contains("<svg"), "no SVG from inferno");
    // inferno read every line: its root is the folded total (written with thousands commas).
    let digits = folded_total(&folded).to_string();
    let mut total = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            total.push(',');
        }
        total.push(c);
    }
    let root = format!("all ({total} samples, 100%)");
    assert!(svg.contains(&root), "the SVG has no {root}");
}
