//! Pickle bytes -> [`Snapshot`].
//!
//! This is the project's own small pickle machine, not serde-pickle: serde-pickle 1.2's
//! `value_from_slice` rejects 13 of the 15 real fixtures ("recursive structure found": it
//! treats every memo reference to a shared frame dict as a cycle) and decodes at 52–78 MB/s,
//! below CPython's `pickle.loads` (91–108 MB/s) on the same files. Snapshots are memo-heavy
//! (one large file has 738k memo gets), so the reader keeps sharing as sharing:
//!
//! 1. `pickle` runs the opcodes into an arena of nodes; a memo get pushes a node id, never a
//!    copy, so memo "bombs" stay linear. Nothing is ever imported or called: every opcode that
//!    would (GLOBAL, REDUCE, BUILD, ...) is refused with its name and byte offset. The dicts of
//!    `device_traces` (most of a large file) skip the arena: the machine writes them straight
//!    into typed trace entries (`pickle/entries.rs`), and lists of equal items share theirs.
//! 2. `schema` turns nodes into the typed model, interning each distinct frame dict and frame
//!    list node once into [`Stacks`](super::model::Stacks), and leftovers into [`Value`](super::Value)s that
//!    share by `Arc` as the nodes did (`values`).
//!
//! A read for a command that shows no stack ([`Frames::Skip`], `memsnap stats`) checks the frames
//! as these two steps do but builds no stacks: a trace entry's frame list drops its items as they
//! come. Where that pass refuses a file, the full read runs, so both accept and refuse alike.
//!
//! Gzip input (magic `1f 8b`) is inflated first (`gzip`), up to a bound. JSON text (the same
//! dict, as PyTorch's viewer also opens) is parsed into the same node arena (`json`), so the
//! schema, limits and messages are the pickle's.

mod arena;
mod error;
mod frames;
mod gzip;
mod json;
mod pickle;
mod schema;
mod text;
mod values;

use super::model::Snapshot;

pub use error::ReadError;
pub use frames::Frames;

/// Largest pickle read (raw, or after gunzip): 2 GiB. Reading keeps the whole input, the node
/// arena of everything but trace entries, and the typed model in memory at once: measured at
/// 2-3x the input (a 1 GiB generated file of 23.8M entries peaked at 3.2 GB RSS), so 2 GiB is
/// about what a 4 GiB wasm instance can hold; node ids and offsets are also 32-bit.
pub const MAX_INPUT_BYTES: u64 = 2 << 30;

/// Whether `bytes` start as one of the forms [`read`] takes: a pickle of protocol 2 or later
/// (PROTO first), gzip data or JSON. On anything else a reading error is better told as "not
/// a snapshot" than as the opcode the reader stopped at (a stray file among snapshots).
pub fn starts_like_a_snapshot(bytes: &[u8]) -> bool {
    bytes.first() == Some(&super::opcodes::PROTO) || gzip::is_gzip(bytes) || json::is_json(bytes)
}

/// Reads a snapshot (pickle or JSON, either possibly gzipped).
pub fn read(bytes: &[u8]) -> Result<Snapshot, ReadError> {
    read_with_progress(bytes, &mut |_| {})
}

/// As [`read`], calling `progress` now and then with the number of input bytes consumed so far
/// (monotonic, ending at `bytes.len()`), for a progress bar.
pub fn read_with_progress(
    bytes: &[u8],
    progress: &mut dyn FnMut(u64),
) -> Result<Snapshot, ReadError> {
    read_with(bytes, Frames::Keep, progress)
}

/// As [`read_with_progress`], keeping or skipping the stacks.
pub fn read_with(
    bytes: &[u8],
    frames: Frames,
    progress: &mut dyn FnMut(u64),
) -> Result<Snapshot, ReadError> {
    if frames == Frames::Keep {
        return read_inner(bytes, Frames::Keep, progress);
    }
    // A second pass reports only past where the first got to: progress stays monotonic.
    let mut reached = 0;
    let mut onward = |n: u64| {
        if n > reached {
            reached = n;
            progress(n);
        }
    };
    // The skipping read's own refusals (a skipped list referenced elsewhere, a frame that is
    // not one) are not told: the full read takes the file, or says what is wrong with it.
    read_inner(bytes, Frames::Skip, &mut onward)
        .or_else(|_| read_inner(bytes, Frames::Keep, &mut onward))
}

