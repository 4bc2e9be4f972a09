//! Frontmatter policies, implicit transitions and the reminder loop (R5.1–R5.20;
//! §16 items 31–38).

use super::common::{RUN, assert_fatal, fatal_line, started, state, str_of, transitions};
use super::{calls, calls_for, fake, session_of, trace_file, with_frontmatter};
use crate::support::Test;
use crate::support::fake_claude::Reply;

const GOTO_NEXT: &str = "allowed_transitions:\n  - tag: goto\n    target: NEXT";

/// The `ErrorOccurred` events as `type retryable=… retry_count=…: message`.
fn errors(outcome: &crate::support::Outcome) -> Vec<String> {
    outcome
        .events_of(RUN, "ErrorOccurred")
        .iter()
        .map(|event| {
            format!(
                "{} retryable={} retry={}: {}",
                str_of(&event["error_type"]),
                event["is_retryable"],
                event["retry_count"],
                str_of(&event["message"])
            )
        })
        .collect()
}

#[test]
fn r5_11_single_goto_policy_and_no_tag_is_an_implicit_goto() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter(GOTO_NEXT, "[[START]] think\n"))
        .file("NEXT.md", "[[NEXT]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("I have thought about it.")).rule(
        "b",
        "[[NEXT]]",
        Reply::text("<result>done</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(calls(&outcome).len(), 2, "no reminder");
    assert_eq!(transitions(&outcome), ["main:START.md -goto-> NEXT.md", "main:NEXT.md -result-> -"]);
    // The frontmatter is not part of the prompt.
    assert_eq!(calls(&outcome)[0].prompt, "[[START]] think\n");
    assert!(errors(&outcome).is_empty(), "{:?}", errors(&outcome));
}

#[test]
fn r5_13_another_target_than_the_policys_gets_a_reminder() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter(GOTO_NEXT, "[[START]]\n"))
        .file("NEXT.md", "[[NEXT]]\n")
        .file("OTHER.md", "[[OTHER]]\n");
    fake(&test)
        .rule("a", "REMINDER", Reply::text("<goto>NEXT</goto>"))
        .rule("b", "[[START]]", Reply::text("<goto>OTHER</goto>"))
        .rule("c", "[[NEXT]]", Reply::text("<result>done</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert!(calls_for(&outcome, "[[OTHER]]").is_empty(), "OTHER never runs");
    assert_eq!(
        errors(&outcome),
        ["PolicyViolation retryable=true retry=1: state `START.md`: transition <goto> to `OTHER.md` is not allowed; \
          allowed <goto> transitions: <goto>NEXT</goto>"]
    );
    let start = calls_for(&outcome, "[[START]]");
    assert_eq!(start.len(), 2);
    assert_eq!(
        start[1].prompt,
        "[[START]]\n\n---\nREMINDER: Emit exactly one of these tags (target names are literal, not placeholders):\n\n1. <goto>NEXT</goto>\n\nEmit exactly one of the above tags.\n---"
    );
    assert_eq!(transitions(&outcome)[0], "main:START.md -goto-> NEXT.md");
}

#[test]
fn r5_11_result_without_payload_is_never_implicit() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("allowed_transitions:\n  - tag: result", "[[START]]\n"));
    fake(&test).rule("a", "REMINDER", Reply::text("<result>after reminder</result>")).rule(
        "b",
        "[[START]]",
        Reply::text("No tag from me."),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("after reminder\n");
    assert_eq!(calls(&outcome).len(), 2);
    assert_eq!(
        errors(&outcome),
        ["NoTransitionTag retryable=true retry=1: state `START.md`: no transition tag in the output"]
    );
    assert_eq!(
        calls(&outcome)[1].prompt,
        "[[START]]\n\n---\nREMINDER: Emit exactly one of these tags (target names are literal, not placeholders):\n\n1. <result>...</result>\n\nEmit exactly one of the above tags.\n---"
    );
}

