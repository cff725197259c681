//! Legacy files (torch <= 2.0): blocks carry `history` lists instead of `frames` and no
//! `address`. On the real legacy fixture, every block's typed history is what CPython's
//! `pickle.load` reads, entry by entry; every live block's stack is its last history entry's
//! frames; block addresses follow from the segment's address and the sizes before it (and
//! equal the history's `addr`); and the analyses that read stacks (top frames at the dump)
//! group by them, not under "<no stack>".

use memsnap_core::analysis::intervals::block_addresses;
use memsnap_core::analysis::peak::composition;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::StackId;
use memsnap_tests::{fixtures, python, web::page};

const FILE: &str = "legacy-history-oom.pickle";

#[test]
fn history_gives_stacks_and_addresses() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let path = fixtures::real_dir().join(FILE);
    let snap = page::load(&path);
    // CPython's reading of every block's history: [addr, real_size, frames] per entry.
    type Entry = (Option<u64>, Option<u64>, Vec<(String, i64, String)>);
    let cpython: Vec<Vec<Vec<Entry>>> =
        serde_json::from_str(&python::run("legacy_history.py", &[&path])).expect("JSON");
    assert_eq!(cpython.len(), snap.segments.len());
    let (mut live, mut with_frames) = (0, 0);
    // Every frame any history names, as `file:line:name`.
    let mut history_frames = std::collections::HashSet::new();
    for (seg, want_seg) in snap.segments.iter().zip(&cpython) {
        assert_eq!(seg.blocks.len(), want_seg.len());
        for ((b, addr), want) in seg.blocks.iter().zip(block_addresses(seg)).zip(want_seg) {
            assert!(b.address.is_none(), "a legacy block has no address key");
            let frames_of = |s: Option<StackId>| -> Vec<(String, i64, String)> {
                s.map(|s| {
                    snap.stacks
                        .frames_of(s)
                        .map(|f| (f.filename.to_string(), f.line, f.name.to_string()))
                        .collect()
                })
                .unwrap_or_default()
            };
            // The typed history is CPython's, entry by entry.
            let entries = b.history.as_ref().map_or(&[][..], |h| h.entries());
            let got: Vec<Entry> = entries
                .iter()
                .map(|e| (e.addr, e.real_size, frames_of(e.frames)))
                .collect();
            assert_eq!(&got, want);
            let Some(last) = want.last() else {
                continue;
            };
            if let (Some(a), true) = (last.0, b.state.is_active()) {
                assert_eq!(a, addr, "history addr vs the laid-out address");
            }
            if !b.state.is_active() {
                continue;
            }
            // A live block's stack is its last history entry's frames.
            live += 1;
            let got = frames_of(b.frames);
            assert_eq!(got, last.2);
            history_frames.extend(last.2.iter().map(|(f, l, n)| format!("{f}:{l}:{n}")));
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
