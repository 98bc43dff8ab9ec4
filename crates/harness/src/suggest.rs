//! The one edit distance behind every "did you mean" roster says: a
//! mistyped harness name, configuration key, subcommand or flag. It lives
//! in the harness crate, the lowest one that every crate making such a
//! suggestion already reaches (consent for configuration keys, cli-support
//! for the command line).

/// The optimal string alignment distance over characters: insertions,
/// deletions, substitutions and swaps of two neighbours (`nmae` for
/// `name`, `cdoex` for `codex`) count one edit each.
pub fn edit_distance(left: &str, right: &str) -> usize {
    let left: Vec<char> = left.chars().collect();
    let right: Vec<char> = right.chars().collect();
    let mut rows = vec![vec![0usize; right.len() + 1]; left.len() + 1];
    for (index, row) in rows.iter_mut().enumerate() {
        row[0] = index;
    }
    for (index, cell) in rows[0].iter_mut().enumerate() {
        *cell = index;
    }
    for i in 1..=left.len() {
        for j in 1..=right.len() {
            let substitution = usize::from(left[i - 1] != right[j - 1]);
            let mut best =
                (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + substitution);
            if i > 1 && j > 1 && left[i - 1] == right[j - 2] && left[i - 2] == right[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[left.len()][right.len()]
}

/// `candidates` nearest to `typed` first (fewest edits); candidates at the
/// same distance keep their order.
pub fn ranked_by_edit_distance<'a>(typed: &str, candidates: &[&'a str]) -> Vec<&'a str> {
    let mut ranked = candidates.to_vec();
    ranked.sort_by_key(|candidate| edit_distance(typed, candidate));
    ranked
}

/// The candidate nearest to `typed` when it is close enough to be a typo
/// of it: at most two edits, and fewer edits than `typed` has characters
/// (so that `ab` is no typo of `xy`). The first of equally near ones.
pub fn nearest_by_edit_distance<'a>(typed: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let typed_length = typed.chars().count();
    candidates
        .iter()
        .map(|candidate| (edit_distance(typed, candidate), *candidate))
        .filter(|(distance, _)| *distance <= 2 && *distance < typed_length)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_insertions_deletions_substitutions_and_swaps() {
        let cases = [
            ("kitten", "sitting", 3),
            ("", "abc", 3),
            ("abc", "abc", 0),
            ("nmae", "name", 1),
            ("cdoex", "codex", 1),
            ("instal", "install", 1),
            ("instal", "uninstall", 3),
            ("ünï", "uni", 2),
        ];
        for (left, right, expect) in cases {
            assert_eq!(edit_distance(left, right), expect, "{left:?} {right:?}");
            assert_eq!(edit_distance(right, left), expect, "{right:?} {left:?}");
        }
    }

    #[test]
    fn only_a_near_candidate_is_a_typo_of_it() {
        let subcommands = ["arm", "disarm", "status", "should-arm"];
        assert_eq!(nearest_by_edit_distance("amr", &subcommands), Some("arm"), "a swap");
        assert_eq!(nearest_by_edit_distance("stats", &subcommands), Some("status"));
        assert_eq!(nearest_by_edit_distance("xyz", &subcommands), None);
        assert_eq!(nearest_by_edit_distance("ab", &["xy"]), None, "as many edits as characters");
    }

    /// Regression: `roster-hooks instal` suggested `print` and `uninstall`
    /// before `install`, in the order clap's similarity put them.
    #[test]
    fn the_nearest_candidate_comes_first() {
        assert_eq!(
            ranked_by_edit_distance("instal", &["print", "uninstall", "install"]),
            ["install", "uninstall", "print"]
        );
        assert_eq!(ranked_by_edit_distance("x", &["ab", "cd"]), ["ab", "cd"], "ties keep their order");
    }
}
