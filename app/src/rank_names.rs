//! Rank numbers of files opened together (one file per rank of a distributed job).

/// The rank each file stands for, in the order given: the number after "rank" in every file's
/// name when all names have one and no two share it (`rank3.pickle`, `snap_rank_12.pkl`),
/// else the files' order (0, 1, ...), so a rank is never shown twice.
pub fn rank_numbers(names: &[String]) -> Vec<u32> {
    let named: Option<Vec<u32>> = names.iter().map(|n| rank_in_name(n)).collect();
    match named {
        Some(ranks) if !has_duplicates(&ranks) => ranks,
        _ => (0..names.len() as u32).collect(),
    }
}

/// The digits right after the last "rank" (any case, optionally followed by `_`, `-` or `.`).
fn rank_in_name(name: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    let after = &lower[lower.rfind("rank")? + 4..];
    let after = after.trim_start_matches(['_', '-', '.']);
    let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

fn has_duplicates(ranks: &[u32]) -> bool {
    let mut sorted = ranks.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).any(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ranks_from_names() {
        let got = rank_numbers(&names(&[
            "rank1.pickle",
            "Rank_0.pickle",
            "job-rank-12.pkl",
        ]));
        assert_eq!(got, vec![1, 0, 12]);
    }

    #[test]
    fn order_when_a_name_has_no_rank_or_two_share_one() {
        assert_eq!(
            rank_numbers(&names(&["rank1.pickle", "b.pickle"])),
            vec![0, 1]
        );
        assert_eq!(rank_numbers(&names(&["rank1.a", "rank1.b"])), vec![0, 1]);
        assert_eq!(rank_numbers(&names(&["ranking.pickle"])), vec![0]);
    }
}
