//! The wasm stacks of the page and of its worker. Rust's wasm32 default is 1 MiB each, and a
//! wasm instance holds its stack for good: 2 MiB of every open page, which on a 10 kB file was
//! a third of memsnap's memory (page bench). The worker's deepest is the JSON reader at its
//! 256-level limit (`snapshot/read/json.rs`): tests/tests/page_deep.rs overflowed a 64 KiB stack
//! there and passed with 128 KiB, as did every page test. The page reads no snapshot; every page
//! test (all 21 files) passed with a 32 KiB page stack. Twice what passed is the margin; what
//! grows with the input (a stack's frames) never recurses (`analysis::flamegraph`).

/// Bytes of wasm stack of the worker instance.
const WORKER_STACK: u32 = 256 << 10;
/// Bytes of wasm stack of the page instance.
const PAGE_STACK: u32 = 64 << 10;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-bin=memsnap-worker=-zstack-size={WORKER_STACK}");
        println!("cargo:rustc-link-arg-bin=memsnap-app=-zstack-size={PAGE_STACK}");
    }
}
