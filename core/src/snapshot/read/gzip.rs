//! Gzip-compressed snapshots (`foo.pickle.gz`): inflated in memory, up to a bound, so that a
//! small hostile file cannot ask for unbounded memory.

use std::io::Read;

use super::error::ReadError;

/// Largest inflated size accepted (4 GiB).
pub(super) const MAX_INFLATED: u64 = 4 << 30;

pub(super) fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Counts the compressed bytes the decoder has pulled, for progress.
struct Counting<'a> {
    rest: &'a [u8],
    consumed: u64,
}

impl Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.read(buf)?;
        self.consumed += n as u64;
        Ok(n)
    }
}

/// Most inflated bytes asked of the decoder at once; progress is reported after each read.
const STEP: usize = 1 << 20;
/// Deflate's largest ratio (a stream of one repeated byte), bounding what a trailer may claim.
const MAX_RATIO: u64 = 1032;

/// The inflated size the gzip trailer gives (its last member's length mod 4 GiB: the whole
/// length for the usual single member), no more than deflate could make of `bytes`.
fn size_hint(bytes: &[u8]) -> u64 {
    let Some(&tail) = bytes.last_chunk::<4>() else {
        return 0;
    };
    u64::from(u32::from_le_bytes(tail)).min(bytes.len() as u64 * MAX_RATIO)
}

pub(super) fn inflate(
    bytes: &[u8],
    limit: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<u8>, ReadError> {
    let mut decoder = flate2::read::MultiGzDecoder::new(Counting {
        rest: bytes,
        consumed: 0,
    });
    let corrupt = |after: usize, e: std::io::Error| {
        ReadError::whole(format!(
            "gzip data is corrupt or truncated after {after} inflated bytes: {e}"
        ))
    };
    let too_large = || {
        ReadError::whole(format!(
            "gzip data inflates to more than {} bytes ({} GiB), the largest snapshot memsnap reads",
            limit,
            limit >> 30
        ))
    };
    // Inflated straight into the output, reserved at the size the trailer gives: through a
    // 1 MiB chunk into a doubling vector, the worker's warm-up (34 kB inflating to 0.2 MB) had
    // its largest allocations here, memory a wasm instance keeps.
    let mut out: Vec<u8> = Vec::with_capacity(size_hint(bytes).min(limit) as usize);
    loop {
        let len = out.len();
        let n = if len < out.capacity() {
            let room = (out.capacity() - len).min(STEP);
            out.resize(len + room, 0);
            let n = decoder.read(&mut out[len..]).map_err(|e| corrupt(len, e))?;
            out.truncate(len + n);
            n
        } else {
            // Full as reserved: a small read tells the end from a trailer that said too little,
            // without growing (and copying) the whole output to find out.
            let mut probe = [0u8; 8 << 10];
            let n = decoder.read(&mut probe).map_err(|e| corrupt(len, e))?;
            // Refused before the output grows past the limit for it.
            if len as u64 + n as u64 > limit {
                return Err(too_large());
            }
            if n > 0 {
                out.reserve(STEP.min(len.max(n)));
                out.extend_from_slice(&probe[..n]);
            }
            n
        };
        if n == 0 {
            break;
        }
        if out.len() as u64 > limit {
            return Err(too_large());
        }
        progress(decoder.get_ref().consumed);
    }
    if out.is_empty() {
        return Err(ReadError::whole(
            "gzip data inflates to nothing: not a pickle",
        ));
    }
    Ok(out)
}
