//! The built-in scenarios: scenario files shipped in `capture/scenarios/`, embedded so the
//! binary needs nothing beside it. Each file's header comment documents what it shows.

use super::error::ScenarioError;
use super::file;
use super::program::Scenario;

/// (name, file name frames carry, text).
pub const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "churn",
        "scenarios/churn.toml",
        include_str!("../../scenarios/churn.toml"),
    ),
    (
        "varying-seqlen",
        "scenarios/varying-seqlen.toml",
        include_str!("../../scenarios/varying-seqlen.toml"),
    ),
    (
        "fixed-shape",
        "scenarios/fixed-shape.toml",
        include_str!("../../scenarios/fixed-shape.toml"),
    ),
    (
        "multi-stream",
        "scenarios/multi-stream.toml",
        include_str!("../../scenarios/multi-stream.toml"),
    ),
    (
        "pinning",
        "scenarios/pinning.toml",
        include_str!("../../scenarios/pinning.toml"),
    ),
    (
        "kv-cache",
        "scenarios/kv-cache.toml",
        include_str!("../../scenarios/kv-cache.toml"),
    ),
    (
        "oom",
        "scenarios/oom.toml",
        include_str!("../../scenarios/oom.toml"),
    ),
    // The viewer's bundled example (app/assets/example.pickle) is made from `oom`
    // (scripts/gen/make-example.sh); this one is a small run with pinning and pending frees.
    (
        "example",
        "scenarios/example.toml",
        include_str!("../../scenarios/example.toml"),
    ),
];

pub fn names() -> Vec<&'static str> {
    BUILTIN.iter().map(|(n, _, _)| *n).collect()
}

/// The built-in scenario `name`, parsed; `None` when there is no such built-in.
pub fn get(name: &str) -> Option<Result<Scenario, ScenarioError>> {
    BUILTIN
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(n, path, text)| file::parse(text, path, n))
}

/// `--scenario NAME_OR_FILE`: a built-in by name, else a file path.
pub fn load(name_or_file: &str) -> Result<Scenario, ScenarioError> {
    if let Some(s) = get(name_or_file) {
        return s;
    }
    let path = std::path::Path::new(name_or_file);
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: name_or_file.to_string(),
        line: 0,
        column: 0,
        message: if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "no such file, and not a built-in scenario (built-ins: {})",
                names().join(", ")
            )
        } else {
            format!("cannot read: {e}")
        },
    })?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("scenario");
    file::parse(&text, name_or_file, stem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::run::{run, Counter};

    #[test]
    fn every_builtin_parses_and_runs() {
        for name in names() {
            let s = get(name).unwrap().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(s.name, name);
            assert!(!s.description.is_empty(), "{name} has no description");
            let mut c = Counter::default();
            let n = run(&s, 1, &mut c).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(n > 10, "{name}: only {n} actions");
        }
    }
}
