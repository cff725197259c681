//! `churn` with and without expandable segments: the case expandable segments exist for.

mod common;

use memsnap_core::snapshot::{self, BlockState};

/// (reserved bytes at the end, segments, peak allocated-at-once upper bound) from a run.
fn run(extra: &[&str], name: &str) -> (u64, usize, u64, bool) {
    let dir = common::temp_dir(name);
    let out = dir.join("churn.pickle");
    let mut args = vec!["--scenario", "churn", "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = common::capture(&args);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let err = common::stderr(&o);
    assert!(err.contains("peak reserved"), "summary on stderr: {err}");
    let s = snapshot::read(&std::fs::read(&out).unwrap()).unwrap();
    let reserved: u64 = s.segments.iter().map(|x| x.total_size).sum();
    let biggest_alloc = s
        .trace(0)
        .iter()
        .filter(|e| e.action() == snapshot::Action::Alloc)
        .filter_map(|e| e.size())
        .max()
        .unwrap();
    let expandable = s.segments.iter().all(|x| x.is_expandable == Some(true));
    assert!(s
        .segments
        .iter()
        .flat_map(|x| &x.blocks)
        .all(|b| b.state != BlockState::ActivePendingFree));
    (reserved, s.segments.len(), biggest_alloc, expandable)
}

#[test]
fn expandable_segments_cut_churn_reserved_memory() {
    let (plain, plain_segs, biggest, plain_exp) = run(&[], "churn-plain");
    let (exp, exp_segs, _, exp_exp) = run(&["--set", "expandable_segments=true"], "churn-exp");
    assert!(!plain_exp && exp_exp, "segment kinds follow the setting");
    // Without: a new segment for nearly every growing request, none ever reused.
    assert!(plain_segs >= 10, "{plain_segs} segments");
    assert!(
        plain > 8 * biggest,
        "plain reserved {plain} vs largest request {biggest}"
    );
    // With: one large-pool range grown in place (plus the small pool's), reserved close to the
    // largest request (rounded to 20 MiB pages) plus the small pool's 2 MiB page.
    assert_eq!(exp_segs, 2);
    assert!(
        exp < biggest + (20 << 20) + (2 << 20),
        "expandable reserved {exp} vs {biggest}"
    );
    assert!(plain > 8 * exp, "plain {plain} vs expandable {exp}");
}

#[test]
fn alloc_conf_string_works_like_set() {
    let (a, _, _, _) = run(&["--alloc-conf", "expandable_segments:True"], "churn-conf");
    let (b, _, _, _) = run(&["--set", "expandable_segments=true"], "churn-set");
    assert_eq!(a, b);
}
