//! The page: mounts the Leptos app (the worker is `bin/memsnap-worker.rs`).

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(memsnap_app::app::App);
}

/// Natively there is no page; this binary exists for Trunk's wasm build.
#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("memsnap-app runs in the browser: build it with `trunk build` (see README.md)");
}
