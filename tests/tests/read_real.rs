//! Every real fixture reads, and reads back the same after `write`.

use memsnap_core::analysis::pools::pool_totals;
use memsnap_core::analysis::summary::{HostSummary, Summary};
use memsnap_core::snapshot::{read, read_with, write, Frames, Snapshot, Streaming};
use memsnap_tests::fixtures;

/// A structural fingerprint: counts, byte sums and every stack's frame text.
fn fingerprint(s: &Snapshot) -> String {
    fingerprint_of(s, Frames::Keep)
}

/// [`fingerprint`], leaving out every stack with `Frames::Skip`.
fn fingerprint_of(s: &Snapshot, frames: Frames) -> String {
    let keep = frames == Frames::Keep;
    let mut out = format!("{:?} {} segments\n", s.form, s.segments.len());
    for seg in &s.segments {
        out += &format!(
            "seg {:?} {} {} {:?} {:?} {:?} {} blocks {:?}\n",
            seg.device,
            seg.address,
            seg.total_size,
            seg.stream,
            seg.segment_pool_id,
            seg.is_expandable,
            seg.blocks.len(),
            seg.frames.filter(|_| keep).map(|f| s.stacks.stack(f).len())
        );
        for b in &seg.blocks {
            out += &format!(
                "  {:?} {} {:?} {:?}",
                b.address, b.size, b.requested_size, b.state
            );
            if let Some(f) = b.frames.filter(|_| keep) {
                for fr in s.stacks.frames_of(f) {
                    out += &format!(" {}:{}:{}", fr.filename, fr.line, fr.name);
                }
            }
            out += "\n";
        }
    }
    for (d, t) in s.device_traces.iter().flatten().enumerate() {
        out += &format!("device {d}: {} entries\n", t.len());
        for e in t {
            out += &format!(
                "  {} {:?} {:?} {:?} {:?} {:?} {:?}",
                e.action().as_str(),
                e.addr(),
                e.size(),
                e.stream(),
                e.time_us(),
                e.compile_context(),
                e.device_free()
            );
            if let Some(f) = e.frames().filter(|_| keep) {
                out += &format!(" [{} frames]", s.stacks.stack(f).len());
                if let Some(fr) = s.stacks.frames_of(f).next() {
                    out += &format!(" {}:{}:{}", fr.filename, fr.line, fr.name);
                }
            }
            out += "\n";
        }
    }
    out += &format!("settings {:?}\n", s.allocator_settings);
    out += &format!(
        "annotations {:?}\nextra {:?}\n",
        s.external_annotations, s.extra
    );
    out
}

#[test]
fn every_real_fixture_reads_and_round_trips_in_rust() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    for f in files {
        let bytes = std::fs::read(&f).expect("read fixture");
        let s = read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!s.segments.is_empty(), "{}: no segments read", f.display());
        let again = read(&write(&s)).unwrap_or_else(|e| panic!("{}: re-read: {e}", f.display()));
        assert_eq!(fingerprint(&s), fingerprint(&again), "{}", f.display());
        // Interning keeps sharing: no more distinct stacks than PyTorch wrote frame lists.
        assert_eq!(
            s.stacks.stack_count(),
            again.stacks.stack_count(),
            "{}",
            f.display()
        );
        assert_eq!(
            s.stacks.frame_count(),
            again.stacks.frame_count(),
            "{}",
            f.display()
        );
    }
}

/// A read that skips frames (`memsnap stats`) gives the full read's snapshot without any stack,
/// and the same counts and totals: the skipped lists are dropped as they come, so nothing but
/// the stacks may differ.
#[test]
fn a_read_skipping_frames_is_the_full_read_without_stacks() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    for f in files {
        let bytes = std::fs::read(&f).expect("read fixture");
        let name = f.display();
        let full = read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let skip = read_with(&bytes, Frames::Skip, &mut |_| {})
            .unwrap_or_else(|e| panic!("{name}, skipping frames: {e}"));
        assert_eq!(skip.stacks.stack_count(), 0, "{name}: a stack was kept");
        let all_segments = skip
            .segments
            .iter()
            .chain(skip.host_segments.iter().flatten());
        for seg in all_segments {
            assert!(seg.frames.is_none(), "{name}: a segment kept its frames");
            assert!(
                seg.blocks.iter().all(|b| b.frames.is_none()),
                "{name}: a block kept its frames"
            );
        }
        let entries = skip.device_traces.iter().flatten().flatten();
        assert!(
            entries
                .chain(skip.host_traces.iter().flatten())
                .all(|e| e.frames().is_none()),
            "{name}: a trace entry kept its frames"
        );
        assert_eq!(
            fingerprint_of(&full, Frames::Skip),
            fingerprint_of(&skip, Frames::Skip),
            "{name}"
        );
        assert_eq!(Summary::of(&full), Summary::of(&skip), "{name}");
        assert_eq!(HostSummary::of(&full), HostSummary::of(&skip), "{name}");
        assert_eq!(pool_totals(&full), pool_totals(&skip), "{name}");
    }
}

/// Reads `bytes` through `Streaming`, `chunk` bytes more each time, as the viewer's worker
/// parses a file while it is read.
fn streamed(bytes: &[u8], chunk: usize) -> Result<Snapshot, memsnap_core::snapshot::ReadError> {
    let mut s = Streaming::new(bytes.len())?;
    let mut end = 0;
    loop {
        end = (end + chunk).min(bytes.len());
        if let Some(snapshot) = s.advance(&bytes[..end], &mut |_| {})? {
            assert_eq!(end, bytes.len(), "a snapshot before the input's end");
            return Ok(snapshot);
        }
        assert!(end < bytes.len(), "no snapshot at the input's end");
    }
}

/// A real pickle streamed in chunks of any size, down to one byte, reads to the same snapshot
/// as the whole file (the writer's bytes of both are equal), and a truncated one fails with
/// the same error: the page parses picked files as they are read (`app/src/worker/streaming`).
#[test]
fn real_fixtures_read_the_same_streamed_in_chunks() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    let mut streamed_files = 0;
    for f in files {
        let bytes = std::fs::read(&f).expect("read fixture");
        if !Streaming::suits(&bytes) {
            continue;
        }
        streamed_files += 1;
        let whole = read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let expected = write(&whole);
        // The browser's chunks are 64 kB to 1 MB; odd sizes split every kind of opcode.
        let mut chunks = vec![1 << 20, 65536, 4093, 977];
        if bytes.len() <= 256 << 10 {
            chunks.push(1);
        }
        for chunk in chunks {
            let s = streamed(&bytes, chunk)
                .unwrap_or_else(|e| panic!("{} in {chunk}-byte chunks: {e}", f.display()));
            assert!(
                write(&s) == expected,
                "{} in {chunk}-byte chunks reads otherwise",
                f.display()
            );
        }
        let cut = &bytes[..bytes.len() * 2 / 3];
        let whole_error = read(cut).err();
        assert!(
            whole_error.is_some(),
            "{}: cut short, still reads",
            f.display()
        );
        assert_eq!(
            streamed(cut, 4093).err(),
            whole_error,
            "{}: cut short",
            f.display()
        );
    }
    assert!(
        streamed_files >= 10,
        "only {streamed_files} pickles streamed"
    );
}
