//! YAML workflows: one file holding every state (§13.2, R13.4–R13.8, R1.5, R1.16,
//! R1.18), run from the command line and called from other workflows.

use super::common::{RUN, emit, state, str_of, terminated_result, transitions};
use crate::support::Test;

const FLOW: &str = r#"id: flow
states:
  START:
    sh: |
      echo "<goto input=\"$BATON_INPUT!\">CHECK</goto>"
  CHECK:
    sh: |
      echo "<result>checked $BATON_INPUT</result>"
"#;

#[test]
fn r1_18_a_yaml_workflow_runs_from_its_entry_point() {
    let outcome =
        Test::new().write("flow.yaml", FLOW).args(["run", "flow.yaml", "--run-id", RUN, "--input", "hi", "-q"]).run();
    outcome.status(0).stdout("checked hi!\n");
    assert_eq!(transitions(&outcome), ["main:START.sh -goto-> CHECK.sh", "main:CHECK.sh -result-> -"]);
}

#[test]
fn r1_16_a_state_inside_a_yaml_workflow_is_found_whatever_extension_is_written() {
    for argument in ["flow.yaml/CHECK", "flow.yaml/CHECK.md"] {
        let outcome =
            Test::new().write("flow.yaml", FLOW).args(["run", argument, "--run-id", RUN, "--input", "x", "-q"]).run();
        outcome.status(0).stdout("checked x\n");
    }
}

#[test]
fn r13_8_the_file_is_read_again_on_resume() {
    let test = Test::new().write("flow.yaml", FLOW);
    let outcome = test.args(["run", "flow.yaml", "--run-id", RUN, "--max-steps", "1", "-q"]).run();
    outcome.status(3);
    let test =
        outcome.into_test().write("flow.yaml", &FLOW.replace("checked $BATON_INPUT", "checked again $BATON_INPUT"));
    test.args(["resume", RUN, "--max-steps", "10", "-q"]).run().status(0).stdout("checked again !\n");
}

#[test]
fn r13_6_an_invalid_workflow_is_refused_before_a_run_exists_with_its_line() {
    let outcome = Test::new()
        .write("flow.yaml", "states:\n  START:\n    prompt: go\n    sh: echo\n")
        .args(["run", "flow.yaml", "--run-id", RUN])
        .run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: YAML workflow `[ROOT]/flow.yaml`, line 2: state `START`: has both `prompt` and `sh`; a state is either \
         a prompt or a script"
    );
    assert!(!outcome.root().join(".baton/runs").join(RUN).exists());
}

#[test]
fn r13_8_a_workflow_broken_between_steps_stops_the_step_that_reads_it() {
    let test = Test::new().write("flow.yaml", FLOW);
    let outcome = test.args(["run", "flow.yaml", "--run-id", RUN, "--max-steps", "1", "-q"]).run();
    outcome.status(3);
    let test = outcome.into_test().write("flow.yaml", "states:\n  START:\n    sh: echo\n");
    let outcome = test.args(["resume", RUN, "--max-steps", "10"]).run();
    outcome.status(1);
    outcome.stderr_contains("script `CHECK.sh` not found in workflow `[ROOT]/flow.yaml`");
}

#[test]
fn r13_11_a_directory_workflow_calls_a_yaml_workflow_and_forks_its_states() {
    let outcome = Test::new()
        .write(
            "lib.yaml",
            "states:\n  START:\n    sh: echo \"<result>lib got $BATON_INPUT</result>\"\n  SIDE:\n    sh: echo '<result>side</result>'\n",
        )
        .file("START.sh", &emit("<fork-workflow>../lib.yaml/SIDE</fork-workflow>\n<goto>CALL</goto>"))
        .file("CALL.sh", &emit(r#"<call-workflow return="DONE" input="7">../lib.yaml</call-workflow>"#))
        .file("DONE.sh", "echo \"<result>$BATON_INPUT</result>\"\n")
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("lib got 7\n");
    assert_eq!(terminated_result(&state(&outcome), "main_lib1"), "side");
}

#[test]
fn r13_10_a_yaml_callers_relative_specifier_starts_beside_the_file() {
    // The base is the file's path without its extension (`flows/main`), so from
    // `flows/main.yaml`, `../lib/` names `flows/lib/`, as it would from `flows/main/`.
    let outcome = Test::new()
        .write(
            "flows/main.yaml",
            "states:\n  START:\n    sh: echo '<call-workflow return=\"DONE\">../lib/</call-workflow>'\n  DONE:\n    sh: echo \"<result>$BATON_INPUT</result>\"\n",
        )
        .write("flows/lib/START.sh", &emit("<result>from flows/lib</result>"))
        .args(["run", "flows/main.yaml", "--run-id", RUN, "-q"])
        .run();
    outcome.status(0).stdout("from flows/lib\n");
}

#[test]
fn a_yaml_prompt_states_fields_are_its_frontmatter() {
    let test = Test::new().with_fake_claude().write(
        "flow.yaml",
        "states:\n  START:\n    prompt: \"[[START]] go\"\n    allowed_transitions:\n      - {tag: goto, target: END}\n    colour: blue\n  END:\n    sh: echo '<result>end</result>'\n",
    );
    crate::markdown::fake(&test).rule("a", "[[START]]", crate::support::fake_claude::Reply::text("no tag here"));
    let outcome = test.args(["run", "flow.yaml", "--run-id", RUN, "-q"]).run();
    // The policy's single entry is used implicitly (R5.14), and the unknown field warned about.
    outcome.status(0).stdout("end\n");
    let warnings = outcome.events_of(RUN, "ErrorOccurred");
    assert_eq!(str_of(&warnings[0]["error_type"]), "UnknownField", "{warnings:?}");
}

#[test]
fn r13_6_a_states_own_timeout_applies_to_it() {
    let outcome = Test::new()
        .write("flow.yaml", "states:\n  START:\n    sh: sleep 5\n    timeout: 0.2\n")
        .args(["run", "flow.yaml", "--run-id", RUN])
        .run();
    outcome.status(1);
    outcome.stderr_contains(
        "script `START.sh` produced no output for 0.2 seconds and was killed (timeout from the state's `timeout` in its YAML \
         workflow)",
    );
}

#[test]
fn yaml_states_named_dot_dot_or_containing_a_newline_are_refused() {
    let run = |yaml: &str| Test::new().write("wf.yaml", yaml).args(["run", "wf.yaml", "--run-id", RUN]).run();
    let outcome = run("states:\n  START:\n    sh: echo '<goto>..</goto>'\n  ..:\n    sh: echo hi\n");
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: YAML workflow `[ROOT]/wf.yaml`, line 4: state `..`: `..` cannot be a state name"
    );
    let outcome = run("states:\n  START:\n    sh: echo hi\n  \"A\\nB\":\n    sh: echo hi\n");
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: YAML workflow `[ROOT]/wf.yaml`, line 4: state `A\\nB`: a state name cannot contain a line break or \
         other control character"
    );
}
