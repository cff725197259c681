//! The Web Worker: parses and holds the snapshot, answers the page's requests (see `protocol`).

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    memsnap_app::worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("memsnap-worker runs in the browser as a Web Worker: build it with `trunk build`");
}
