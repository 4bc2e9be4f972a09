//! Quoting user text inside a one-line message: a frontmatter value, a result
//! payload, Claude's output. The text is cut to a number of characters (never
//! inside one) with `…` when cut, and control characters are escaped so a
//! message stays on its line.

use std::fmt;

use crate::text::char_floor;

/// `text` cut to `max_chars` characters, with control characters escaped.
pub(crate) struct Excerpt<'a> {
    pub(crate) text: &'a str,
    pub(crate) max_chars: usize,
}

impl fmt::Display for Excerpt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.text.chars();
        for c in chars.by_ref().take(self.max_chars) {
            write!(f, "{}", c.escape_debug())?;
        }
        if chars.next().is_some() {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// The first `max_chars` characters of `text`, trimmed, with `…` when cut; line
/// breaks are kept (for multi-line messages such as Claude's result text).
pub(crate) fn head(text: &str, max_chars: usize) -> String {
    let trimmed = text.trim();
    let mut chars = trimmed.chars();
    let kept: String = chars.by_ref().take(max_chars).collect();
    if chars.next().is_some() { format!("{kept}…") } else { kept }
}

/// `text` if it has at most `max_bytes` bytes; else its start, cut on a character
/// boundary, and a marker saying how long the whole was.
pub(crate) fn cut_bytes(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    format!("{}… [{} bytes in all]", &text[..char_floor(text, max_bytes)], text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_escapes_and_cuts_on_characters() {
        assert_eq!(Excerpt { text: "a\nb", max_chars: 10 }.to_string(), "a\\nb");
        assert_eq!(Excerpt { text: "ééé", max_chars: 2 }.to_string(), "éé…");
    }

    #[test]
    fn cut_bytes_marks_what_was_cut() {
        assert_eq!(cut_bytes("short", 10), "short");
        assert_eq!(cut_bytes("abcdef", 3), "abc… [6 bytes in all]");
        assert_eq!(cut_bytes("éé", 3), "é… [4 bytes in all]");
    }

    #[test]
    fn head_trims_and_cuts() {
        assert_eq!(head("  short \n", 500), "short");
        assert_eq!(head("abcdef", 3), "abc…");
        assert_eq!(head("ab\ncd", 5), "ab\ncd");
    }
}
