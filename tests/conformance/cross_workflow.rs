//! `<call-workflow>`, `<function-workflow>`, `<fork-workflow>` and `<reset-workflow>`
//! with script states (R3.30–R3.37, R13.9–R13.13; A1, A2, A6).
//!
//! The caller's workflow is `wf/`; the others are its siblings, so specifiers are
//! written relative to the caller's workflow (`../lib/`), never to its cwd.

use super::common::{RUN, agent, emit, norm, say, state, str_of, terminated_result, transitions};
use crate::support::Test;

/// `lib/`: doubles its input and returns it; `lib/HALF.sh` halves it.
fn with_lib(test: Test) -> Test {
    test.write("lib/START.sh", &say("<result>$((BATON_INPUT * 2))</result>"))
        .write("lib/HALF.sh", &say("<result>$((BATON_INPUT / 2))</result>"))
}

#[test]
fn r3_31_call_workflow_runs_the_entry_point_and_r3_32_returns_into_the_callers_scope() {
    let outcome = with_lib(Test::new())
        .file("START.sh", &emit(r#"<call-workflow return="DONE" input="21">../lib/</call-workflow>"#))
        .file("DONE.sh", &say("<result>got $BATON_INPUT in $(basename \"$PWD\")</result>"))
        .run_workflow(&["-q"]);
    outcome.status(0);
    assert!(outcome.stdout.starts_with("got 42 in "), "{}", outcome.stdout);
    assert_eq!(
        transitions(&outcome),
        ["main:START.sh -call-workflow-> START.sh", "main:START.sh -result-> DONE.sh", "main:DONE.sh -result-> -"]
    );
    let started = outcome.events_of(RUN, "TransitionOccurred");
    assert_eq!(norm(&outcome, str_of(&started[0]["metadata"]["workflow"]).as_str()), "[ROOT]/lib");
}

#[test]
fn r13_11_a_state_inside_another_workflow_and_r3_33_function_workflow_with_cd() {
    let outcome = with_lib(Test::new())
        .write("elsewhere/.keep", "")
        .file(
            "START.sh",
            &emit(r#"<function-workflow return="DONE" cd="elsewhere" input="8">../lib/HALF</function-workflow>"#),
        )
        .file("DONE.sh", &say("<result>$BATON_INPUT</result>"))
        .write("lib/HALF.sh", &say("<result>$((BATON_INPUT / 2)) $(basename \"$PWD\")</result>"))
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("4 elsewhere\n");
}

#[test]
fn r3_41_a_cross_workflow_input_is_a_template() {
    let outcome = with_lib(Test::new())
        .file("START.sh", &emit(r#"<goto input="5">CALL</goto>"#))
        .file("CALL.sh", &emit(r#"<call-workflow return="DONE" input="{{input}}0">../lib</call-workflow>"#))
        .file("DONE.sh", &say("<result>$BATON_INPUT</result>"))
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("100\n");
}

#[test]
fn r3_35_fork_workflow_workers_take_the_workflows_abbreviation_and_a6_share_the_parents_counter() {
    let outcome = Test::new()
        .write("bs_worker/START.sh", &say("<result>worker $BATON_AGENT_ID in $(basename \"$PWD\")</result>"))
        .file(
            "START.sh",
            &emit(
                "<fork next=\"WAIT\">W</fork>\n<fork-workflow input=\"x\">../bs_worker/</fork-workflow>\n\
                 <fork-workflow>../bs_worker</fork-workflow>",
            ),
        )
        .file("W.sh", &emit("<result>plain</result>"))
        .file("WAIT.sh", &emit("<result>parent done</result>"))
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("parent done\n");
    let state = state(&outcome);
    assert_eq!(terminated_result(&state, "main_w1"), "plain");
    // One counter per parent (A6): the workflow workers are the 2nd and 3rd forks.
    assert!(terminated_result(&state, "main_bs_wor2").starts_with("worker main_bs_wor2 in "));
    assert!(terminated_result(&state, "main_bs_wor3").starts_with("worker main_bs_wor3"));
}

#[test]
fn r3_36_a_lone_fork_workflow_without_next_leaves_the_parent_at_its_state() {
    let outcome = Test::new()
        .write("w/START.sh", &emit("<result>w</result>"))
        .file(
            "START.sh",
            "if [ -e forked ]; then echo '<result>again</result>'; else touch forked; \
             echo '<fork-workflow>../w</fork-workflow>'; fi\n",
        )
        .run_workflow(&["--no-lint", "-q"]);
    outcome.status(0).stdout("again\n");
    assert!(transitions(&outcome).contains(&"main:START.sh -fork-workflow-> START.sh".to_string()));
}

#[test]
fn r3_37_reset_workflow_clears_the_stack_and_starts_over_in_the_other_workflow() {
    let outcome = Test::new()
        .write("next/START.sh", &say("<result>next got $BATON_INPUT</result>"))
        .file("START.sh", &emit(r#"<call return="NEVER">INNER</call>"#))
        .file("INNER.sh", &emit(r#"<reset-workflow input="hand-over">../next/</reset-workflow>"#))
        .file("NEVER.sh", &emit("<result>the stack was not cleared</result>"))
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("next got hand-over\n");
}

#[test]
fn r3_30_a_specifier_that_names_no_workflow_pauses_the_agent() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<call-workflow return="DONE">../missing/</call-workflow>"#))
        .file("DONE.sh", &emit("<result>x</result>"))
        .run_workflow(&["--no-lint"]);
    outcome.status(3);
    let main = agent(&state(&outcome), "main").clone();
    assert_eq!(main["status"], "paused");
    assert_eq!(
        norm(&outcome, str_of(&main["error"]).as_str()),
        "script `START.sh`: call-workflow: `../missing/`: state `missing` not found in workflow `[ROOT]` \
         (looked for missing.md, missing.sh)"
    );
    let errors = outcome.events_of(RUN, "ErrorOccurred");
    assert_eq!(errors[0]["error_type"], "CrossWorkflowError");
}

#[test]
fn r3_30_call_workflow_refuses_cd_and_a_missing_return() {
    for (tag, reason) in [
        (
            r#"<call-workflow return="DONE" cd="x">../lib</call-workflow>"#,
            "call-workflow: `cd` is not allowed (the callee continues the caller's session, which belongs to its \
             directory); use <function-workflow cd=…> for a fresh session elsewhere",
        ),
        (
            "<call-workflow>../lib</call-workflow>",
            "call-workflow: needs a `return` attribute (the state to continue at when the callee emits <result>)",
        ),
    ] {
        let outcome = with_lib(Test::new())
            .file("START.sh", &emit(tag))
            .file("DONE.sh", &emit("<result>x</result>"))
            .run_workflow(&["--no-lint"]);
        outcome.status(3);
        assert_eq!(str_of(&agent(&state(&outcome), "main")["error"]), format!("script `START.sh`: {reason}"));
    }
}

#[test]
fn r13_13_a_fifth_nested_call_workflow_pauses_the_agent() {
    // `deep/` calls itself: depth 0 → 1 → 2 → 3 → 4, and the fifth call is refused.
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<call-workflow return="DONE">../deep</call-workflow>"#))
        .file("DONE.sh", &emit("<result>unreachable</result>"))
        .write("deep/START.sh", &emit(r#"<call-workflow return="START">../deep</call-workflow>"#))
        .run_workflow(&[]);
    outcome.status(3);
    let main = agent(&state(&outcome), "main").clone();
    assert_eq!(main["nesting_depth"], 4);
    assert_eq!(str_of(&main["error"]), "call-workflow: maximum cross-workflow nesting depth (4) exceeded");
    assert_eq!(main["stack"].as_array().map(Vec::len), Some(4));
}

#[test]
fn a1_a_multi_fork_mixes_fork_workflow_and_goto_and_a2_resolves_every_target() {
    let outcome = Test::new()
        .write("w/START.sh", &say("<result>$BATON_INPUT</result>"))
        .file(
            "START.sh",
            &emit(
                "<fork-workflow input=\"a\">../w/</fork-workflow>\n<fork-workflow input=\"b\">../w/</fork-workflow>\n\
                 <goto>DONE</goto>",
            ),
        )
        .file("DONE.sh", &emit("<result>done</result>"))
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("done\n");
    let state = state(&outcome);
    assert_eq!(terminated_result(&state, "main_w1"), "a");
    assert_eq!(terminated_result(&state, "main_w2"), "b");
}

#[test]
fn a1_a_multi_fork_with_a_bad_specifier_pauses_the_caller_and_creates_no_worker() {
    let outcome = Test::new()
        .write("w/START.sh", &emit("<result>w</result>"))
        .file(
            "START.sh",
            &emit("<fork-workflow>../w/</fork-workflow>\n<fork-workflow>../nope/</fork-workflow>\n<goto>DONE</goto>"),
        )
        .file("DONE.sh", &emit("<result>done</result>"))
        .run_workflow(&["--no-lint"]);
    outcome.status(3);
    let state = state(&outcome);
    assert_eq!(state["agents"].as_array().map(Vec::len), Some(1));
    assert!(str_of(&agent(&state, "main")["error"]).contains("fork-workflow: `../nope/`"));
}

#[test]
fn a_resumed_run_continues_inside_the_called_workflow() {
    let outcome = with_lib(Test::new())
        .file("START.sh", &emit(r#"<call-workflow return="DONE" input="3">../lib/</call-workflow>"#))
        .file("DONE.sh", &say("<result>$BATON_INPUT</result>"))
        .run_workflow(&["-q", "--max-steps", "1"]);
    outcome.status(3);
    assert_eq!(norm(&outcome, str_of(&agent(&state(&outcome), "main")["scope_dir"]).as_str()), "[ROOT]/lib");
    outcome.rerun(["resume", RUN, "-q", "--max-steps", "10"]).status(0).stdout("6\n");
}

#[test]
fn not_yet_supported_forms_say_so() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<call-workflow return="DONE">https://example.com/w.zip</call-workflow>"#))
        .file("DONE.sh", &emit("<result>x</result>"))
        .run_workflow(&[]);
    outcome.status(3);
    assert_eq!(
        str_of(&agent(&state(&outcome), "main")["error"]),
        "script `START.sh`: call-workflow: `https://example.com/w.zip`: remote workflows (URLs) are not supported by \
         this version of baton yet"
    );
}