const YES_NO: &str =
    "allowed_transitions:\n  - tag: result\n    payload: \"YES\"\n  - tag: result\n    payload: \"NO\"";

#[test]
fn r5_8_result_payload_is_trimmed_before_the_policy_check() {
    let test = Test::new().with_fake_claude().file("START.md", &with_frontmatter(YES_NO, "[[START]]\n"));
    fake(&test).rule("a", "[[START]]", Reply::text("<result>\n  YES \n</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("YES\n");
    assert_eq!(calls(&outcome).len(), 1);
    assert!(errors(&outcome).is_empty(), "{:?}", errors(&outcome));
}

#[test]
fn r5_8_result_payload_is_case_sensitive() {
    let test = Test::new().with_fake_claude().file("START.md", &with_frontmatter(YES_NO, "[[START]]\n"));
    fake(&test).rule("a", "REMINDER", Reply::text("<result>NO</result>")).rule(
        "b",
        "[[START]]",
        Reply::text("<result>yes</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("NO\n");
    assert_eq!(
        errors(&outcome),
        ["PolicyViolation retryable=true retry=1: state `START.md`: result payload \"yes\" is not allowed; \
          allowed <result> payloads: <result>YES</result>, <result>NO</result>"]
    );
    assert_eq!(
        calls(&outcome)[1].prompt,
        "[[START]]\n\n---\nREMINDER: Emit exactly one of these tags (target names are literal, not placeholders):\n\n1. <result>YES</result>\n2. <result>NO</result>\n\nEmit exactly one of the above tags.\n---"
    );
}

/// R5.20, written out: the exact reminder for a two-entry goto policy.
const GOLDEN_REMINDER: &str = "\n---\nREMINDER: Emit exactly one of these tags (target names are literal, not \
                               placeholders):\n\n1. <goto>A</goto>\n2. <call return=\"R.md\">B</call>\n\nEmit exactly \
                               one of the above tags.\n---";

#[test]
fn r5_16_reminder_loop_three_invocations_then_fatal() {
    // P is entered through a <call>, so its first turn forks the caller's session;
    // the reminders continue the failed turn's own session and never fork (R5.19).
    let policy = "allowed_transitions:\n  - tag: goto\n    target: A\n  - tag: call\n    target: B\n    return: R.md";
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("P.md", &with_frontmatter(policy, "[[P]] Decide, {{agent_id}}.\n"))
        .file("A.md", "[[A]]\n")
        .file("B.md", "[[B]]\n")
        .file("R.md", "[[R]]\n")
        .file("RET.md", "[[RET]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text(r#"<call return="RET">P</call>"#)).rule(
        "b",
        "[[P]]",
        Reply::text("I cannot decide.").cost(0.001),
    );
    let outcome = test.run_workflow(&[]);
    let message = "state `P.md`: no transition tag in the output (after 3 attempts with reminders)";
    outcome.status(1).stdout("");
    outcome.stderr_contains(&fatal_line("main", "P.md", message));
    let failed = outcome.events_of(RUN, "RunFailed");
    assert_eq!(failed.len(), 1);
    assert_eq!(str_of(&failed[0]["error"]), message);
    assert_eq!(state(&outcome)["status"], "failed");
    assert_eq!(
        errors(&outcome),
        [
            "NoTransitionTag retryable=true retry=1: state `P.md`: no transition tag in the output",
            "NoTransitionTag retryable=true retry=2: state `P.md`: no transition tag in the output",
            &format!("NoTransitionTag retryable=false retry=0: {message}"),
        ]
    );
    let p = calls_for(&outcome, "[[P]]");
    assert_eq!(p.len(), 3, "three invocations in total");
    let base = "[[P]] Decide, main.\n";
    assert_eq!(p[0].prompt, base);
    assert_eq!(p[1].prompt, format!("{base}{GOLDEN_REMINDER}"));
    assert_eq!(p[2].prompt, format!("{base}{GOLDEN_REMINDER}"));
    let flags: Vec<String> = p.iter().map(session_of).collect();
    assert_eq!(flags, ["resume fake-session-1 fork", "resume fake-session-2", "resume fake-session-2"]);
    // The trace keeps every prompt as sent.
    assert_eq!(trace_file(&outcome, "main_P_002.prompt.md"), base);
    assert_eq!(trace_file(&outcome, "main_P_002.reminder1.md"), p[1].prompt);
    assert_eq!(trace_file(&outcome, "main_P_002.reminder2.md"), p[2].prompt);
    assert_eq!(outcome.events_of(RUN, "ErrorOccurred")[1]["max_retries"], 3);
    assert_eq!(started(&outcome), ["main:START.md", "main:P.md"]);
}

#[test]
fn r5_18_without_frontmatter_zero_tags_is_fatal_after_one_call() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::text("Nothing to say."));
    let outcome = test.run_workflow(&[]);
    assert_fatal(&outcome, "main", "START.md", "NoTransitionTag", "state `START.md`: no transition tag in the output");
    assert_eq!(calls(&outcome).len(), 1);
}

#[test]
fn r5_18_without_frontmatter_two_tags_are_fatal_after_one_call() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("A.md", "a\n");
    fake(&test).rule("a", "", Reply::text("<goto>A</goto> or <result>x</result>"));
    let outcome = test.run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.md",
        "MultipleTransitions",
        "state `START.md`: 2 transition tags in the output (expected 1)",
    );
    assert_eq!(calls(&outcome).len(), 1);
}

