//! Rank numbers of files opened together (one snapshot per rank of a distributed job). The
//! page, `memsnap fleet` and `memsnap export` all number ranks with this one rule.

/// The rank each file stands for, in the order given: the number [`rank_in_name`] finds in
/// every file's name when all names have one and no two share it, else the files' order
/// (0, 1, ...), so a rank is never shown twice.
pub fn rank_numbers<S: AsRef<str>>(names: &[S]) -> Vec<u32> {
    let named: Option<Vec<u32>> = names.iter().map(|n| rank_in_name(n.as_ref())).collect();
    match named {
        Some(ranks) if !has_duplicates(&ranks) => ranks,
        _ => (0..names.len() as u32).collect(),
    }
}

/// The rank a file name states, first rule that matches (any case; pass the file name, not a
/// path: directories are not read):
/// 1. the digits right after the last "rank", optionally after `_`, `-` or `.`
///    (`rank3.pickle`, `snap_rank_12.pkl`, `Rank-7.pickle`);
/// 2. the digits of an `r` standing alone before them (`snap_r12.pickle`, `r5.pkl`);
/// 3. the digits ending the name without its extensions, alone or after `_`, `-` or `.`
///    (`job-12.pickle`, `snapshot_3.pkl.gz`, `17.pickle`).
pub fn rank_in_name(name: &str) -> Option<u32> {
    let lower = name.to_ascii_lowercase();
    after_rank_word(&lower)
        .or_else(|| after_r(&lower))
        .or_else(|| trailing_number(stem(&lower)))
}

fn leading_number(s: &str) -> Option<u32> {
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

fn is_separator(c: char) -> bool {
    matches!(c, '_' | '-' | '.')
}

fn after_rank_word(lower: &str) -> Option<u32> {
    let after = &lower[lower.rfind("rank")? + 4..];
    leading_number(after.trim_start_matches(is_separator))
}

/// `r` + digits, the `r` at the start or after a separator (so `layer12` is no rank).
fn after_r(lower: &str) -> Option<u32> {
    lower.match_indices('r').rev().find_map(|(i, _)| {
        let alone = lower[..i].chars().next_back().is_none_or(is_separator);
        if alone {
            leading_number(&lower[i + 1..])
        } else {
            None
        }
    })
}

/// The name without the extensions snapshots carry (`.pickle`, `.pkl`, `.gz`, in any stack).
fn stem(lower: &str) -> &str {
    let mut s = lower;
    while let Some(rest) = [".gz", ".pickle", ".pkl"]
        .iter()
        .find_map(|ext| s.strip_suffix(ext))
    {
        s = rest;
    }
    s
}

fn trailing_number(stem: &str) -> Option<u32> {
    let head = stem.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &stem[head.len()..];
    if digits.is_empty() || !head.chars().next_back().is_none_or(is_separator) {
        return None;
    }
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

    #[test]
    fn ranks_from_names() {
        let got = rank_numbers(&["rank1.pickle", "Rank_0.pickle", "job-rank-12.pkl"]);
        assert_eq!(got, vec![1, 0, 12]);
    }

    #[test]
    fn each_rule() {
        let cases = [
            ("rank12.pickle", Some(12)),
            ("snap.rank.3.pkl", Some(3)),
            ("snap_r12.pickle", Some(12)),
            ("R7.pkl", Some(7)),
            ("job-12.pickle", Some(12)),
            ("snapshot_3.pkl.gz", Some(3)),
            ("17.pickle", Some(17)),
            // A number inside a word is no rank.
            ("layer12.pickle", None),
            ("ranking.pickle", None),
            ("cs336-a-2.7b-forward.pickle", None),
            ("tiny.pickle", None),
            // Too large for a rank.
            ("rank99999999999.pickle", None),
        ];
        for (name, want) in cases {
            assert_eq!(rank_in_name(name), want, "{name}");
        }
    }

    #[test]
    fn order_when_a_name_has_no_rank_or_two_share_one() {
        assert_eq!(rank_numbers(&["rank1.pickle", "b.pickle"]), vec![0, 1]);
        assert_eq!(rank_numbers(&["rank1.a", "rank1.b"]), vec![0, 1]);
        assert_eq!(rank_numbers(&["ranking.pickle"]), vec![0]);
        assert_eq!(rank_numbers::<&str>(&[]), Vec::<u32>::new());
    }
}
