//! Tag parsing as it applies to script stdout (R1.9, R3.48–R3.50, R4.3–R4.7, R7.5;
//! §16 items 5, 6, 7, 9, 10, 11, 12, 13, 14).

use super::common::{RUN, agent, assert_fatal, emit, say, started, state, str_of, terminated_result, transitions};
use crate::support::{Outcome, Test};

/// A state that leaves a marker file in its cwd (the project root) if it ever runs.
fn marker_state(marker: &str) -> String {
    format!("touch {marker}\necho '<result>{marker}</result>'\n")
}

/// `<goto>{target}</goto>` is refused as a parse error and nothing after START runs.
#[track_caller]
fn assert_separator_refused(outcome: &Outcome, target: &str, marker: &str) {
    assert_fatal(
        outcome,
        "main",
        "START.sh",
        "ParseError",
        &format!(
            "script `START.sh` printed an invalid transition tag: <goto> target `{target}` contains a path \
             separator; targets are bare state names in the same workflow"
        ),
    );
    assert_eq!(started(outcome), ["main:START.sh"]);
    assert!(transitions(outcome).is_empty());
    assert!(!outcome.root().join(marker).exists(), "the target must not run");
}

#[test]
fn r4_7_path_separator_target_refused_without_running_anything() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>../evil</goto>"))
        .write("evil.sh", &marker_state("ran_evil"))
        .run_workflow(&["--no-lint"]);
    assert_separator_refused(&outcome, "../evil", "ran_evil");
}

#[test]
fn r4_7_subdirectory_target_refused() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>sub/X.sh</goto>"))
        .file("sub/X.sh", &marker_state("ran_sub_x"))
        .run_workflow(&["--no-lint"]);
    assert_separator_refused(&outcome, "sub/X.sh", "ran_sub_x");
}

#[test]
fn r4_7_backslash_target_refused() {
    // On Unix `..\X.sh` is an ordinary file name; the target is refused all the same (R1.9).
    let outcome = Test::new()
        .file("START.sh", &emit(r"<goto>..\X</goto>"))
        .file(r"..\X.sh", &marker_state("ran_backslash"))
        .write("X.sh", &marker_state("ran_parent_x"))
        .run_workflow(&["--no-lint"]);
    assert_separator_refused(&outcome, r"..\X", "ran_backslash");
    assert!(!outcome.root().join("ran_parent_x").exists());
}

#[test]
fn r4_7_blank_target_is_an_empty_target() {
    let outcome = Test::new().file("START.sh", &emit("<goto>   </goto>")).run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "ParseError",
        "script `START.sh` printed an invalid transition tag: <goto> has an empty target",
    );
}

#[test]
fn r4_4_tags_inside_a_result_are_counted() {
    let outcome = Test::new()
        .file("START.sh", &emit("<result>a <goto>X</goto></result>"))
        .file("X.sh", &marker_state("ran_x"))
        .run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "MultipleTransitions",
        "script `START.sh` produced 2 transition tags (expected 1)",
    );
    assert!(!outcome.root().join("ran_x").exists());
}

#[test]
fn r4_3_unclosed_opener_is_ignored() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>A</goto> and then <goto>B"))
        .file("A.sh", "echo '<result>went to A</result>'\n")
        .file("B.sh", &marker_state("ran_b"))
        .run_workflow(&[]);
    outcome.status(0).stdout("went to A\n");
    assert_eq!(transitions(&outcome), ["main:START.sh -goto-> A.sh", "main:A.sh -result-> -"]);
    assert!(!outcome.root().join("ran_b").exists());
}

/// START emits `tag`, B reports the input it got.
fn input_seen_by_b(tag: &str) -> Outcome {
    Test::new()
        .file("START.sh", &emit(tag))
        .file("B.sh", &say("<result>[${BATON_INPUT-unset}]</result>"))
        .run_workflow(&[])
}

#[test]
fn r4_6_single_quoted_attribute_is_accepted() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork next='N' item='a b'>W</fork>"))
        .file("W.sh", &say("<result>item=$item</result>"))
        .file("N.sh", "echo '<result>parent at N</result>'\n")
        .run_workflow(&[]);
    outcome.status(0).stdout("parent at N\n");
    assert!(transitions(&outcome).contains(&"main:START.sh -fork-> N.sh".to_string()));
    assert_eq!(terminated_result(&state(&outcome), "main_w1"), "item=a b");
}

