//! app/assets/example.pickle is what scripts/gen/make-example.sh makes: `capture --scenario
//! oom --seed 0`. A change to the scenario or the allocator model shows up here as a stale
//! asset, to be regenerated with that script.

mod common;

use std::path::Path;

#[test]
fn example_asset_is_current() {
    let asset = Path::new(env!("CARGO_MANIFEST_DIR")).join("../app/assets/example.pickle");
    let committed = std::fs::read(&asset).expect("app/assets/example.pickle is in the repository");
    let dir = common::temp_dir("example");
    let out = dir.join("example.pickle");
    let o = common::capture(&[
        "--scenario",
        "oom",
        "--seed",
        "0",
        "--quiet",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let fresh = std::fs::read(&out).unwrap();
    assert!(
        fresh == committed,
        "app/assets/example.pickle is stale: run scripts/gen/make-example.sh"
    );
    assert!(
        committed.len() < 400_000,
        "the example stays small: {} bytes",
        committed.len()
    );
}
