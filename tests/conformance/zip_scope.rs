//! Zip workflows: a workflow directory shipped as one archive, read in place
//! (R1.3, R1.4, R1.15, R1.18, R13.11).

use super::common::{RUN, archive, emit, sha256};
use crate::support::Test;

fn review() -> Vec<u8> {
    archive(&[
        ("review/START.sh", "echo \"<goto input=\\\"$BATON_INPUT\\\">CHECK</goto>\"\n"),
        ("review/CHECK.sh", "echo \"<result>reviewed $BATON_INPUT</result>\"\n"),
    ])
}

fn with_zip(test: Test, name: &str, bytes: &[u8]) -> Test {
    std::fs::write(test.root().join(name), bytes).expect("write zip");
    test
}

#[test]
fn r1_18_a_zip_workflow_runs_in_place_from_its_entry_point() {
    let outcome = with_zip(Test::new(), "review.zip", &review())
        .args(["run", "review.zip", "--run-id", RUN, "--input", "x", "-q"])
        .run();
    outcome.status(0).stdout("reviewed x\n");
    assert!(!outcome.root().join("review").exists(), "nothing was extracted beside it");
}

#[test]
fn r1_4_a_pinned_hash_is_checked_before_anything_runs() {
    let bytes = review();
    let good = sha256(&bytes);
    let outcome = with_zip(Test::new(), &format!("review-{good}.zip"), &bytes)
        .args(["run", &format!("review-{good}.zip"), "--run-id", RUN, "-q"])
        .run();
    outcome.status(0);
    let wrong = "1".repeat(64);
    let outcome = with_zip(Test::new(), &format!("review-{wrong}.zip"), &bytes)
        .args(["run", &format!("review-{wrong}.zip"), "--run-id", RUN])
        .run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        format!(
            "error: zip workflow `[ROOT]/review-{wrong}.zip` does not match the SHA-256 in its name: expected {wrong}, \
             found {good}; the file was changed or damaged"
        )
    );
}

#[test]
fn r1_3_an_entry_that_points_outside_the_archive_is_refused() {
    let outcome = with_zip(Test::new(), "evil.zip", &archive(&[("../START.sh", "touch pwned")]))
        .args(["run", "evil.zip", "--run-id", RUN])
        .run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: zip workflow `[ROOT]/evil.zip`: entry `../START.sh` points outside the archive; it is refused"
    );
}

#[test]
fn r13_11_a_workflow_calls_a_zip_and_a_state_inside_it() {
    let outcome = with_zip(Test::new(), "review.zip", &review())
        .file("START.sh", &emit(r#"<call-workflow return="NEXT" input="a">../review.zip</call-workflow>"#))
        .file("NEXT.sh", "echo \"<call-workflow return=\\\"DONE\\\" input=\\\"$BATON_INPUT+b\\\">../review.zip/CHECK</call-workflow>\"\n")
        .file("DONE.sh", "echo \"<result>$BATON_INPUT</result>\"\n")
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("reviewed reviewed a+b\n");
}

#[test]
fn r1_4_a_zip_changed_during_a_run_is_refused_when_it_is_next_used() {
    let bytes = review();
    let name = format!("review-{}.zip", sha256(&bytes));
    let test = with_zip(Test::new(), &name, &bytes)
        .file("START.sh", &emit(&format!(r#"<call-workflow return="DONE">../{name}</call-workflow>"#)))
        .file("DONE.sh", "echo \"<result>$BATON_INPUT</result>\"\n");
    let outcome = test.run_workflow(&["-q", "--max-steps", "1"]);
    outcome.status(3);
    let test = with_zip(outcome.into_test(), &name, &archive(&[("START.sh", "echo '<result>tampered</result>'")]));
    let outcome = test.args(["resume", RUN, "--max-steps", "10"]).run();
    outcome.status(1);
    outcome.stderr_contains("does not match the SHA-256 in its name");
}
