//! `baton run` lints first (issue 11, item 7): errors refuse the run before any
//! step, `--no-lint` runs anyway, warnings never stop a run.

use crate::support::Test;
use crate::support::fake_claude::{FakeClaude, Reply};

fn broken() -> Test {
    Test::new()
        .file("START.sh", "touch started\necho '<goto>REVEIW</goto>'\n")
        .file("REVIEW.sh", "echo '<result>ok</result>'\n")
}

#[test]
fn a_workflow_with_lint_errors_is_refused_before_any_step() {
    let outcome = broken().args(["run", "wf"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: workflow `wf` has a lint error that would fail the run; fix it, or run with --no-lint:\n  \
         wf/START.sh:2:7: error[missing-target]: `<goto>` target `REVEIW` is not a state of this workflow; did you \
         mean `REVIEW.sh`?"
    );
    assert!(!outcome.root().join("started").exists(), "no step ran");
    assert!(!outcome.root().join(".baton/runs").exists(), "no run was created");
}

#[test]
fn no_lint_runs_it_anyway_and_the_run_fails_where_lint_said() {
    let outcome = broken().args(["run", "wf", "--no-lint", "-q"]).run();
    outcome.status(1);
    assert!(outcome.root().join("started").exists(), "the first step ran");
    assert!(outcome.stderr.contains("REVEIW"), "{}", outcome.stderr);
}

#[test]
fn warnings_do_not_stop_a_run_and_a_state_file_start_needs_no_entry_point() {
    Test::new()
        .file("STEP.sh", "echo '<result>done</result>'\n")
        .file("ORPHAN.md", "Nothing leads here.\n")
        .args(["run", "wf/STEP.sh", "-q"])
        .run()
        .status(0)
        .stdout("done\n");
}

/// Issue 19, item 7: the lint gate refused raymond's `force_implicit_ok` (an example
/// `<goto>X</goto>` in a `force_implicit` prompt, R5.14); the run now passes the
/// gate and ends, whatever tag the model writes.
#[test]
fn r5_14_the_lint_gate_refused_a_force_implicit_prompt_showing_an_example_tag() {
    let test = Test::new()
        .with_fake_claude()
        .file(
            "1_START.md",
            "---\nallowed_transitions:\n  - tag: goto\n    target: DONE\nforce_implicit: true\n---\n[[START]] \
             Discuss things; tag examples like <goto>X</goto> will be ignored.\n",
        )
        .file("DONE.md", "[[DONE]] <result></result>\n");
    FakeClaude::at(test.root()).rule("a", "[[START]]", Reply::text("Like <goto>X</goto>, which is ignored.")).rule(
        "b",
        "[[DONE]]",
        Reply::text("<result>finished</result>"),
    );
    let outcome = test.run_workflow(&["-q"]);
    assert!(outcome.stderr.starts_with("done: run test completed: 2 steps,"), "{}", outcome.stderr);
    outcome.status(0).stdout("finished\n");
}
