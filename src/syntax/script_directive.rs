//! Directives a script states in a comment, the script's counterpart of a prompt's
//! frontmatter. One exists: `# baton: keep-background` — the processes the script
//! leaves running (a server started with `&` for later states) survive the end of
//! its step. Without it they are ended with the step (`process::group`).

/// How much of a script is searched for directives: they belong near the top.
pub(crate) const DIRECTIVE_HEAD_BYTES: usize = 4096;

/// Whether `head` (the start of a script) holds `# baton: keep-background` on a
/// line of its own (spaces around the words are allowed).
pub(crate) fn keeps_background(head: &str) -> bool {
    head.lines().any(|line| {
        let Some(comment) = line.trim().strip_prefix('#') else { return false };
        let Some(directive) = comment.trim_start().strip_prefix("baton:") else { return false };
        directive.trim() == "keep-background"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directive_is_a_comment_line_of_its_own() {
        assert!(keeps_background("#!/usr/bin/env bash\n# baton: keep-background\nserver &\n"));
        assert!(keeps_background("#baton:keep-background"));
        assert!(!keeps_background("echo '# baton: keep-background'\n"));
        assert!(!keeps_background("# baton: keep-background-please\n"));
        assert!(!keeps_background("server & # keep it\n"));
    }
}
