//! A torch_npu snapshot in headless Chromium: the page names the device `npu:0` and says whose
//! allocator rules it models the device under (detected from its sizes, as `memsnap replay` says), ranks fixes in torch_npu's
//! terms (`torch.npu.empty_cache()`, `PYTORCH_NPU_ALLOC_CONF`) equal to core's, and runs a
//! what-if under torch_npu's rules whose figures are core's. Screenshot:
//! target/screenshots/npu-expandable.png.

use memsnap_core::analysis::diagnosis::diagnose_with;
use memsnap_core::analysis::policy::device_config;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_tests::fixtures;
use memsnap_tests::web::dist::dist_dir;
use memsnap_tests::web::page::{self, find_all_css, testid, wait_until};
use memsnap_tests::web::whatif::toggle_expandable_matches_core;

#[tokio::test(flavor = "current_thread")]
async fn npu_file_is_modelled_under_torch_npu_rules() {
    let Some(dist) = dist_dir() else { return };
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let Some(site) = page::Site::open(&dist).await else {
        return;
    };
    let c = &site.browser.client;
    let file = fixtures::real_dir().join("memsnapdump-expandable-empty-cache.pkl");
    let snap = page::load(&file);
    let choice = device_config(&snap, 0).unwrap().choice;
    assert_eq!(choice.rules.name(), "npu");
    page::open_file(c, &file, &snap).await;

    // The device is named for its allocator.
    let option = page::find_css(c, &format!("{} option", testid("device-picker"))).await;
    assert_eq!(
        option.attr("data-kind").await.unwrap().as_deref(),
        Some("npu")
    );
    let label = option.text().await.unwrap();
    assert!(label.starts_with("npu:0 · 3 segments"), "{label}");

    let rules = wait_until("the allocator line", || page::text(c, "insight-allocator")).await;
    assert_eq!(rules, format!("Rules: {}.", choice.describe()));
    assert!(
        rules.contains("torch_npu's caching allocator (detected"),
        "{rules}"
    );

    // The fixes are core's, in torch_npu's terms.
    let tl = Timeline::build(&snap, 0);
    let want = diagnose_with(&snap, 0, &tl).verdicts;
    assert!(want.not_replayed.is_none(), "{:?}", want.not_replayed);
    let shown = wait_until("the ranked fixes", || async {
        let items = find_all_css(c, &format!("{} li", testid("insight-fixes"))).await;
        if items.len() == want.fixes.len() {
            Ok(items)
        } else {
            Err(format!("{} of {} fixes", items.len(), want.fixes.len()))
        }
    })
    .await;
    for (li, f) in shown.iter().zip(&want.fixes) {
        let setting = li.attr("data-setting").await.unwrap().unwrap_or_default();
        assert_eq!(setting, f.setting);
        assert!(
            !setting.contains("torch.cuda") && !setting.contains("CUDA_ALLOC"),
            "{setting}"
        );
    }
    assert!(
        want.fixes[0].setting.contains("torch.npu.empty_cache()"),
        "{:?}",
        want.fixes[0]
    );

    // The what-if under torch_npu's rules: expandable segments (read off the file's segments)
    // turned off, figures equal to core's.
    toggle_expandable_matches_core(c, &snap, &tl).await;
    let allocator = page::attr(c, "whatif-result", "data-allocator")
        .await
        .unwrap();
    assert_eq!(allocator, choice.describe());
    page::screenshot(c, "npu-expandable").await;
}