#[test]
fn r4_6_single_quoted_input_is_accepted() {
    input_seen_by_b("<goto input='single quoted'>B</goto>").status(0).stdout("[single quoted]\n");
}

#[test]
fn r4_6_spaces_around_equals_are_ignored() {
    input_seen_by_b(r#"<goto input = "spaced">B</goto>"#).status(0).stdout("[unset]\n");
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<fork next = "N">W</fork>"#))
        .file("W.sh", "echo '<result>w</result>'\n")
        .file("N.sh", "echo '<result>n</result>'\n")
        .run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TransitionError",
        "script `START.sh`: <fork> needs a `next` attribute (the state the parent continues at while the \
         worker runs)",
    );
    outcome.stderr_contains(
        "[main] warning: state `START.sh`: ignored `next = \"N\"` in <fork>: an attribute is written name=\"value\" \
         or name='value', quoted and with no spaces around `=`",
    );
}

#[test]
fn r4_6_mismatched_quotes_are_ignored() {
    input_seen_by_b(r#"<goto input="mixed'>B</goto>"#).status(0).stdout("[unset]\n");
}

#[test]
fn r4_6_duplicate_attribute_last_wins() {
    input_seen_by_b(r#"<goto input="first" input="second">B</goto>"#).status(0).stdout("[second]\n");
}

#[test]
fn r4_6_dashed_attribute_name_becomes_its_last_word() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<fork next="N" data-item="x">W</fork>"#))
        .file("W.sh", &say("<result>item=${item-unset}</result>"))
        .file("N.sh", "echo '<result>n</result>'\n")
        .run_workflow(&[]);
    outcome.status(0);
    assert_eq!(terminated_result(&state(&outcome), "main_w1"), "item=x");
}

#[test]
fn r3_50_print_body_is_shown_and_its_tag_still_counts() {
    let outcome = Test::new()
        .file("START.sh", &emit("<print>hi <goto>X</goto></print>"))
        .file("X.sh", "echo '<result>at X</result>'\n")
        .run_workflow(&[]);
    outcome.status(0).stdout("at X\n");
    let prints = outcome.events_of(RUN, "PrintOutput");
    assert_eq!(prints.len(), 1, "{prints:#?}");
    assert_eq!(prints[0]["agent_id"], "main");
    assert_eq!(prints[0]["stream"], "stdout");
    assert_eq!(prints[0]["content"], "hi <goto>X</goto>");
    assert_eq!(transitions(&outcome)[0], "main:START.sh -goto-> X.sh");
    outcome.stderr_contains("[main] print: hi <goto>X</goto>\n");
}

#[test]
fn r3_49_print_split_across_chunks_is_emitted_once() {
    let script = "printf '<pri'\nsleep 0.5\nprintf 'nt>x</print>\\n'\necho '<result>done</result>'\n";
    let outcome = Test::new().file("START.sh", script).run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    let contents: Vec<String> =
        outcome.events_of(RUN, "PrintOutput").iter().map(|event| str_of(&event["content"])).collect();
    assert_eq!(contents, ["x"]);
}

#[test]
fn r7_5_print_on_stderr_is_shown() {
    let script = "echo '<print>to stderr</print>' >&2\necho '<result>ok</result>'\n";
    let outcome = Test::new().file("START.sh", script).run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    let prints = outcome.events_of(RUN, "PrintOutput");
    assert_eq!(prints.len(), 1, "{prints:#?}");
    assert_eq!(prints[0]["stream"], "stderr");
    assert_eq!(prints[0]["content"], "to stderr");
    outcome.stderr_contains("[main] print (stderr): to stderr\n");
}

#[test]
fn r7_5_transition_on_stderr_is_ignored() {
    let script = "echo '<goto>B</goto>' >&2\n";
    let outcome =
        Test::new().file("START.sh", script).file("B.sh", "touch ran_b\necho '<result>b</result>'\n").run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "NoTransitionTag",
        "script `START.sh` produced no transition tag in stdout (a tag was printed to stderr, but only stdout \
         counts)",
    );
    assert!(!outcome.root().join("ran_b").exists());
    assert_eq!(agent(&state(&outcome), "main")["current_state"], "START.sh");
}
