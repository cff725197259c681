//! Private pools in `memsnap stats`: no real fixture has a CUDA-graph or MemPool segment, so
//! this builds one from a real file (every third segment moved to pool (1, 7), written by core's
//! writer) and checks `stats --json`'s `pools` against CPython's count from `pickle.load`
//! (tests/py/stats.py), and that the text lists the private pool.

use memsnap_core::snapshot;
use memsnap_tests::{fixtures, memsnap_bin, python, web::page};

const FILE: &str = "cs336-c-medium128-inference.pickle";

#[test]
fn pools_per_device_match_python() {
    let Some(_) = fixtures::real_fixtures() else {
        return;
    };
    let mut snap = page::load(&fixtures::real_dir().join(FILE));
    for (i, s) in snap.segments.iter_mut().enumerate() {
        if i % 3 == 0 {
            s.segment_pool_id = Some((1, 7));
        }
    }
    let dir = fixtures::scratch("cli-pools");
    let path = dir.join("graph-pool.pickle");
    std::fs::write(&path, snapshot::write(&snap)).unwrap();

    let o = memsnap_bin::run(&["stats", "--json", path.to_str().unwrap()], None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let theirs: serde_json::Value =
        serde_json::from_str(&python::run("stats.py", &[&path])).unwrap();
    assert_eq!(ours, theirs);
    let pools = ours["pools"].as_array().unwrap();
    assert_eq!(pools.len(), 2, "{pools:?}");
    assert_eq!(pools[1]["pool_id"], serde_json::json!([1, 7]));
    assert_eq!(
        pools[1]["segments"].as_u64().unwrap(),
        snap.segments.len().div_ceil(3) as u64
    );

    let o = memsnap_bin::run(&["stats", path.to_str().unwrap()], None);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("device 0 private pool (1, 7):"), "{text}");
}
