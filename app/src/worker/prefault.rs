//! The worker's first file parsed at half its later speed even once the code was warm: its
//! parse was the first to touch most of the heap it used, and each fresh page of wasm memory
//! costs a fault on first write. Parsing cs336-a-2.7b-forward right after six passes over a
//! smaller real file still took 15–23 ms, against 13–14 ms after passes over a larger one and
//! 9–12 ms warm (scripts/profile/profile_page.py). So the first read touches the heap the parse will
//! use, while the browser fetches the file's bytes and the worker would otherwise wait.
//!
//! In fresh browsers (page bench, `BENCH_PAGE_ONLY`, 4 runs each): the first parse of
//! cs336-a-2.7b-forward 23.9 → 17.9 ms (median), of cs336-d-fullstep 18.2 → 14.7 ms; the read
//! before it about 1.5 ms longer; the worker 0.2 and 1.0 MB larger.
//!
//! Taken as one block, the 1.5 × the file fitted in none of the heap the warm-up had freed, so
//! it grew the memory by its whole size: the worker after a first open held 1.0–1.2 MB more
//! than the parse needed on the 1–1.4 MB files. In 256 KiB chunks it fills that free heap
//! first (page bench, worker memory after the first open, deterministic per build):
//! select-n-multidevice and cs336-c-medium128-inference 4.72 → 3.54 MB,
//! cs336-a-ctx128-forward-mixed 5.05 → 4.00, eor-nn-snapshot-actions 4.19 → 3.01,
//! cs336-d-fullstep 11.08 → 10.03, two others 0.06 and 0.13 lower, three 0.07 higher.

use std::cell::Cell;

/// Heap touched per byte of the first file, in halves: the parse's working set beyond the
/// input, which the worker's memory after opening the real fixtures puts at 1.5–2 times the
/// file. Twice the file left the worker 1–3 MB larger on 3–4 MB files than without.
const HALVES_PER_BYTE: usize = 3;
/// Files larger than this are not helped: their parse amortises the faults (the large file's
/// worker pipeline is within 1.2–1.5× native), and touching 1.5 times their size ahead would
/// only move the faults earlier.
const LARGEST: usize = 64 << 20;
const PAGE: usize = 4096;
/// The pieces the heap is taken in.
const CHUNK: usize = 256 << 10;

thread_local! {
    static DONE: Cell<bool> = const { Cell::new(false) };
}

/// Touches 1.5 × `size` bytes of heap and frees them, the first time only: the memory
/// stays the allocator's, its pages faulted in, for the parse that follows. The bytes are
/// taken in chunks so that the allocator places them in the free heap it already has (the
/// warm-up's, whose pages are faulted in) before it grows the memory: one block of 1.5 × the
/// file fitted in no free hole, so it grew the memory by its whole size.
pub fn first_file(size: usize) {
    if DONE.replace(true) || size > LARGEST {
        return;
    }
    let mut left = size * HALVES_PER_BYTE / 2;
    // Freed at the end of this function, back to the allocator.
    let mut chunks: Vec<Vec<u8>> = Vec::with_capacity(left / CHUNK + 1);
    while left > 0 {
        let n = left.min(CHUNK);
        let mut chunk: Vec<u8> = Vec::with_capacity(n);
        let base = chunk.as_mut_ptr();
        for offset in (0..n).step_by(PAGE) {
            // SAFETY: within the chunk's capacity; writing uninitialised spare capacity is
            // allowed, and nothing reads it. Volatile so that the writes are not optimised away.
            unsafe { base.add(offset).write_volatile(0) };
        }
        chunks.push(chunk);
        left -= n;
    }
}