#[test]
fn r5_14_force_implicit_ignores_the_models_tag() {
    let yaml = format!("{GOTO_NEXT}\nforce_implicit: true");
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter(&yaml, "[[START]] Explain <goto>X</goto> tags.\n"))
        .file("NEXT.md", "[[NEXT]]\n")
        .file("ELSEWHERE.md", "[[ELSEWHERE]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text("<goto>ELSEWHERE</goto> and even <result>x</result>").cost(0.25))
        .rule("b", "[[NEXT]]", Reply::text("<result>done</result>"));
    // The body's example tag passes lint too (issue 19, item 7).
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert!(calls_for(&outcome, "[[ELSEWHERE]]").is_empty());
    assert_eq!(transitions(&outcome)[0], "main:START.md -goto-> NEXT.md");
    assert!(errors(&outcome).is_empty(), "{:?}", errors(&outcome));
    // The turn still ran and its session and cost are kept (R5.14).
    assert_eq!(session_of(&calls_for(&outcome, "[[NEXT]]")[0]), "resume fake-session-1");
    assert_eq!(state(&outcome)["total_cost_usd"], 0.25);
}

#[test]
fn r5_5_unknown_frontmatter_key_is_reported_and_force_implicit_not_applied() {
    let yaml = format!("{GOTO_NEXT}\nzeta: 1\nforce_implcit: true");
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter(&yaml, "[[START]]\n"))
        .file("NEXT.md", "[[NEXT]]\n")
        .file("ELSEWHERE.md", "[[ELSEWHERE]]\n");
    fake(&test)
        .rule("a", "REMINDER", Reply::text("<goto>NEXT</goto>"))
        .rule("b", "[[START]]", Reply::text("<goto>ELSEWHERE</goto>"))
        .rule("c", "[[NEXT]]", Reply::text("<result>done</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        errors(&outcome),
        [
            "UnknownField retryable=false retry=0: START.md: ignoring unrecognized frontmatter field(s): \
             force_implcit, zeta",
            // The misspelt key did nothing: the model's tag was parsed and refused.
            "PolicyViolation retryable=true retry=1: state `START.md`: transition <goto> to `ELSEWHERE.md` is not \
             allowed; allowed <goto> transitions: <goto>NEXT</goto>",
        ]
    );
    assert!(calls_for(&outcome, "[[ELSEWHERE]]").is_empty());
    assert!(outcome.events_of(RUN, "RunFailed").is_empty());
}

