//! `<call>`, `<function>`, `<result>` and the return stack with script states
//! (R3.6, R3.11–R3.17, A4; §16 items 22, 24).

use serde_json::Value;

use super::common::{RUN, emit, norm, say, str_of, transitions};
use crate::support::{Outcome, Test};

/// Saves the run's state as of the previous step (`baton status --json`) to `snapshot_<name>.json` in the cwd.
fn snapshot(name: &str) -> String {
    format!("\"$BATON_BIN\" status --json \"$BATON_WORKFLOW_ID\" > snapshot_{name}.json\n")
}

fn read_snapshot(outcome: &Outcome, name: &str) -> Value {
    let text = std::fs::read_to_string(outcome.root().join(format!("snapshot_{name}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The return states on main's stack, outermost first.
fn stack_states(snapshot: &Value) -> Vec<String> {
    snapshot["agents"][0]["stack"]
        .as_array()
        .map(|frames| frames.iter().map(|frame| str_of(&frame["state"])).collect())
        .unwrap_or_default()
}

#[test]
fn r3_17_call_function_result_arithmetic_round_trip() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<call return="CHECK" input="21">DOUBLE</call>"#))
        .file(
            "DOUBLE.sh",
            &format!(
                "{}{}",
                snapshot("double"),
                say(r#"<function return="ADD1" input="$((BATON_INPUT*2))">IDENT</function>"#)
            ),
        )
        .file("IDENT.sh", &format!("{}{}", snapshot("ident"), say("<result>$BATON_INPUT</result>")))
        .file("ADD1.sh", &format!("{}{}", snapshot("add1"), say("<result>$((BATON_INPUT+1))</result>")))
        .file("CHECK.sh", &format!("{}{}", snapshot("check"), say("<result>$BATON_INPUT</result>")))
        .run_workflow(&[]);
    outcome.status(0).stdout("43\n");
    assert_eq!(
        transitions(&outcome),
        [
            "main:START.sh -call-> DOUBLE.sh",
            "main:DOUBLE.sh -function-> IDENT.sh",
            "main:IDENT.sh -result-> ADD1.sh",
            "main:ADD1.sh -result-> CHECK.sh",
            "main:CHECK.sh -result-> -",
        ]
    );
    let payloads: Vec<String> = outcome
        .events_of(RUN, "TransitionOccurred")
        .iter()
        .map(|event| {
            let metadata = &event["metadata"];
            format!("{}|{}|{}", str_of(&metadata["return"]), str_of(&metadata["input"]), str_of(&metadata["payload"]))
        })
        .collect();
    assert_eq!(payloads, ["CHECK.sh|21|", "ADD1.sh|42|", "||42", "||43", "||43"]);
    // The stack as each state saw it in the state file.
    assert_eq!(stack_states(&read_snapshot(&outcome, "double")), ["CHECK.sh"]);
    assert_eq!(stack_states(&read_snapshot(&outcome, "ident")), ["CHECK.sh", "ADD1.sh"]);
    assert_eq!(stack_states(&read_snapshot(&outcome, "add1")), ["CHECK.sh"]);
    assert!(stack_states(&read_snapshot(&outcome, "check")).is_empty());
    assert_eq!(read_snapshot(&outcome, "ident")["agents"][0]["pending_result"], "42");
    let state = outcome.state(RUN);
    assert_eq!(state["status"], "completed");
    assert_eq!(state["agents"], serde_json::json!([]));
    assert_eq!(state["terminated"], serde_json::json!([{"id": "main", "result": "43"}]));
}

#[test]
fn r3_15_call_goto_result_returns_the_untrimmed_payload_to_the_caller() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<call return="R">C</call>"#))
        .file("C.sh", &emit("<goto>D</goto>"))
        .file("D.sh", &emit("<result> x </result>"))
        .file("R.sh", &say("<result>[$BATON_INPUT]</result>"))
        .run_workflow(&[]);
    outcome.status(0).stdout("[ x ]\n");
    assert_eq!(
        transitions(&outcome),
        ["main:START.sh -call-> C.sh", "main:C.sh -goto-> D.sh", "main:D.sh -result-> R.sh", "main:R.sh -result-> -",]
    );
}

#[test]
fn r3_6_reset_inside_a_called_flow_keeps_the_stack() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<call return="RET">SUB</call>"#))
        .file("SUB.sh", &emit("<reset>SUB2</reset>"))
        .file("SUB2.sh", &format!("{}{}", snapshot("sub2"), emit("<result>from SUB2</result>")))
        .file("RET.sh", &say("<result>RET got: $BATON_INPUT</result>"))
        .run_workflow(&[]);
    outcome.status(0).stdout("RET got: from SUB2\n");
    assert_eq!(stack_states(&read_snapshot(&outcome, "sub2")), ["RET.sh"]);
    assert_eq!(
        transitions(&outcome),
        [
            "main:START.sh -call-> SUB.sh",
            "main:SUB.sh -reset-> SUB2.sh",
            "main:SUB2.sh -result-> RET.sh",
            "main:RET.sh -result-> -",
        ]
    );
}

#[test]
fn a4_result_restores_the_callers_cwd() {
    let outcome = Test::new()
        .write("elsewhere/.keep", "")
        .file("START.sh", &emit(r#"<function return="BACK">AWAY</function>"#))
        .file("AWAY.sh", &emit(r#"<reset cd="elsewhere">AWAY2</reset>"#))
        .file("AWAY2.sh", &say("<result>$(pwd -P)</result>"))
        .file("BACK.sh", &say("<result>callee was in $BATON_INPUT, caller is in $(pwd -P)</result>"))
        .run_workflow(&[]);
    outcome.status(0);
    assert_eq!(norm(&outcome, &outcome.stdout), "callee was in [ROOT]/elsewhere, caller is in [ROOT]\n");
}

#[test]
fn r3_16_result_with_an_empty_stack_terminates_with_the_raw_payload() {
    let outcome = Test::new().file("START.sh", &emit("<result>  line one\nline two  </result>")).run_workflow(&[]);
    outcome.status(0).stdout("  line one\nline two  \n");
    let terminated = outcome.events_of(RUN, "AgentTerminated");
    assert_eq!(terminated.len(), 1);
    assert_eq!(terminated[0]["agent_id"], "main");
    assert_eq!(terminated[0]["result"], "  line one\nline two  ");
}

#[test]
fn a8_stdout_is_the_payload_with_a_single_trailing_newline() {
    Test::new()
        .file("START.sh", "printf '<result>no newline</result>'\n")
        .run_workflow(&[])
        .status(0)
        .stdout("no newline\n");
    Test::new()
        .file("START.sh", &emit("<result>ends with newline\n</result>"))
        .run_workflow(&[])
        .status(0)
        .stdout("ends with newline\n");
}
