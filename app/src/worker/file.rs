//! Reading a picked or dropped `File` in the worker, in slices, reporting progress.
//!
//! Through the file's byte stream into one buffer the worker keeps and reuses (a "BYOB"
//! reader), copied into wasm memory slice by slice. `FileReaderSync` made a new `ArrayBuffer` of
//! each file: garbage once copied, which V8 frees only at a collection and lets grow by tens of
//! MB first, so a pool worker reading file after file held ~60–150 MB of spent buffers (the
//! fleet page's peak grew with the rank count; README, "A whole job"). `FileReaderSync` stays
//! for a browser whose file streams have no BYOB reader.
//!
//! Only a pool worker keeps the buffer between files ([`Buffer::Keep`]): the viewer's worker
//! reads a file now and then, and a kept 1 MiB buffer was memory it held for good
//! (`Runtime.getHeapUsage`'s backing stores: 1.09 MB in the worker after any open).

use std::cell::RefCell;

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    File, FileReaderSync, ReadableStreamByobReader, ReadableStreamGetReaderOptions,
    ReadableStreamReaderMode,
};

use super::post::progress;
use crate::js_error::js_error;
use crate::protocol::{RequestId, Stage};
use crate::size_limit;

/// Slices this size keep progress moving without many round trips.
const SLICE: f64 = 8.0 * 1024.0 * 1024.0;
/// The reused buffer: each read fills at most this much.
const BUFFER: u32 = 1 << 20;

thread_local! {
    /// The buffer each read fills. A BYOB read hands it back as a new view of the same memory
    /// (the old one detached), so it lives here between files; a read that failed loses it and
    /// the next file makes another.
    static BUFFER_VIEW: RefCell<Option<Uint8Array>> = const { RefCell::new(None) };
}

#[wasm_bindgen]
extern "C" {
    /// A `ReadableStream`, for a `getReader` that may throw (web-sys's does not catch).
    #[wasm_bindgen(js_name = ReadableStream)]
    type Stream;
    /// `getReader({mode: "byob"})`, which throws where the stream is not a byte stream.
    #[wasm_bindgen(method, catch, js_name = getReader)]
    fn get_reader(
        this: &Stream,
        options: &ReadableStreamGetReaderOptions,
    ) -> Result<ReadableStreamByobReader, JsValue>;
}

/// Whether the read buffer stays for the next file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    /// Kept: the worker reads file after file (a rank pool's).
    Keep,
    /// Let go once the file is read.
    Release,
}

pub async fn read_all(id: RequestId, file: &File, buffer: Buffer) -> Result<Vec<u8>, String> {
    read_each(id, file, buffer, &mut |_| {}).await
}

/// As `read_all`, calling `on_chunk` with the bytes read so far after each chunk of them (the
/// streaming parse, `worker::streaming`). The buffer is never reallocated while the file is no
/// longer than its size said, so what `on_chunk` saw stays where it was.
pub async fn read_each(
    id: RequestId,
    file: &File,
    buffer: Buffer,
    on_chunk: &mut dyn FnMut(&[u8]),
) -> Result<Vec<u8>, String> {
    let name = file.name();
    let total = file.size();
    // Refused before reading: a file over the limit would exhaust the worker's memory.
    size_limit::check(&name, total as u64)?;
    let fail = |e| format!("{name}: could not read the file: {}", js_error(e));
    let mut out = Vec::with_capacity(total as usize);
    progress(id, Stage::Reading, 0, Some(total as u64));
    let options = ReadableStreamGetReaderOptions::new();
    options.set_mode(ReadableStreamReaderMode::Byob);
    let stream: Stream = file.stream().unchecked_into();
    match stream.get_reader(&options) {
        Ok(reader) => read_byob(id, &reader, total, buffer, &mut out, on_chunk)
            .await
            .map_err(fail)?,
        Err(_) => read_sync(id, file, total, &mut out, on_chunk).map_err(fail)?,
    }
    Ok(out)
}

async fn read_byob(
    id: RequestId,
    reader: &ReadableStreamByobReader,
    total: f64,
    buffer: Buffer,
    out: &mut Vec<u8>,
    on_chunk: &mut dyn FnMut(&[u8]),
) -> Result<(), JsValue> {
    let mut view = BUFFER_VIEW
        .with(|b| b.borrow_mut().take())
        .unwrap_or_else(|| Uint8Array::new_with_length(BUFFER));
    let mut reported = 0;
    // The whole buffer each time (a read answers a view of the part it filled).
    let mut pending = reader.read_with_array_buffer_view(&Uint8Array::new(&view.buffer()));
    // While the browser fetches the first bytes.
    super::prefault::first_file(total as usize);
    loop {
        let result = JsFuture::from(pending).await?;
        let value: Uint8Array = Reflect::get(&result, &"value".into())?.unchecked_into();
        let done = Reflect::get(&result, &"done".into())?
            .as_bool()
            .unwrap_or(true);
        // At the end `value` is an empty view of the buffer, handed back all the same.
        if !value.is_undefined() {
            view = value;
        }
        if done {
            break;
        }
        append(out, &view);
        // Copied out, the buffer can take the next bytes: asked for before `on_chunk` parses,
        // so that the browser reads on meanwhile instead of waiting for the parse.
        pending = reader.read_with_array_buffer_view(&Uint8Array::new(&view.buffer()));
        on_chunk(out);
        if out.len() - reported >= SLICE as usize {
            reported = out.len();
            progress(id, Stage::Reading, out.len() as u64, Some(total as u64));
        }
    }
    reader.release_lock();
    if buffer == Buffer::Keep {
        BUFFER_VIEW.with(|b| *b.borrow_mut() = Some(view));
    }
    progress(id, Stage::Reading, out.len() as u64, Some(total as u64));
    Ok(())
}

fn read_sync(
    id: RequestId,
    file: &File,
    total: f64,
    out: &mut Vec<u8>,
    on_chunk: &mut dyn FnMut(&[u8]),
) -> Result<(), JsValue> {
    let reader = FileReaderSync::new()?;
    let mut start = 0.0;
    while start < total {
        let end = (start + SLICE).min(total);
        let blob = file.slice_with_f64_and_f64(start, end)?;
        let buffer = reader.read_as_array_buffer(&blob)?;
        append(out, &Uint8Array::new(&buffer));
        on_chunk(out);
        start = end;
        progress(id, Stage::Reading, out.len() as u64, Some(total as u64));
    }
    Ok(())
}

/// Copies `chunk` to the end of `out`, which the file's size preallocated; a file that grew
/// since `size` was read still fits (the Vec grows).
fn append(out: &mut Vec<u8>, chunk: &Uint8Array) {
    let n = chunk.length() as usize;
    let at = out.len();
    out.reserve(n);
    // Straight into the spare capacity, without zeroing it first.
    chunk.copy_to_uninit(&mut out.spare_capacity_mut()[..n]);
    // SAFETY: copy_to_uninit initialised exactly `n` bytes past `at`.
    unsafe { out.set_len(at + n) };
}
