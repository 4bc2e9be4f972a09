//! Zip workflows: a workflow directory shipped as one archive, read in place
//! (R1.3, R1.4, R1.15, R1.18, R13.11).

use super::common::{RUN, archive, emit, sha256};
use crate::support::Test;
use crate::support::fake_claude::{FakeClaude, Reply};

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

/// A zip whose `START.md` is a prompt state: the markdown executor once read it as
/// a file under a directory named `wf.zip` ("Not a directory") and paused.
fn story() -> Vec<u8> {
    archive(&[("START.md", "[[STORY]] Say <result>hi</result>\n")])
}

#[test]
fn prompt_states_in_zip_workflows_run() {
    let test = with_zip(Test::new().with_fake_claude(), "wf.zip", &story());
    FakeClaude::at(test.root()).rule("story", "[[STORY]]", Reply::text("<result>hi</result>"));
    let outcome = test.args(["run", "wf.zip", "--run-id", RUN, "-q"]).run();
    outcome.status(0).stdout("hi\n");
    let calls = FakeClaude::at(outcome.root()).calls();
    assert_eq!(calls.len(), 1, "one turn, no retries");
    assert_eq!(calls[0].prompt, "[[STORY]] Say <result>hi</result>\n");
}

#[test]
fn prompt_states_in_zip_workflows_run_when_a_directory_workflow_calls_into_the_zip() {
    // R13.11: a state inside a zip is written without its extension (`x.zip/STATE.md` names a file).
    let bytes = archive(&[
        ("story/START.sh", "echo '<result>not this one</result>'\n"),
        ("story/TELL.md", "[[TELL]] Tell {{input}} <result>told</result>\n"),
    ]);
    let test = with_zip(Test::new().with_fake_claude(), "story.zip", &bytes)
        .file("START.sh", &emit(r#"<call-workflow return="DONE" input="a tale">../story.zip/TELL</call-workflow>"#))
        .file("DONE.sh", "echo \"<result>back with $BATON_INPUT</result>\"\n");
    FakeClaude::at(test.root()).rule("tell", "[[TELL]]", Reply::text("<result>told</result>"));
    let outcome = test.run_workflow(&["-q"]);
    outcome.status(0).stdout("back with told\n");
    let calls = FakeClaude::at(outcome.root()).calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].prompt, "[[TELL]] Tell a tale <result>told</result>\n");
}

#[test]
fn prompt_states_in_zip_workflows_lint_clean() {
    let outcome = with_zip(Test::new(), "wf.zip", &story()).args(["lint", "wf.zip"]).run();
    outcome.status(0);
}

/// An archive holding `name` as `size` zero bytes, deflated: a bomb in miniature.
fn zeros(name: &str, size: u64) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    writer.start_file("START.sh", options).expect("start");
    std::io::Write::write_all(&mut writer, b"echo '<result>ran</result>'\n").expect("write");
    writer.start_file(name, options).expect("start");
    std::io::copy(&mut std::io::Read::take(std::io::repeat(0), size), &mut writer).expect("write");
    writer.finish().expect("finish").into_inner()
}

const FOUR_MIB: u64 = 4 * 1024 * 1024;

#[test]
fn zip_bombs_an_entry_larger_than_the_limit_is_refused_before_anything_runs() {
    let outcome = with_zip(Test::new(), "bomb.zip", &zeros("DATA.md", FOUR_MIB + 1))
        .args(["run", "bomb.zip", "--run-id", RUN])
        .run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: zip workflow `[ROOT]/bomb.zip`: entry `DATA.md` is larger than 4 MiB uncompressed, the most one entry \
         may hold"
    );
    let outcome = with_zip(Test::new(), "bomb.zip", &zeros("DATA.md", FOUR_MIB + 1)).args(["lint", "bomb.zip"]).run();
    outcome.status(1);
    outcome.stderr_contains("entry `DATA.md` is larger than 4 MiB uncompressed");
}

#[test]
fn zip_bombs_an_entry_at_the_limit_is_read() {
    let outcome = with_zip(Test::new(), "big.zip", &zeros("DATA.md", FOUR_MIB)).args(["run", "big.zip", "-q"]).run();
    outcome.status(0).stdout("ran\n");
}

#[test]
fn zip_entries_with_duplicate_names_are_refused() {
    let bytes =
        archive(&[("START.sh", "echo '<result>one</result>'\n"), ("STARX.sh", "echo '<result>two</result>'\n")]);
    // The writer refuses a duplicate name, so the second one is renamed in place.
    let text = bytes.windows(8).filter(|window| window == b"STARX.sh").count();
    assert_eq!(text, 2, "the local header and the central directory");
    let mut bytes = bytes;
    while let Some(at) = bytes.windows(8).position(|window| window == b"STARX.sh") {
        bytes[at..at + 8].copy_from_slice(b"START.sh");
    }
    let outcome = with_zip(Test::new(), "dup.zip", &bytes).args(["run", "dup.zip", "--run-id", RUN]).run();
    outcome.status(1);
    assert_eq!(outcome.error_message(), "error: zip workflow `[ROOT]/dup.zip`: entry `START.sh` appears twice");
}

/// Issue 19: an entry named with an escape sequence (`a\x1b[31mb.sh`) was listed as
/// a state and printed raw by lint and run, so an archive could recolour or
/// rewrite the terminal of whoever looked at it. Such a name is now refused, shown
/// escaped.
#[test]
fn zip_entry_name_with_a_control_character_is_refused_and_shown_escaped() {
    let bytes = archive(&[("START.sh", "echo '<result>ran</result>'\n"), ("a\u{1b}[31mb.sh", "echo hi\n")]);
    let expected = "error: zip workflow `[ROOT]/esc.zip`: entry `a\\u{1b}[31mb.sh` has a control character in its \
                    name; it is refused";
    let outcome = with_zip(Test::new(), "esc.zip", &bytes).args(["run", "esc.zip", "--run-id", RUN]).run();
    outcome.status(1);
    assert_eq!(outcome.error_message(), expected);
    let outcome = with_zip(Test::new(), "esc.zip", &bytes).args(["lint", "esc.zip"]).run();
    outcome.status(1);
    assert!(!outcome.stderr_normalized().contains('\u{1b}'), "{}", outcome.stderr_normalized());
    outcome.stderr_contains("entry `a\\u{1b}[31mb.sh` has a control character in its name; it is refused");
}
