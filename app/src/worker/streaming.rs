//! Opening a picked file by parsing it while it is read (`snapshot::Streaming`): each chunk
//! the browser hands over is parsed while it fetches the next, instead of the parse starting
//! once the last chunk is in. Small files, gzip and JSON files, and a file that grows while it
//! is read, are parsed whole afterwards as before.
//!
//! The worker's read and parse together (scripts/profile/profile_page.py at a 100 ms sampling
//! interval, medians of 3 fresh pages, first open / later opens): cs336-a-2.7b-forward
//! 30.9 / 24.9 → 28.0 / 17.9 ms, cs336-d-fullstep 31.2 / 23.5 → 28.8 / 20.9 ms; but
//! select-n-multidevice (1.2 MB, two chunks) 14.7 / 10.5 → 17.5 / 12.0 ms, hence `SMALLEST`.

use memsnap_core::snapshot::{ReadError, Snapshot, Streaming};
use web_sys::File;

use super::file;
use crate::perf;
use crate::protocol::RequestId;

/// A file read, and parsed if it streamed.
pub enum Read {
    /// Parsed while read: the result, and the milliseconds spent waiting for and copying bytes
    /// (`read_ms`) and parsing (`parse_ms`), which together are the read's wall time.
    Parsed {
        parsed: Result<Snapshot, ReadError>,
        size: u64,
        read_ms: f64,
        parse_ms: f64,
    },
    /// Not parsed yet: the bytes, and the milliseconds the read took.
    Bytes { bytes: Vec<u8>, read_ms: f64 },
}

/// Files smaller than this are read whole, then parsed: they come in one or two chunks, so
/// little of the parse can overlap the read, and streaming's scan for where opcodes end costs
/// more than that.
const SMALLEST: usize = 2 << 20;

pub async fn read(id: RequestId, file: &File) -> Result<Read, String> {
    let started = perf::now();
    let total = file.size() as usize;
    let mut stream: Option<Streaming<'static>> = None;
    let mut decided = false;
    let mut parsed = None;
    let mut parse_ms = 0.0;
    let bytes = file::read_each(id, file, file::Buffer::Release, &mut |so_far| {
        if parsed.is_some() {
            return;
        }
        if !std::mem::replace(&mut decided, true) && total >= SMALLEST && Streaming::suits(so_far) {
            stream = Streaming::new(total).ok();
        }
        if so_far.len() > total {
            // The buffer has grown, and moved: what the parse holds is gone. Dropping it reads
            // none of it.
            stream = None;
        }
        let Some(s) = stream.as_mut() else {
            return;
        };
        // SAFETY: `read_each` fills one buffer of the file's size, which stays where it is
        // while the file is no longer (checked above), and never writes the bytes it has handed
        // over; the parse is dropped before the buffer (below, or unread if the read fails).
        let prefix: &'static [u8] =
            unsafe { std::slice::from_raw_parts(so_far.as_ptr(), so_far.len()) };
        let at = perf::now();
        let step = s.advance(prefix, &mut |_| {});
        parse_ms += perf::now() - at;
        // One measure per chunk parsed: scripts/profile/profile_page.py shows how they interleave.
        perf::measure_since(perf::WORKER_PARSE, at);
        match step {
            Ok(None) => {}
            Ok(Some(snapshot)) => parsed = Some(Ok(snapshot)),
            Err(e) => parsed = Some(Err(e)),
        }
        if parsed.is_some() {
            stream = None;
        }
    })
    .await;
    // Before the buffer goes, whichever way the read ended.
    drop(stream);
    let bytes = bytes?;
    let wall = perf::now() - started;
    perf::measure_since(perf::WORKER_READ, started);
    Ok(match parsed {
        Some(parsed) => Read::Parsed {
            parsed,
            size: bytes.len() as u64,
            read_ms: wall - parse_ms,
            parse_ms,
        },
        None => Read::Bytes {
            bytes,
            read_ms: wall,
        },
    })
}
