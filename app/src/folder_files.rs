//! Which files of an opened folder are snapshots. A job's output folder holds more than its
//! rank files (logs, configs, `.DS_Store`), and each file opened is a rank in the overview.

/// Endings of the files memsnap reads (pickles, gzipped or not).
const SNAPSHOT_ENDINGS: [&str; 5] = [".pickle", ".pkl", ".pk", ".pickle.gz", ".pkl.gz"];

/// The indices of `names` to open from a folder: those with a snapshot's ending (any case),
/// hidden files left out; when no name has such an ending, every file that is not hidden (the
/// user chose this folder for its snapshots, whatever they are called).
pub fn snapshot_files(names: &[String]) -> Vec<usize> {
    let visible: Vec<usize> = (0..names.len())
        .filter(|&i| !names[i].starts_with('.'))
        .collect();
    let snapshots: Vec<usize> = visible
        .iter()
        .copied()
        .filter(|&i| {
            let lower = names[i].to_ascii_lowercase();
            SNAPSHOT_ENDINGS.iter().any(|e| lower.ends_with(e))
        })
        .collect();
    if snapshots.is_empty() {
        visible
    } else {
        snapshots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn keeps_snapshots_and_drops_the_rest() {
        let n = names(&[
            "rank0.pickle",
            "train.log",
            ".DS_Store",
            "RANK1.PKL",
            "rank2.pickle.gz",
            "config.yaml",
        ]);
        assert_eq!(snapshot_files(&n), vec![0, 3, 4]);
    }

    #[test]
    fn without_any_snapshot_ending_every_visible_file() {
        let n = names(&["rank0.bin", ".hidden", "rank1.bin"]);
        assert_eq!(snapshot_files(&n), vec![0, 2]);
        assert_eq!(snapshot_files(&[]), Vec::<usize>::new());
    }
}
