//! The long analyses answered a slice at a time (`PacedAnswer`, as the worker runs them) give
//! the same answers as the synchronous `answer`, however often they give way.

use std::future::Future;
use std::path::PathBuf;
use std::pin::pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use memsnap_app::protocol::analysis::{EntryRange, FlameMeasure, FlameRequest};
use memsnap_app::protocol::{Request, Response};
use memsnap_app::viewmodel::{answer, Analyses, Paced, PacedAnswer};
use memsnap_core::analysis::pace::{Pace, CHECK_EVERY};
use memsnap_core::snapshot::Snapshot;

fn example() -> Snapshot {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets/example.pickle");
    memsnap_core::snapshot::read(&std::fs::read(path).expect("the bundled example")).unwrap()
}

fn real(name: &str) -> Option<Snapshot> {
    let dir = match std::env::var_os("MEMSNAP_REAL_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/real"),
    };
    let Ok(bytes) = std::fs::read(dir.join(name)) else {
        eprintln!(
            "WARNING: real fixtures not found at {}, skipping {name}",
            dir.display()
        );
        return None;
    };
    Some(memsnap_core::snapshot::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// Runs `job` giving way at every check, as a worker whose slices are always spent; the
/// result and how many times it gave way.
fn run_giving_way(job: PacedAnswer) -> (Paced, usize) {
    let mut give_way = || true;
    let mut pace = Pace::new(&mut give_way);
    let mut f = pin!(job.answer(&mut pace));
    let mut cx = Context::from_waker(Waker::noop());
    let mut pauses = 0;
    loop {
        match f.as_mut().poll(&mut cx) {
            Poll::Ready(p) => return (p, pauses),
            Poll::Pending => pauses += 1,
        }
    }
}

fn requests(snap: &Snapshot, device: i64) -> Vec<Request> {
    let n = snap.trace(device as usize).len() as u64;
    let whole = EntryRange { start: 0, end: n };
    let half = EntryRange {
        start: n / 4,
        end: n / 2 + 1,
    };
    vec![
        Request::Anomalies {
            device,
            range: whole,
        },
        Request::Insights { device },
        Request::Flame(FlameRequest {
            device,
            range: whole,
            measure: FlameMeasure::LiveAt(None),
            all_frames: false,
        }),
        Request::Flame(FlameRequest {
            device,
            range: half,
            measure: FlameMeasure::BytesTimesLifetime,
            all_frames: true,
        }),
    ]
}

/// Each paced answer equals the synchronous one; a device's anomalies are found once, then a
/// range's are a filter of them (answered at once, also equal). Returns the pauses seen.
fn check_equal(snap: Snapshot, device: i64) -> usize {
    let snap = Rc::new(snap);
    let mut total_pauses = 0;
    let mut paced_cache = Analyses::new();
    for req in requests(&snap, device) {
        let want = answer(&snap, &mut Analyses::new(), &req);
        assert!(
            !matches!(want, Response::Failed { .. }),
            "{req:?}: {want:?}"
        );
        let job = PacedAnswer::of(&snap, &mut paced_cache, &req)
            .unwrap_or_else(|| panic!("{} is paced the first time", req.kind()));
        let (paced, pauses) = run_giving_way(job);
        total_pauses += pauses;
        assert_eq!(paced.response, want, "{req:?}");
        if let Some((d, found)) = paced.anomalies {
            assert_eq!(d, device);
            // The diagnosis finds the same anomalies the anomalies request did.
            if let Some(kept) = paced_cache.anomalies_found(d) {
                assert_eq!(*kept, *found, "{req:?}");
            }
            paced_cache.keep_anomalies(d, found);
        }
    }
    // Anomalies of another range now come from the kept ones, at once, and equal a fresh
    // synchronous answer.
    let n = snap.trace(device as usize).len() as u64;
    let other = Request::Anomalies {
        device,
        range: EntryRange {
            start: n / 3,
            end: n,
        },
    };
    assert!(PacedAnswer::of(&snap, &mut paced_cache, &other).is_none());
    assert_eq!(
        answer(&snap, &mut paced_cache, &other),
        answer(&snap, &mut Analyses::new(), &other)
    );
    total_pauses
}

#[test]
fn paced_answers_equal_the_synchronous_ones_on_the_example() {
    check_equal(example(), 0);
}

#[test]
fn paced_answers_give_way_and_still_equal_on_a_real_training_step() {
    let Some(snap) = real("cs336-d-fullstep.pickle") else {
        return;
    };
    let units = snap.trace(0).len();
    let pauses = check_equal(snap, 0);
    // Every analysis walks the trace or its allocations at least once.
    assert!(
        pauses >= units / CHECK_EVERY as usize,
        "gave way {pauses} times over a {units}-entry trace"
    );
}

/// The diagnosis behind the insights finds the device's anomalies over its whole trace; both
/// ways of answering keep them, so the anomalies panel's first request is a filter of them.
#[test]
fn the_diagnosis_keeps_the_anomalies_it_found() {
    let snap = Rc::new(example());
    let n = snap.trace(0).len() as u64;
    let anomalies = Request::Anomalies {
        device: 0,
        range: EntryRange { start: 0, end: n },
    };
    let want = answer(&snap, &mut Analyses::new(), &anomalies);

    let mut cache = Analyses::new();
    answer(&snap, &mut cache, &Request::Insights { device: 0 });
    assert!(PacedAnswer::of(&snap, &mut cache, &anomalies).is_none());
    assert_eq!(answer(&snap, &mut cache, &anomalies), want);

    let mut cache = Analyses::new();
    let job = PacedAnswer::of(&snap, &mut cache, &Request::Insights { device: 0 }).unwrap();
    let (paced, _) = run_giving_way(job);
    let (device, found) = paced.anomalies.expect("the diagnosis's anomalies");
    cache.keep_anomalies(device, found);
    assert!(PacedAnswer::of(&snap, &mut cache, &anomalies).is_none());
    assert_eq!(answer(&snap, &mut cache, &anomalies), want);
}

#[test]
fn other_requests_are_answered_at_once() {
    let snap = Rc::new(example());
    let mut cache = Analyses::new();
    for req in [
        Request::Segments { device: 0 },
        Request::Diagnostics { device: 0 },
        Request::Stack { stack: 0 },
    ] {
        assert!(
            PacedAnswer::of(&snap, &mut cache, &req).is_none(),
            "{req:?}"
        );
    }
}
