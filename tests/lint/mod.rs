//! `baton lint`: one test per check id (spec §15, and Baton's `invalid-tag`, `invalid-ask-timeout` and
//! `unreadable-state`) with a minimal workflow and the exact output, the scope
//! kinds, cross-workflow following, `--json` and `--level`.

mod checks;
mod run;
mod scopes;

use crate::support::Test;

/// `baton lint wf --level info` over `files`: exit code and stdout.
pub(crate) fn lint(files: &[(&str, &str)]) -> (i32, String) {
    let mut test = Test::new();
    for (name, text) in files {
        test = test.file(name, text);
    }
    let outcome = test.args(["lint", "wf", "--level", "info"]).run();
    assert!(outcome.stderr.is_empty(), "stderr: {}", outcome.stderr);
    (outcome.status, outcome.stdout.clone())
}

/// Assert that linting `files` exits `status` and prints exactly `expected`.
#[track_caller]
pub(crate) fn golden(files: &[(&str, &str)], status: i32, expected: &str) {
    let (code, stdout) = lint(files);
    assert_eq!(stdout, expected, "stdout differs");
    assert_eq!(code, status, "exit code");
}