#[test]
fn r5_1_frontmatter_without_newline_after_closing_dashes_is_body() {
    let text = format!("---\n{GOTO_NEXT}\n---");
    let test = Test::new().with_fake_claude().file("START.md", &text).file("NEXT.md", "[[NEXT]]\n");
    fake(&test).rule("a", "", Reply::text("No tag."));
    let outcome = test.run_workflow(&[]);
    // No policy: no implicit goto and no reminder, the missing tag is fatal at once.
    assert_fatal(&outcome, "main", "START.md", "NoTransitionTag", "state `START.md`: no transition tag in the output");
    let calls = calls(&outcome);
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].prompt, text, "the whole file is the prompt");
}

#[test]
fn r5_1_crlf_frontmatter_is_recognised() {
    let text = format!("---\r\n{}\r\n---\r\n[[START]] body\r\n", GOTO_NEXT.replace('\n', "\r\n"));
    let test = Test::new().with_fake_claude().file("START.md", &text).file("NEXT.md", "[[NEXT]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("No tag.")).rule(
        "b",
        "[[NEXT]]",
        Reply::text("<result>done</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(calls(&outcome)[0].prompt, "[[START]] body\n");
}

#[test]
fn r9_2_reminder_turns_count_toward_the_cost() {
    let policy = "allowed_transitions:\n  - tag: result\n    payload: \"OK\"\n  - tag: goto\n    target: START";
    let test = Test::new().with_fake_claude().file("START.md", &with_frontmatter(policy, "[[START]]\n"));
    fake(&test)
        .rule("a", "REMINDER", Reply::text("still nothing").cost(0.125).times(1))
        .rule("b", "REMINDER", Reply::text("<result>OK</result>").cost(0.25))
        .rule("c", "[[START]]", Reply::text("nothing").cost(0.5));
    let outcome = test.run_workflow(&["--json"]);
    outcome.status(0);
    assert_eq!(calls(&outcome).len(), 3);
    let report: serde_json::Value = serde_json::from_str(outcome.stdout.trim()).expect("--json prints JSON");
    assert_eq!(report["cost_usd"], 0.875);
    assert_eq!(report["result"], "OK");
    assert_eq!(state(&outcome)["total_cost_usd"], 0.875);
}

#[test]
fn r3_41_implicit_transition_renders_its_input() {
    let policy = "allowed_transitions:\n  - tag: goto\n    target: NEXT\n    input: \"from {{agent_id}}: {{input}}\"";
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter(policy, "[[START]]\n"))
        .file("NEXT.md", "[[NEXT]] got <{{input}}>\n");
    fake(&test).rule("a", "[[START]]", Reply::text("done, no tag")).rule(
        "b",
        "[[NEXT]]",
        Reply::text("<result>end</result>"),
    );
    let outcome = test.run_workflow(&["--input", "cli"]);
    outcome.status(0).stdout("end\n");
    assert_eq!(calls_for(&outcome, "[[NEXT]]")[0].prompt, "[[NEXT]] got <from main: cli>\n");
}

#[test]
fn r5_7_empty_allowed_transitions_allows_everything_and_never_reminds() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("allowed_transitions: []", "[[START]]\n"))
        .file("ANY.md", "[[ANY]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text("<goto>ANY</goto>").times(1))
        .rule("b", "[[ANY]]", Reply::text("<goto>START</goto>"))
        .rule("c", "[[START]]", Reply::text("no tag"));
    let outcome = test.run_workflow(&[]);
    // Any tag passes; no tag is fatal at once, as without a policy (R5.18).
    assert_fatal(&outcome, "main", "START.md", "NoTransitionTag", "state `START.md`: no transition tag in the output");
    assert_eq!(calls(&outcome).len(), 3);
}

#[test]
fn r5_2_empty_frontmatter_block_is_dropped_from_the_prompt() {
    let test = Test::new().with_fake_claude().file("START.md", "---\n---\n[[START]] body\n");
    fake(&test).rule("a", "", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    assert_eq!(calls(&outcome)[0].prompt, "[[START]] body\n");
}
