//! Many snapshot files at once (`fleet`, `export`): FILES_OR_DIRS expanded to files, each file
//! numbered with its rank, and one job per file run in parallel (rayon) with a progress bar on
//! a terminal. A bad file never stops the others: its error is kept, the rest run on, and the
//! command fails at the end naming every bad file.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use memsnap_core::rank_name::rank_numbers;
use rayon::prelude::*;

use super::input::CliError;

/// One input file and the rank it stands for.
#[derive(Debug, Clone)]
pub struct RankFile {
    pub path: PathBuf,
    /// The path as printed in messages and stored in summaries.
    pub name: String,
    pub rank: u32,
}

/// The files named, in order, with every directory replaced by all the files under it
/// (recursively, sorted by path). Nothing found under a directory is skipped, hidden files
/// included: a file that is not a snapshot fails later with its own name.
pub fn expand(args: &[String]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for a in args {
        let p = Path::new(a);
        // A path that cannot be read is kept as a file: reading it fails later, named, and
        // the other files still run.
        if p.is_dir() {
            let before = out.len();
            walk(p, &mut out)?;
            if out.len() == before {
                return Err(CliError::new(a.as_str(), "directory holds no files"));
            }
        } else {
            out.push(p.to_path_buf());
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CliError> {
    let what = || dir.display().to_string();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::new(what(), e))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(|e| CliError::new(what(), e))?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

/// Numbers `paths` by [`rank_numbers`] over their file names (`rank12.pickle`, `_r12`,
/// `-12.pickle`; names without one after the largest found).
pub fn ranked(paths: Vec<PathBuf>) -> Vec<RankFile> {
    let names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    let ranks = rank_numbers(&names);
    paths
        .into_iter()
        .zip(ranks)
        .map(|(path, rank)| RankFile {
            name: path.display().to_string(),
            path,
            rank,
        })
        .collect()
}

/// Runs `job` on every file, `jobs` at a time (0 = one per core), and returns the results in
/// the files' order. Each job holds one snapshot at most, so memory stays near `jobs` × the
/// largest file.
pub fn run_all<T: Send>(
    files: &[RankFile],
    jobs: usize,
    label: &str,
    job: impl Fn(&RankFile) -> Result<T, CliError> + Sync,
) -> Result<Vec<Result<T, CliError>>, CliError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| CliError::new("memsnap", format!("cannot start worker threads: {e}")))?;
    let bar = progress(files.len() as u64, label);
    let out = pool.install(|| {
        files
            .par_iter()
            .map(|f| {
                let r = job(f);
                bar.inc(1);
                r
            })
            .collect()
    });
    bar.finish_and_clear();
    Ok(out)
}

fn progress(total: u64, label: &str) -> ProgressBar {
    if total < 2 || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} files ({eta} left)")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(label.to_string());
    bar
}

/// Splits results into the good ones and prints each failure as `memsnap: <file>: <error>`;
/// the error returned (when any failed) says how many failed, as `<command>: ...`.
pub fn report<T>(command: &str, results: Vec<Result<T, CliError>>) -> (Vec<T>, Option<CliError>) {
    let total = results.len();
    let mut good = Vec::new();
    let mut bad = 0;
    for r in results {
        match r {
            Ok(v) => good.push(v),
            Err(e) => {
                eprintln!("memsnap: {e}");
                bad += 1;
            }
        }
    }
    let err = (bad > 0).then(|| {
        CliError::new(
            command,
            format!("{bad} of {total} files failed (each named above)"),
        )
    });
    (good, err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_file_names_not_directories() {
        let files = ranked(vec![
            PathBuf::from("/job/rank_dumps/snap-3.pickle"),
            PathBuf::from("/job/rank_dumps/snap-1.pickle"),
        ]);
        let ranks: Vec<u32> = files.iter().map(|f| f.rank).collect();
        assert_eq!(ranks, vec![3, 1]);
        let files = ranked(vec![
            PathBuf::from("a/x.pickle"),
            PathBuf::from("b/y.pickle"),
        ]);
        let ranks: Vec<u32> = files.iter().map(|f| f.rank).collect();
        assert_eq!(ranks, vec![0, 1]);
    }

    #[test]
    fn directories_expand_sorted_and_missing_paths_stay() {
        let dir = std::env::temp_dir().join(format!("memsnap-many-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in ["b.pickle", "a.pickle", "sub/c.txt", ".hidden"] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let got = expand(&[dir.display().to_string()]).unwrap();
        let want: Vec<PathBuf> = [".hidden", "a.pickle", "b.pickle", "sub/c.txt"]
            .iter()
            .map(|f| dir.join(f))
            .collect();
        assert_eq!(got, want);
        let missing = dir.join("nope");
        let got = expand(&[missing.display().to_string()]).unwrap();
        assert_eq!(got, vec![missing]);
        std::fs::create_dir(dir.join("empty")).unwrap();
        let e = expand(&[dir.join("empty").display().to_string()]).unwrap_err();
        assert_eq!(e.message, "directory holds no files");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
