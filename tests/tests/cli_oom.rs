//! `memsnap oom`: on a two-GPU file built with `capture` whose OOM is on cuda:1, the JSON is
//! exactly core's explanation and the text says the same; on every real fixture (none has an
//! OOM) it runs and says there is none.

use memsnap_core::analysis::oom::{explain_ooms, OomExplanation};
use memsnap_tests::{built, fixtures, memsnap_bin, web::page};

#[test]
fn oom_on_cuda1_matches_core() {
    let dir = fixtures::scratch("cli-oom");
    let file = built::oom_on_cuda1(&dir);
    let path = file.to_str().unwrap();
    let snapshot = page::load(&file);
    let want = explain_ooms(&snapshot).expect("core explains the OOM");

    let got: Vec<OomExplanation> =
        serde_json::from_str(&memsnap_bin::stdout(&["oom", path, "--json"]))
            .expect("oom --json is JSON");
    assert_eq!(
        got, want,
        "memsnap oom --json differs from core's explanation"
    );

    // Device 0 ran without trouble; the failure is cuda:1's, and the model reproduces it.
    assert_eq!(got.len(), 1);
    let o = &got[0];
    assert_eq!(o.device, 1);
    assert_eq!(o.verdicts[0].change, "as recorded");
    assert!(
        !o.verdicts[0].avoided,
        "the replay did not reproduce the OOM"
    );
    assert!(o.requested > o.pools.iter().map(|p| p.largest_free).max().unwrap_or(0));

    let text = memsnap_bin::stdout(&["oom", path]);
    assert!(
        text.contains(&format!(
            "cuda:1 ran out of memory at trace entry {}",
            o.entry
        )),
        "{text}"
    );
    for v in &o.verdicts {
        assert!(text.contains(&v.change), "{text}");
    }
}

#[test]
fn real_fixtures_have_no_oom() {
    let Some(files) = fixtures::real_fixtures() else {
        return;
    };
    for f in files {
        let path = f.to_str().unwrap();
        let snapshot = page::load(&f);
        let ooms = explain_ooms(&snapshot).expect(path);
        let text = memsnap_bin::stdout(&["oom", path]);
        if ooms.is_empty() {
            assert!(text.contains("no out-of-memory error"), "{path}: {text}");
        } else {
            assert!(text.contains("ran out of memory"), "{path}: {text}");
        }
    }
}
