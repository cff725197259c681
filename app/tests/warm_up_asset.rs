//! The worker's warm-up input (app/assets/warm-up.pickle.gz, scripts/gen/make-warm-up.sh) is a
//! snapshot the reader takes, shaped like PyTorch's files where the parse spends its time
//! (a CPython pickle, deep stacks of shared frame dicts), with a trace long enough for V8 to
//! optimise the code it runs and the first paint's answers built from it: a stale or broken
//! asset would leave every first file cold without any error the user sees (the worker only
//! logs it).

use memsnap_app::protocol::Response;
use memsnap_app::viewmodel::{answer, file_summary, first_paint_requests, Analyses};

#[test]
fn warm_up_input_reads_and_answers_the_first_paint() {
    let bytes = include_bytes!("../assets/warm-up.pickle.gz");
    let snap = memsnap_core::snapshot::read(bytes).expect("the warm-up input reads");
    let mut cache = Analyses::new();
    let summary = file_summary(
        &snap,
        &mut cache,
        "warm-up.pickle.gz",
        bytes.len() as u64,
        0.0,
    );
    let device = summary.opening_device().expect("a device");
    let entries = snap.trace(device as usize).len() as u64;
    assert!(entries >= 1000, "only {entries} trace entries");
    assert!(
        summary.warnings.is_empty(),
        "warnings: {:?}",
        summary.warnings
    );
    let [segments, timeline] = first_paint_requests(&snap, device);
    match answer(&snap, &mut cache, &segments) {
        Response::Segments(v) => assert!(!v.segments.is_empty()),
        other => panic!("segments: {other:?}"),
    }
    match answer(&snap, &mut cache, &timeline) {
        Response::Timeline(v) => assert!(v.y_max > 0),
        other => panic!("timeline: {other:?}"),
    }
    // Stacks as deep as real files' (60-110 frames), which most of a real parse is.
    let trace = snap.trace(device as usize);
    let frames: usize = trace
        .iter()
        .filter_map(|e| e.frames())
        .map(|s| snap.stacks.stack(s).len())
        .sum();
    let mean = frames as f64 / trace.len() as f64;
    assert!(mean >= 50.0, "{mean:.1} frames per entry");
    // A CPython pickle (memo entries past 256 are fetched with LONG_BINGET, which
    // memsnap's writer, memoising only strings and frames, never needs on a file this size).
    let mut pickle = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut pickle)
        .expect("the warm-up input is gzipped");
    assert!(
        memsnap_core::snapshot::write(&snap) != pickle,
        "the asset is memsnap's own writer's output, not CPython's"
    );
}
