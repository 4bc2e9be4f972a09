//! "Did you mean …?" hints for names that were not found.
//!
//! A state or workflow name that does not exist is almost always a typo or a
//! wrong letter case (`REVEIW`, `review` for `REVIEW.md`). Pointing at the closest
//! existing name turns a dead-end error into a one-keystroke fix. The hint must be
//! conservative, so a far-off name is never suggested: the edit distance has to be
//! at most a third of the wanted name's length (and at least 1 is always allowed).
//! The result is deterministic: ties go to the first candidate in sorted order.

use crate::text::state_name;

/// The candidate closest to `wanted`, or `None` when nothing is close enough.
///
/// Distances are edit distances (with adjacent swaps) over lowercased characters. Each candidate
/// is compared both as written and by its stem (without its extension), so that
/// the abstract name `REVEIW` finds `REVIEW.md`. A candidate is accepted only when
/// its distance is at most `max(1, len / 3)`, where `len` is the number of
/// characters in `wanted`. Ties go to the first candidate in sorted order.
pub(crate) fn did_you_mean<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted = lowercase_chars(wanted);
    let limit = (wanted.len() / 3).max(1);
    let mut sorted: Vec<&'a str> = candidates.into_iter().collect();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
        .into_iter()
        .map(|candidate| (distance_to_candidate(&wanted, candidate), candidate))
        .filter(|(distance, _)| *distance <= limit)
        // `min_by_key` keeps the first of equal minima, i.e. the first in sorted order.
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// The smaller of the distances to the whole candidate and to its stem.
fn distance_to_candidate(wanted: &[char], candidate: &str) -> usize {
    let whole = edit_distance(wanted, &lowercase_chars(candidate));
    let stem = edit_distance(wanted, &lowercase_chars(state_name::stem(candidate)));
    whole.min(stem)
}

fn lowercase_chars(text: &str) -> Vec<char> {
    text.chars().flat_map(char::to_lowercase).collect()
}

/// Edit distance where inserting, deleting or replacing a character, or swapping
/// two adjacent ones, each cost 1 (optimal string alignment). Swaps matter: `tset`
/// for `test` is the typical typo, and plain Levenshtein would call it 2 edits.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[(i - 1) * width + j - 1] + cost)
                .min(rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(text: &str) -> Vec<char> {
        text.chars().collect()
    }

    #[test]
    fn edit_distance_known_values() {
        assert_eq!(edit_distance(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(edit_distance(&chars(""), &chars("abc")), 3);
        assert_eq!(edit_distance(&chars("abc"), &chars("")), 3);
        assert_eq!(edit_distance(&chars("same"), &chars("same")), 0);
        assert_eq!(edit_distance(&chars("REVEIW"), &chars("REVIEW")), 1);
        assert_eq!(edit_distance(&chars("tset"), &chars("test")), 1);
    }

    #[test]
    fn transposed_letters_find_the_file_through_its_stem() {
        let files = ["REVIEW.md", "START.md"];
        assert_eq!(did_you_mean("REVEIW", files), Some("REVIEW.md"));
    }

    #[test]
    fn comparison_ignores_case() {
        assert_eq!(did_you_mean("review", ["REVIEW.md"]), Some("REVIEW.md"));
        assert_eq!(did_you_mean("Start.MD", ["START.md"]), Some("START.md"));
    }

    #[test]
    fn explicit_name_is_compared_with_the_whole_file_name() {
        assert_eq!(did_you_mean("REVIEW.sh", ["REVIEW.md"]), Some("REVIEW.md"));
    }

    #[test]
    fn far_names_are_not_suggested() {
        assert_eq!(did_you_mean("DEPLOY", ["REVIEW.md", "START.md"]), None);
    }

    #[test]
    fn threshold_is_a_third_of_the_length() {
        // len 9 → limit 3: three edits accepted, four refused.
        assert_eq!(did_you_mean("abcdefghi", ["abcdefxyz"]), Some("abcdefxyz"));
        assert_eq!(did_you_mean("abcdefghi", ["abcdewxyz"]), None);
    }

    #[test]
    fn short_names_always_allow_one_edit() {
        assert_eq!(did_you_mean("AB", ["AC.md"]), Some("AC.md"));
        assert_eq!(did_you_mean("AB", ["CD.md"]), None);
    }

    #[test]
    fn ties_go_to_the_first_in_sorted_order() {
        // Both are one edit away; the input order must not matter.
        assert_eq!(did_you_mean("CAT", ["CAB.md", "BAT.md"]), Some("BAT.md"));
        assert_eq!(did_you_mean("CAT", ["BAT.md", "CAB.md"]), Some("BAT.md"));
    }

    #[test]
    fn closer_candidate_wins_over_sorted_order() {
        assert_eq!(did_you_mean("DEPLOYS", ["DEPLOX.md", "DEPLOYS2.md", "DEPLOYS.sh"]), Some("DEPLOYS.sh"));
    }

    #[test]
    fn no_candidates_means_no_suggestion() {
        assert_eq!(did_you_mean("REVIEW", std::iter::empty::<&str>()), None);
    }
}
