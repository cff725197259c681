//! The heap a what-if replay takes on an unbounded device. Such a replay reserves expandable
//! ranges of 2^50 bytes; a flag per 2 MiB page of one was a 576 MB vector per stream and pool,
//! which the page's worker spent 0.7 s growing its memory for, on every file's first Insights.
//! Traces built with the allocator model (not recorded).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use memsnap_core::allocator::{Allocator, Config, SimBacking};
use memsnap_core::analysis::replay::{requests, what_if, Start};
use memsnap_core::analysis::verdicts::{measure, Change, Device};
use memsnap_core::snapshot::Snapshot;

/// Counts the bytes held and the most held at once.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let held = HELD.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(held, Ordering::Relaxed);
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: allocated by `alloc` above with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Small and large allocations on two streams, some freed, recorded under `config`.
fn trace(config: Config) -> Snapshot {
    let mut a = Allocator::new(SimBacking::new(16 * GIB), config);
    a.trace_mut().set_enabled(true);
    let mut live = Vec::new();
    for i in 0..200u64 {
        let size = [512, 300 * 1024, 3 * MIB, 40 * MIB][(i % 4) as usize] + i * 4096;
        live.push(a.malloc(size, (i % 2) as i64, None).expect("fits"));
        if i % 3 == 0 {
            a.free(live.remove(0)).expect("live");
        }
    }
    a.snapshot()
}

/// One measure at a time: the tests of this binary run on threads that share the counts.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The most heap held during `f`, above what was held when it began.
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let out = f();
    (out, PEAK.load(Ordering::Relaxed) - before)
}

#[test]
fn expandable_replays_on_an_unbounded_device_take_little_heap() {
    let expandable = Config {
        expandable_segments: true,
        ..Config::default()
    };
    // From a clean start the replay reserves its own ranges; from the reconstructed start of
    // a trace recorded with expandable segments it seeds them from the dump's segments.
    for (recorded, start) in [
        (Config::default(), Start::Clean),
        (expandable.clone(), Start::Reconstructed),
    ] {
        let snap = trace(recorded);
        let (w, peak) = peak_during(|| what_if(&snap, 0, expandable.clone(), start, None));
        let w = w.expect("replays");
        assert_eq!(w.failed_requests, 0, "{start:?}");
        assert!(w.figures.peak_reserved > GIB, "{start:?}: {:?}", w.figures);
        assert!(
            (peak as u64) < 16 * MIB,
            "{start:?}: the replay held {} MiB of heap at its peak",
            peak as u64 / MIB
        );
    }
}

/// A verdict's replay weighs the model's figures, not its trace: it keeps none. Recording it
/// made each of the Insights panel's replays of a million-entry trace grow a vector of a
/// million entries (and copy it twice as it grew, 8–9 ms each time in one piece).
#[test]
fn a_verdicts_replay_keeps_no_trace() {
    let mut a = Allocator::new(SimBacking::new(16 * GIB), Config::default());
    a.trace_mut().set_enabled(true);
    let mut live = Vec::new();
    for i in 0..20_000u64 {
        live.push(a.malloc(512 + (i % 64) * 4096, 0, None).expect("fits"));
        if live.len() > 100 {
            a.free(live.remove((i % 100) as usize)).expect("live");
        }
    }
    let snap = a.snapshot();
    let entries = snap.trace(0).len();
    let reqs = requests(&snap, 0);
    let on = Device {
        device: 0,
        start: Start::Clean,
        capacity: None,
    };
    let (out, peak) =
        peak_during(|| measure(&snap, on, &Config::default(), &reqs, &Change::default()));
    let out = out.expect("replays");
    assert_eq!(out.failed_requests, 0);
    let trace_bytes = std::mem::size_of_val(snap.trace(0));
    assert!(
        peak < trace_bytes / 2,
        "the replay of {entries} entries held {peak} bytes of heap at its peak, against \
         {trace_bytes} for their trace"
    );
}
