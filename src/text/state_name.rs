//! Small, pure helpers over state *names* (the strings that appear in tags and on
//! disk). They live in one place because resolution, fork-id generation, debug
//! file naming and policy matching must all agree on what "extension" and "stem"
//! mean (R1.11, R3.22, R5.9).

use crate::text::char_floor;

/// The extensions that name a state kind. Comparison is case-insensitive (R1.6).
pub(crate) const STATE_EXTENSIONS: [&str; 4] = [".md", ".sh", ".bat", ".ps1"];

/// The extension of `name` as Go's `filepath.Ext` defines it: the text from the last
/// dot of the final path element, or `""` when there is none (R1.11). `v1.2` → `.2`.
pub(crate) fn extension(name: &str) -> &str {
    let last_element_start = name.rfind(['/', '\\']).map_or(0, |i| i + 1);
    match name[last_element_start..].rfind('.') {
        Some(dot) => &name[last_element_start + dot..],
        None => "",
    }
}

/// `name` without the extension reported by [`extension`].
pub(crate) fn stem(name: &str) -> &str {
    &name[..name.len() - extension(name).len()]
}

/// `name` with a recognised state extension (`.md/.sh/.bat/.ps1`, any case)
/// removed; other extensions are kept (R3.22).
pub(crate) fn strip_state_extension(name: &str) -> &str {
    let ext = extension(name);
    if is_state_extension(ext) { stem(name) } else { name }
}

/// Whether `ext` (with its dot) is one of the four state extensions, ignoring case.
pub(crate) fn is_state_extension(ext: &str) -> bool {
    STATE_EXTENSIONS.iter().any(|known| known.eq_ignore_ascii_case(ext))
}

/// Whether the state runs as a script (`.sh`, `.bat`, `.ps1`); everything else is a
/// prompt for the markdown executor (R1.7).
pub(crate) fn is_script(name: &str) -> bool {
    let ext = extension(name);
    [".sh", ".bat", ".ps1"].iter().any(|known| known.eq_ignore_ascii_case(ext))
}

/// Whether a target contains a path separator, which R1.9 forbids.
pub(crate) fn has_path_separator(name: &str) -> bool {
    name.contains(['/', '\\'])
}

/// The short form of a state name used in worker ids: the state extension stripped,
/// lowercased, cut to its first 6 bytes (R3.22). Cutting never splits a UTF-8
/// character: a multi-byte character that would straddle the cut is dropped.
pub(crate) fn abbreviation(name: &str) -> String {
    let lower = strip_state_extension(name).to_lowercase();
    lower[..char_floor(&lower, 6)].to_string()
}

/// The name used for debug files: the state name with `.md/.sh/.bat/.ps1` removed.
pub(crate) fn display_stem(name: &str) -> &str {
    strip_state_extension(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_follows_go_filepath_ext() {
        assert_eq!(extension("REVIEW.md"), ".md");
        assert_eq!(extension("REVIEW"), "");
        assert_eq!(extension("v1.2"), ".2");
        assert_eq!(extension("a.b/c"), "");
        assert_eq!(extension(".hidden"), ".hidden");
    }

    #[test]
    fn abbreviation_r3_22() {
        assert_eq!(abbreviation("WORKER.md"), "worker");
        assert_eq!(abbreviation("ANALYZE.sh"), "analyz");
        assert_eq!(abbreviation("X.txt"), "x.txt");
        assert_eq!(abbreviation("ÉÉÉÉ.md"), "ééé");
    }

    #[test]
    fn script_detection_is_case_insensitive() {
        assert!(is_script("A.SH"));
        assert!(is_script("b.Ps1"));
        assert!(!is_script("NOTES.txt"));
        assert!(!is_script("START"));
    }
}
