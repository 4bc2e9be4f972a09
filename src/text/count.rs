//! A number with its noun, agreeing: "1 workflow", "2 workflows", "1 reply",
//! "0 replies". Every message that counts something goes through here, so none says
//! "1 workflows".

/// `count` and `one` or `many`, as `count` needs.
pub(crate) fn count(count: impl TryInto<u64> + std::fmt::Display + Copy, one: &str, many: &str) -> String {
    let is_one = count.try_into().is_ok_and(|value| value == 1);
    format!("{count} {}", if is_one { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(count(1u64, "workflow", "workflows"), "1 workflow");
        assert_eq!(count(0usize, "reply", "replies"), "0 replies");
        assert_eq!(count(2u32, "run", "runs"), "2 runs");
    }
}
