//! A distributed job's snapshot folder, made for page tests and benchmarks: rank files from the
//! `capture` binary (one scenario, a different seed per rank, so sizes and peaks vary), copies
//! of real fixtures among them, and optionally a corrupt file.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::memsnap_bin;

/// One rank of a data-parallel training job: weights of a drawn size, then `{steps}` steps of
/// eight activations sized by a drawn sequence length, freed in reverse. `{steps}` is replaced
/// before use: it sets the file's size (about 1 kB per step).
const RANK_SCENARIO: &str = r#"
[scenario]
name = "rank"
description = "one rank of a data-parallel job: weights, then training steps of drawn sequence length"
capacity = "80GB"

[[step]]
alloc = "weights"
size = "rand(1, 8) * 128MiB"
name = "Model.__init__"

[[step]]
repeat = {steps}
var = "s"
name = "train_step"

[[step]]
let = "seq"
value = "rand(128, 2048)"

[[step]]
repeat = 8
var = "l"
name = "forward"

[[step]]
alloc = "act{l}"
size = "seq * 96KiB"
name = "Block.forward"

[[step]]
end = true

[[step]]
repeat = 8
var = "l"
name = "backward"

[[step]]
free = "act{l}"
name = "Block.backward"

[[step]]
end = true

[[step]]
end = true
"#;

/// Writes the scenario for `steps` training steps into `dir` and returns its path.
pub fn scenario(dir: &Path, steps: u32) -> PathBuf {
    let path = dir.join(format!("rank-{steps}-steps.toml"));
    std::fs::write(&path, RANK_SCENARIO.replace("{steps}", &steps.to_string()))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// Runs `capture` for one rank file.
pub fn capture(scenario: &Path, seed: u64, out: &Path) {
    let status = Command::new(memsnap_bin::capture_path())
        .arg("--scenario")
        .arg(scenario)
        .args(["--seed", &seed.to_string(), "--quiet", "-o"])
        .arg(out)
        .status()
        .expect("running capture");
    assert!(status.success(), "capture for {} failed", out.display());
}

/// `rank{r}.pickle` in `dir`.
pub fn rank_path(dir: &Path, rank: usize) -> PathBuf {
    dir.join(format!("rank{rank}.pickle"))
}

/// Fills `dir` with `generated` distinct captures (seed = rank, steps spread over `steps`, so
/// sizes and peaks vary) named `rank0.pickle`...; more ranks (up to `ranks`) are copies: each of
/// `real` once, then real files and captures in turn. Returns the paths in rank order.
pub fn job_folder(
    dir: &Path,
    ranks: usize,
    generated: usize,
    steps: (u32, u32),
    real: &[PathBuf],
) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let generated = generated.clamp(1, ranks.max(1));
    let (lo, hi) = (steps.0.min(steps.1), steps.0.max(steps.1));
    let mut paths: Vec<PathBuf> = Vec::with_capacity(ranks);
    for r in 0..ranks {
        let path = rank_path(dir, r);
        if r < generated {
            // A fixed stride through the range, so neighbouring ranks differ.
            let steps = lo + (r as u32).wrapping_mul(7919) % (hi - lo + 1);
            let scenario = scenario(dir, steps);
            capture(&scenario, r as u64, &path);
            std::fs::remove_file(&scenario).ok();
        } else {
            // Every real fixture once first (so sets of any size hold the same largest file),
            // then a real fixture and an earlier capture in turn.
            let k = r - generated;
            let from = match k.checked_sub(real.len()) {
                None => real[k].clone(),
                Some(j) if j.is_multiple_of(2) && !real.is_empty() => {
                    real[j / 2 % real.len()].clone()
                }
                Some(j) => paths[j % generated].clone(),
            };
            // A hard link where it can (benchmark sets reach gigabytes), else a copy.
            std::fs::remove_file(&path).ok();
            if std::fs::hard_link(&from, &path).is_err() {
                std::fs::copy(&from, &path)
                    .unwrap_or_else(|e| panic!("{} -> {}: {e}", from.display(), path.display()));
            }
        }
        paths.push(path);
    }
    paths
}
