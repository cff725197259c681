//! Legacy files (torch <= 2.0): blocks carry `history` lists instead of `frames` and no
//! `address`. On the real legacy fixture, every live block's stack is its last history entry's
//! frames (compared with CPython's `pickle.load`), block addresses follow from the segment's
//! address and the sizes before it (and equal the history's `addr`), and the analyses that
//! read stacks (top frames at the dump) group by them, not under "<no stack>".

use memsnap_core::analysis::intervals::block_addresses;
use memsnap_core::analysis::peak::composition;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_tests::{fixtures, web::page};

const FILE: &str = "legacy-history-oom.pickle";

#[test]
fn history_gives_stacks_and_addresses() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let path = fixtures::real_dir().join(FILE);
    let snap = page::load(&path);
    let (mut live, mut with_frames) = (0, 0);
    // Every frame any history names, as `file:line:name`.
    let mut history_frames = std::collections::HashSet::new();
    for seg in &snap.segments {
        for (b, addr) in seg.blocks.iter().zip(block_addresses(seg)) {
            assert!(b.address.is_none(), "a legacy block has no address key");
            let history = b.history.as_ref().and_then(|h| h.as_seq());
            let Some(last) = history.and_then(|h| h.last()) else {
                continue;
            };
            if let Some(a) = last.get("addr").and_then(|a| a.as_i64()) {
                if b.state.is_active() {
                    assert_eq!(a as u64, addr, "history addr vs the laid-out address");
                }
            }
            if !b.state.is_active() {
                continue;
            }
            live += 1;
            let want: Vec<(String, i64, String)> = last
                .get("frames")
                .and_then(|f| f.as_seq())
                .unwrap_or_default()
                .iter()
                .map(|f| {
                    (
                        f.get("filename")
                            .and_then(|x| x.as_str())
                            .unwrap()
                            .to_string(),
                        f.get("line").and_then(|x| x.as_i64()).unwrap(),
                        f.get("name").and_then(|x| x.as_str()).unwrap().to_string(),
                    )
                })
                .collect();
            let got: Vec<(String, i64, String)> = b
                .frames
                .map(|s| {
                    snap.stacks
                        .frames_of(s)
                        .map(|f| (f.filename.to_string(), f.line, f.name.to_string()))
                        .collect()
                })
                .unwrap_or_default();
            assert_eq!(got, want);
            history_frames.extend(want.iter().map(|(f, l, n)| format!("{f}:{l}:{n}")));
            with_frames += usize::from(!got.is_empty());
        }
    }
    assert!(live > 100 && with_frames == live, "{with_frames} of {live}");

    // The dump's live blocks by top frame: the legacy stacks reach the analyses.
    let tl = Timeline::build(&snap, 0);
    let peak = composition(&snap, &tl, None);
    let labels: Vec<&str> = peak.by_top_frame.iter().map(|g| g.label.as_str()).collect();
    assert!(
        !labels.is_empty() && labels.iter().all(|l| history_frames.contains(*l)),
        "{labels:?}"
    );
}
