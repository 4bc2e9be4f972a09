//! Which Claude session each markdown invocation continues (R3.4–R3.23, the R3.15
//! table; §16 items 22–23).

use super::common::{RUN, emit, state, str_of, transitions};
use super::{calls, calls_for, fake, session_of};
use crate::support::Test;
use crate::support::fake_claude::Reply;

/// The marker of each call's state (`[[X]]` → `X`) with its session flags.
fn sessions(outcome: &crate::support::Outcome) -> Vec<String> {
    calls(outcome)
        .iter()
        .map(|call| {
            let marker = call.prompt.split("]]").next().unwrap_or_default().trim_start_matches("[[");
            format!("{marker}: {}", session_of(call))
        })
        .collect()
}

#[test]
fn r16_22_call_child_forks_and_the_return_state_resumes_the_callers_session() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]] go\n")
        .file("C.md", "[[C]] child\n")
        .file("D.md", "[[D]] child continued\n")
        .file("R.md", "[[R]] got <{{input}}>\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<call return="R.md">C.md</call>"#))
        .rule("b", "[[C]]", Reply::text("<goto>D</goto>"))
        .rule("c", "[[D]]", Reply::text("<result> x </result>"))
        .rule("d", "[[R]]", Reply::text("<result>end</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("end\n");
    assert_eq!(
        sessions(&outcome),
        [
            "START: fresh",
            // R3.13: the child sees the caller's history through a fork of its session.
            "C: resume fake-session-1 fork",
            // A goto inside the callee continues the callee's (forked) session.
            "D: resume fake-session-2",
            // R3.19: the return state continues the caller's session, not the child's.
            "R: resume fake-session-1",
        ]
    );
    // R3.15: the payload is trimmed by the markdown executor.
    assert_eq!(calls_for(&outcome, "[[R]]")[0].prompt, "[[R]] got <x>\n");
    assert_eq!(
        transitions(&outcome),
        ["main:START.md -call-> C.md", "main:C.md -goto-> D.md", "main:D.md -result-> R.md", "main:R.md -result-> -",]
    );
}

#[test]
fn r3_15_session_table_function_reset_and_script_in_between() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("F.md", "[[F]] function\n")
        .file("AFTER.md", "[[AFTER]] {{input}}\n")
        .file("R.md", "[[R]] after reset\n")
        .file("S.sh", &emit("<goto>LAST</goto>"))
        .file("LAST.md", "[[LAST]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<function return="AFTER">F</function>"#))
        .rule("b", "[[F]]", Reply::text("<result>from f</result>"))
        .rule("c", "[[AFTER]]", Reply::text("<reset>R</reset>"))
        .rule("d", "[[R]]", Reply::text("<goto>S</goto>"))
        .rule("e", "[[LAST]]", Reply::text("<result>done</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        sessions(&outcome),
        [
            "START: fresh",
            // R3.14: a function starts a fresh session (no fork).
            "F: fresh",
            // The return from a function continues the caller's session.
            "AFTER: resume fake-session-1",
            // R3.6: reset starts a fresh session.
            "R: fresh",
            // Scripts never touch the session: markdown → script → markdown resumes it.
            "LAST: resume fake-session-4",
        ]
    );
    assert_eq!(calls_for(&outcome, "[[AFTER]]")[0].prompt, "[[AFTER]] from f\n");
    assert_eq!(
        transitions(&outcome),
        [
            "main:START.md -function-> F.md",
            "main:F.md -result-> AFTER.md",
            "main:AFTER.md -reset-> R.md",
            "main:R.md -goto-> S.sh",
            "main:S.sh -goto-> LAST.md",
            "main:LAST.md -result-> -",
        ]
    );
}

#[test]
fn r3_13_call_from_a_script_without_a_session_starts_the_child_fresh() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.sh", &emit(r#"<call return="R">C</call>"#))
        .file("C.md", "[[C]]\n")
        .file("R.md", "[[R]] {{input}}\n");
    fake(&test).rule("a", "[[C]]", Reply::text("<result>c</result>")).rule(
        "b",
        "[[R]]",
        Reply::text("<result>r</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("r\n");
    // The caller had no session: the child starts fresh, and the return state too
    // (the frame saved a null session, R3.17).
    assert_eq!(sessions(&outcome), ["C: fresh", "R: fresh"]);
    assert_eq!(calls_for(&outcome, "[[R]]")[0].prompt, "[[R]] c\n");
}

#[test]
fn r3_21_fork_worker_starts_fresh_and_the_parent_resumes_its_session() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("W.md", "[[W]] worker {{agent_id}}\n")
        .file("NEXT.md", "[[NEXT]] parent\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<fork next="NEXT">W</fork>"#))
        .rule("b", "[[W]]", Reply::text("<result>w</result>"))
        .rule("c", "[[NEXT]]", Reply::text("<result>parent done</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("parent done\n");
    let worker = calls_for(&outcome, "[[W]]");
    assert_eq!(worker.len(), 1);
    assert_eq!(session_of(&worker[0]), "fresh");
    assert_eq!(worker[0].prompt, "[[W]] worker main_w1\n");
    let parent = calls_for(&outcome, "[[NEXT]]");
    assert_eq!(parent.len(), 1);
    assert_eq!(session_of(&parent[0]), "resume fake-session-1");
    let saved = state(&outcome);
    let worker_result = saved["terminated"].as_array().unwrap().iter().find(|agent| agent["id"] == "main_w1").unwrap();
    assert_eq!(str_of(&worker_result["result"]), "w");
    assert_eq!(outcome.events_of(RUN, "AgentSpawned").len(), 1);
}

#[test]
fn r10_1_a_retried_call_child_still_forks_the_callers_session() {
    let test =
        Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("C.md", "[[C]]\n").file("R.md", "[[R]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<call return="R">C</call>"#))
        .rule("b", "[[C]]", Reply::api_error("API Error: 529 Overloaded").times(1))
        .rule("c", "[[C]]", Reply::text("<result>c</result>"))
        .rule("d", "[[R]]", Reply::text("<result>r</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("r\n");
    // The retry re-executes the state from the start, fork included (R10.1).
    assert_eq!(
        sessions(&outcome),
        ["START: fresh", "C: resume fake-session-1 fork", "C: resume fake-session-1 fork", "R: resume fake-session-1"]
    );
}

#[test]
fn a5_call_child_paused_then_resumed_still_forks_the_callers_session() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("C.md", "[[C]] {{input}}\n")
        .file("R.md", "[[R]] {{input}}\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<call return="R" input="for the child">C</call>"#))
        .rule("b", "[[C]]", Reply::usage_limit("You've hit your limit · resets 3pm (UTC)", 0).times(1))
        .rule("c", "[[C]]", Reply::text("<result>c</result>"))
        .rule("d", "[[R]]", Reply::text("<result>r</result>"));
    let first = test.run_workflow(&["--no-wait"]);
    first.status(3);
    let resumed = first.rerun(["resume", RUN]);
    resumed.status(0).stdout("r\n");
    // A5: the fork survives the restart, and so does the pending input (R8.13).
    assert_eq!(
        sessions(&resumed),
        ["START: fresh", "C: resume fake-session-1 fork", "C: resume fake-session-1 fork", "R: resume fake-session-1"]
    );
    let child = calls_for(&resumed, "[[C]]");
    assert_eq!(child[1].prompt, "[[C]] for the child\n");
}

#[test]
fn r5_12_implicit_call_forks_the_callers_session_like_an_explicit_one() {
    let policy = "allowed_transitions:\n  - tag: call\n    target: C\n    return: R";
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &super::with_frontmatter(policy, "[[START]]\n"))
        .file("C.md", "[[C]]\n")
        .file("R.md", "[[R]] {{input}}\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text("no tag"))
        .rule("b", "[[C]]", Reply::text("<result>c</result>"))
        .rule("c", "[[R]]", Reply::text("<result>r</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("r\n");
    assert_eq!(sessions(&outcome), ["START: fresh", "C: resume fake-session-1 fork", "R: resume fake-session-1"]);
    assert_eq!(calls_for(&outcome, "[[R]]")[0].prompt, "[[R]] c\n");
}

#[test]
fn r3_39_claude_runs_in_the_agents_cwd_after_reset_cd() {
    let test = Test::new()
        .with_fake_claude()
        .write("sub/.keep", "")
        .file("START.md", "[[START]]\n")
        .file("X.md", "[[X]]\n")
        .file("Y.md", "[[Y]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<reset cd="sub">X</reset>"#))
        .rule("b", "[[X]]", Reply::text(r#"<goto cd="elsewhere">Y</goto>"#))
        .rule("c", "[[Y]]", Reply::text("<result>y</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("y\n");
    let root = outcome.root().canonicalize().unwrap();
    let cwds: Vec<std::path::PathBuf> =
        calls(&outcome).iter().map(|call| std::path::Path::new(&call.cwd).canonicalize().unwrap()).collect();
    // `cd` on a goto is ignored (R3.5): Y runs where X ran, resuming X's session.
    assert_eq!(cwds, [root.clone(), root.join("sub"), root.join("sub")]);
    assert_eq!(sessions(&outcome), ["START: fresh", "X: fresh", "Y: resume fake-session-2"]);
}

#[test]
fn r3_31_call_workflow_forks_the_callers_session_and_r3_33_function_workflow_starts_fresh() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("MID.md", "[[MID]] got <{{input}}>\n")
        .file("END.md", "[[END]] got <{{input}}>\n")
        .write("lib/START.md", "[[LIB]] input <{{input}}>\n")
        .write("fresh/START.md", "[[FRESH]]\n");
    fake(&test)
        .rule(
            "a",
            "[[START]]",
            Reply::text(r#"<call-workflow return="MID" input="{{workflow_id}}">../lib/</call-workflow>"#),
        )
        .rule("b", "[[LIB]]", Reply::text("<result>from lib</result>"))
        .rule("c", "[[MID]]", Reply::text(r#"<function-workflow return="END">../fresh</function-workflow>"#))
        .rule("d", "[[FRESH]]", Reply::text("<result>from fresh</result>"))
        .rule("e", "[[END]]", Reply::text("<result>end</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("end\n");
    assert_eq!(
        sessions(&outcome),
        [
            "START: fresh",
            "LIB: resume fake-session-1 fork",
            "MID: resume fake-session-1",
            "FRESH: fresh",
            "END: resume fake-session-1",
        ]
    );
    // R3.41: the cross-workflow input was rendered; the callee's result came back.
    assert_eq!(calls_for(&outcome, "[[LIB]]")[0].prompt, format!("[[LIB]] input <{RUN}>\n"));
    assert_eq!(calls_for(&outcome, "[[MID]]")[0].prompt, "[[MID]] got <from lib>\n");
}
