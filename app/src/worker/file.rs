//! Reading a picked or dropped `File` in the worker, in slices, reporting progress.

use js_sys::Uint8Array;
use web_sys::{File, FileReaderSync};

use super::{js_error, progress};
use crate::protocol::{RequestId, Stage};
use crate::size_limit;

/// Slices this size keep progress moving without many round trips.
const SLICE: f64 = 8.0 * 1024.0 * 1024.0;

pub fn read_all(id: RequestId, file: &File) -> Result<Vec<u8>, String> {
    let name = file.name();
    let fail = |e| format!("{name}: could not read the file: {}", js_error(e));
    let total = file.size();
    // Refused before reading: a file over the limit would exhaust the worker's memory.
    size_limit::check(&name, total as u64)?;
    let reader = FileReaderSync::new().map_err(fail)?;
    let mut out = Vec::with_capacity(total as usize);
    let mut start = 0.0;
    progress(id, Stage::Reading, 0, Some(total as u64));
    while start < total {
        let end = (start + SLICE).min(total);
        let blob = file.slice_with_f64_and_f64(start, end).map_err(fail)?;
        let buffer = reader.read_as_array_buffer(&blob).map_err(fail)?;
        let chunk = Uint8Array::new(&buffer);
        let n = chunk.length() as usize;
        let at = out.len();
        // Straight into the preallocated buffer, without zeroing it first; a file that grew
        // since `size` was read still fits (the Vec grows).
        out.reserve(n);
        chunk.copy_to_uninit(&mut out.spare_capacity_mut()[..n]);
        // SAFETY: copy_to_uninit initialised exactly `n` bytes past `at`.
        unsafe { out.set_len(at + n) };
        start = end;
        progress(id, Stage::Reading, out.len() as u64, Some(total as u64));
    }
    Ok(out)
}
