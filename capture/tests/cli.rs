//! The command line itself: help that documents every built-in, out-of-memory runs that
//! still write their snapshot, and bad flag values.

mod common;

use memsnap_capture::scenario::builtin;
use memsnap_core::snapshot::{self, Action};

#[test]
fn help_documents_every_builtin_and_flag() {
    let o = common::capture(&["--help"]);
    assert!(o.status.success());
    let help = String::from_utf8_lossy(&o.stdout);
    for name in builtin::names() {
        assert!(
            help.contains(&format!("\n  {name} ")),
            "--help lacks {name}"
        );
    }
    for flag in [
        "--cuda",
        "--device",
        "--scenario",
        "--replay",
        "--set",
        "--alloc-conf",
        "--capacity",
        "--seed",
    ] {
        assert!(help.contains(flag), "--help lacks {flag}");
    }
}

#[test]
fn out_of_memory_is_counted_and_the_snapshot_still_written() {
    let dir = common::temp_dir("oom");
    let out = dir.join("oom.pickle");
    let o = common::capture(&[
        "--scenario",
        "churn",
        "--capacity",
        "3GB",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let err = common::stderr(&o);
    assert!(
        err.contains("capture: out of memory: alloc `batch"),
        "{err}"
    );
    assert!(
        err.contains("CUDA out of memory. Tried to allocate"),
        "{err}"
    );
    let s = snapshot::read(&std::fs::read(&out).unwrap()).unwrap();
    let ooms = s
        .trace(0)
        .iter()
        .filter(|e| e.action() == Action::Oom)
        .count();
    assert!(ooms > 0);
    assert!(
        err.contains(&format!("  OOMs             {ooms}\n")),
        "{err}"
    );
    let reserved: u64 = s.segments.iter().map(|x| x.total_size).sum();
    assert!(reserved <= 3_000_000_000);
}

#[test]
fn bad_flag_values_are_one_line_errors() {
    for (args, want) in [
        (
            vec!["--capacity", "12 furlongs"],
            "capture: --capacity `12 furlongs`: unexpected `furlongs`",
        ),
        (
            vec!["--capacity", "-5GB"],
            "capture: --capacity `-5GB`: size is negative",
        ),
        (
            vec!["--set", "expandable_segments"],
            "capture: --set `expandable_segments`: expected KEY=VALUE",
        ),
        (
            vec!["--set", "no_such_option=1"],
            "capture: --set `no_such_option=1`:",
        ),
        (
            vec!["--alloc-conf", "expandable_segments:maybe"],
            "capture: --alloc-conf:",
        ),
    ] {
        let mut a = vec!["--scenario", "pinning", "-o", "/tmp/never-written.pickle"];
        a.extend(args.iter().copied());
        let o = common::capture(&a);
        assert!(!o.status.success(), "{args:?}");
        let err = common::stderr(&o);
        assert!(err.starts_with(want), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
