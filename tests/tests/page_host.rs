//! Pinned host memory in the page: the device picker offers "host (pinned)" beside the CUDA
//! devices; picking it shows the host segments with core's figures (`HostSummary`), its
//! timeline, and says that what-if and the allocator fixes (the CUDA caching allocator's
//! policy) do not apply. The file is BUILT by tests/py/add_host_memory.py from a real fixture
//! (no real fixture has host memory). Screenshot: target/screenshots/host-memory.png.

use memsnap_core::analysis::summary::HostSummary;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, testid, wait_until, Expected};

#[tokio::test(flavor = "current_thread")]
async fn host_memory_is_its_own_device() {
    let Some(dist) = dist_dir() else { return };
    let dir = fixtures::scratch("page-host");
    let Some(file) = fixtures::built_host_memory(&dir) else {
        return;
    };
    let snap = page::load(&file);
    let host = HostSummary::of(&snap).expect("the built file has host memory");
    let want_host = Expected {
        segments: host.segments,
        blocks: host.blocks,
        reserved: host.reserved_bytes,
        allocated: host.allocated_bytes,
        largest_free: host.largest_free_block_bytes,
    };
    // The CUDA device's figures, unchanged by the host memory beside them.
    let want_cuda = page::expected_on(&snap, 0);
    assert_ne!(want_host, want_cuda);

    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    page::pick_file(c, &file).await;
    let name = file.file_name().unwrap().to_str().unwrap().to_string();
    page::wait_file_name(c, &name).await;
    page::wait_shown(c, &name, &want_cuda).await;

    let option = page::find_css(
        c,
        &format!("{} option[data-kind=host]", testid("device-picker")),
    )
    .await;
    let label = option.text().await.unwrap();
    assert!(label.starts_with("host (pinned)"), "{label}");
    let value = option.prop("value").await.unwrap().expect("a value");
    c.execute(
        &format!(
            "const s = document.querySelector('{}'); s.value = arguments[0]; \
             s.dispatchEvent(new Event('change'));",
            testid("device-picker")
        ),
        vec![serde_json::Value::String(value)],
    )
    .await
    .unwrap();
    page::wait_shown(c, &name, &want_host).await;

    // Its own trace gives it a timeline; the CUDA allocator's replay is refused, saying why.
    page::find(c, "timeline").await;
    let note = wait_until("the what-if note for host memory", || async {
        page::text(c, "whatif-host").await
    })
    .await;
    assert!(note.contains("not applied to host memory"), "{note}");
    page::find(c, "insight-host").await;
    page::scroll_to(c, "segment-view").await;
    page::screenshot(c, "host-memory").await;
    page::scroll_to(c, "whatif-host").await;
    page::screenshot(c, "host-memory-whatif").await;
    site.browser.close().await;
}
