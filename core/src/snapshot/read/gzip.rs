//! Gzip-compressed snapshots (`foo.pickle.gz`): inflated in memory, up to a bound, so that a
//! small hostile file cannot ask for unbounded memory.

use std::io::Read;

use super::ReadError;

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

pub(super) fn inflate(
    bytes: &[u8],
    limit: u64,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<u8>, ReadError> {
    let mut decoder = flate2::read::MultiGzDecoder::new(Counting {
        rest: bytes,
        consumed: 0,
    });
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = decoder.read(&mut chunk).map_err(|e| {
            ReadError::whole(format!(
                "gzip data is corrupt or truncated after {} inflated bytes: {e}",
                out.len()
            ))
        })?;
        if n == 0 {
            break;
        }
        if out.len() as u64 + n as u64 > limit {
            return Err(ReadError::whole(format!(
                "gzip data inflates to more than {} bytes ({} GiB), the largest snapshot memsnap reads",
                limit,
                limit >> 30
            )));
        }
        out.extend_from_slice(&chunk[..n]);
        progress(decoder.get_ref().consumed);
    }
    if out.is_empty() {
        return Err(ReadError::whole(
            "gzip data inflates to nothing: not a pickle",
        ));
    }
    Ok(out)
}
