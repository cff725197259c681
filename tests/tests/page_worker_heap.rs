//! What the viewer's worker holds outside its wasm memory once a file is open, read through a
//! DevTools connection of the test's own (`web/workers.rs`, the page bench's reader): its JS
//! heap, and no `ArrayBuffer` left over from reading the file. The worker used to keep its 1 MiB
//! read buffer for the next file (1.09 MB of `ArrayBuffer`s after any open); only a rank pool's
//! workers, which read file after file, keep it now (`worker/file.rs`, `Buffer`).

use memsnap_tests::fixtures::workspace_root;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page;
use memsnap_tests::web::workers;

#[tokio::test(flavor = "current_thread")]
async fn the_viewer_s_worker_keeps_no_read_buffer_after_an_open() {
    let Some(dist) = dist_dir() else { return };
    let path = workspace_root().join("app/assets/example.pickle");
    let snap = page::load(&path);
    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &path).await;
    // The example ends in an OOM, and opens at it.
    page::wait_shown(c, "example.pickle", &page::expected_at_oom(&snap)).await;

    let debugger = site
        .browser
        .debugger
        .clone()
        .expect("chromedriver reports its Chromium's DevTools address");
    let heaps = workers::js_heaps(&debugger)
        .await
        .unwrap_or_else(|e| panic!("reading the workers' heaps: {e}"));
    assert_eq!(heaps.len(), 1, "the viewer's one worker: {heaps:?}");
    let heap = heaps[0];
    assert!(heap.used > 0, "a worker's JS heap is never empty: {heap:?}");
    assert!(
        heap.backing < 512 << 10,
        "the worker still holds {} bytes of ArrayBuffers after reading a 5 kB file",
        heap.backing
    );
    site.browser.close().await;
}