fn read_inner(
    bytes: &[u8],
    frames: Frames,
    progress: &mut dyn FnMut(u64),
) -> Result<Snapshot, ReadError> {
    if bytes.is_empty() {
        return Err(ReadError::whole("empty input: not a pickle"));
    }
    let total = bytes.len() as u64;
    if gzip::is_gzip(bytes) {
        let limit = gzip::MAX_INFLATED.min(MAX_INPUT_BYTES);
        let inflated = gzip::inflate(bytes, limit, &mut |n| progress(n / 2))?;
        // Parse progress maps onto the second half of the compressed input's length.
        let out_len = inflated.len().max(1) as u64;
        let mut scaled =
            |pos: u64| progress(total / 2 + pos.min(out_len) * (total - total / 2) / out_len);
        return decode(&inflated, frames, &mut scaled).map_err(|mut e| {
            e.message.push_str(" (offset in the gunzipped data)");
            e
        });
    }
    decode(bytes, frames, progress)
}

fn decode(
    bytes: &[u8],
    frames: Frames,
    progress: &mut dyn FnMut(u64),
) -> Result<Snapshot, ReadError> {
    too_large(bytes.len())?;
    let (arena, traces) = if json::is_json(bytes) {
        (json::parse(bytes, progress)?, Vec::new())
    } else {
        pickle::parse(bytes, frames, progress)?
    };
    let snapshot = schema::build(&arena, traces, bytes.len() as u64, frames)?;
    progress(bytes.len() as u64);
    Ok(snapshot)
}

fn too_large(len: usize) -> Result<(), ReadError> {
    if len as u64 > MAX_INPUT_BYTES {
        return Err(ReadError::whole(format!(
            "the snapshot is {len} bytes, larger than the {} GiB memsnap reads (reading needs about 3 times the file size in memory)",
            MAX_INPUT_BYTES >> 30
        )));
    }
    Ok(())
}

/// A snapshot read as its bytes arrive, so that parsing overlaps reading (the viewer's worker
/// parses each chunk of a picked file while the browser fetches the next). Raw pickles only
/// ([`Streaming::suits`]); the result, errors included, is [`read`]'s on the whole input.
pub struct Streaming<'a> {
    machine: pickle::Incremental<'a>,
    total: usize,
}

impl<'a> Streaming<'a> {
    /// Whether an input starting with `first` (a few bytes at least) can be read this way: a
    /// pickle, not gzip or JSON.
    pub fn suits(first: &[u8]) -> bool {
        !first.is_empty() && !gzip::is_gzip(first) && !json::is_json(first)
    }

    /// For an input of `total` bytes.
    pub fn new(total: usize) -> Result<Streaming<'a>, ReadError> {
        too_large(total)?;
        if total == 0 {
            return Err(ReadError::whole("empty input: not a pickle"));
        }
        Ok(Streaming {
            machine: pickle::Incremental::new(total),
            total,
        })
    }

    /// Reads on with `prefix`, the input so far: each call's extends the last, with the same
    /// bytes where they overlap. `None` until `prefix` is the whole input, then the snapshot.
    pub fn advance(
        &mut self,
        prefix: &'a [u8],
        progress: &mut dyn FnMut(u64),
    ) -> Result<Option<Snapshot>, ReadError> {
        let Some((arena, traces)) = self.machine.advance(prefix, progress)? else {
            return Ok(None);
        };
        let snapshot = schema::build(&arena, traces, self.total as u64, Frames::Keep)?;
        progress(self.total as u64);
        Ok(Some(snapshot))
    }
}

#[cfg(test)]
mod tests;
