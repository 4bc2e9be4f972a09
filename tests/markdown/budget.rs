//! Budget (R9.1–R9.5, A10; §16 items 40–41).

use super::common::{RUN, emit, state, str_of, transitions};
use super::{calls, calls_for, fake, trace_file};
use crate::support::Test;
use crate::support::fake_claude::Reply;

#[test]
fn r9_3_budget_exceeded_gives_a_synthetic_result_and_ignores_the_models_tag() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("NEXT.md", "[[NEXT]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("<goto>NEXT</goto>").cost(0.02)).rule(
        "b",
        "[[NEXT]]",
        Reply::text("<result>next</result>"),
    );
    let outcome = test.run_workflow(&["--budget", "0.01", "--json"]);
    outcome.status(0);
    assert_eq!(calls(&outcome).len(), 1, "NEXT never runs");
    let report: serde_json::Value = serde_json::from_str(outcome.stdout.trim()).expect("--json prints JSON");
    assert_eq!(report["result"], "Workflow terminated: budget exceeded ($0.0200 > $0.0100)");
    assert_eq!(report["status"], "completed");
    assert_eq!(report["cost_usd"], 0.02);
    let saved = state(&outcome);
    assert_eq!(saved["total_cost_usd"], 0.02);
    assert_eq!(saved["budget_usd"], 0.01);
    assert_eq!(transitions(&outcome), ["main:START.md -result-> -"]);
}

/// Issue 19, item 8: raymond's `call_without_result` lint fixture (a call into a
/// goto loop that never returns) run with `--budget 0.002`, each turn costing
/// $0.000105 as Claude Code 2.1.330 reports it — the session's running total in
/// `total_cost_usd`, the turn's own cost in `model_usage_since_last_result`.
/// raymond adds up the running totals: it stops after 6 turns with `$0.0022 > $0.0020`
/// (1 + 2 + … + 6 turns' worth, where $0.00063 was spent). Baton adds each turn once:
/// 20 turns, `$0.0021 > $0.0020`, what the 20 API calls cost.
#[test]
fn r9_3_budget_stop_counted_a_resumed_sessions_running_total_once_per_turn() {
    const TURN: f64 = 0.000105;
    let test = Test::new()
        .with_fake_claude()
        .file("1_START.md", "[[START]] <call return=\"DONE\">SUB</call>\n")
        .file("DONE.md", "[[DONE]] <result></result>\n")
        .file("LOOP.md", "[[LOOP]] <goto>SUB</goto>\n")
        .file("SUB.md", "[[SUB]] <goto>LOOP</goto>\n");
    for turn in 1..=30_u32 {
        let (marker, text) = match turn {
            1 => ("[[START]]", r#"<call return="DONE">SUB</call>"#),
            _ if turn % 2 == 0 => ("[[SUB]]", "<goto>LOOP</goto>"),
            _ => ("[[LOOP]]", "<goto>SUB</goto>"),
        };
        let reply = Reply::text(text).session_cost(TURN * f64::from(turn), TURN).times(1);
        fake(&test).rule(&format!("t{turn:02}"), marker, reply);
    }
    let outcome = test.run_workflow(&["--budget", "0.002", "--json"]);
    outcome.status(0);
    let report: serde_json::Value = serde_json::from_str(outcome.stdout.trim()).expect("--json prints JSON");
    assert_eq!(report["result"], "Workflow terminated: budget exceeded ($0.0021 > $0.0020)");
    assert_eq!(calls(&outcome).len(), 20, "the turn that crossed the budget is the 20th");
    let total = report["cost_usd"].as_f64().expect("a cost");
    assert!((total - 20.0 * TURN).abs() < 1e-12, "{total}");
    assert!(calls_for(&outcome, "[[DONE]]").is_empty(), "the return state takes no turn");
}

#[test]
fn r9_3_cost_equal_to_the_budget_is_not_exceeded() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("NEXT.md", "[[NEXT]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("<goto>NEXT</goto>").cost(0.5)).rule(
        "b",
        "[[NEXT]]",
        Reply::text("<result>next</result>").cost(0.25),
    );
    let outcome = test.run_workflow(&["--budget", "0.75"]);
    outcome.status(0).stdout("next\n");
    assert_eq!(state(&outcome)["total_cost_usd"], 0.75);
}

#[test]
fn r9_4_budget_exceeded_inside_a_call_pops_to_the_callers_return_state() {
    // The callee overspends: its synthetic result goes to the caller's return state
    // (a script here, which runs: it costs nothing). The markdown state after it does
    // not even start, since the run is already over budget.
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("C.md", "[[C]]\n")
        .file("NEVER.md", "[[NEVER]]\n")
        .file("RET.sh", &emit("<goto>AFTER</goto>"))
        .file("AFTER.md", "[[AFTER]] {{input}}\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<call return="RET">C</call>"#).cost(0.005))
        .rule("b", "[[C]]", Reply::text("<goto>NEVER</goto>").cost(0.02))
        .rule("c", "", Reply::text("<result>should not run</result>"));
    let outcome = test.run_workflow(&["--budget", "0.01"]);
    outcome.status(0).stdout("Workflow terminated: budget exceeded ($0.0250 > $0.0100)\n");
    assert_eq!(
        transitions(&outcome),
        [
            "main:START.md -call-> C.md",
            "main:C.md -result-> RET.sh",
            "main:RET.sh -goto-> AFTER.md",
            "main:AFTER.md -result-> -",
        ]
    );
    let popped = &outcome.events_of(RUN, "TransitionOccurred")[1];
    assert_eq!(str_of(&popped["metadata"]["payload"]), "Workflow terminated: budget exceeded ($0.0250 > $0.0100)");
    let meta: serde_json::Value = serde_json::from_str(&trace_file(&outcome, "main_RET_003.meta.json")).unwrap();
    assert_eq!(meta["env_vars"]["BATON_INPUT"], "Workflow terminated: budget exceeded ($0.0250 > $0.0100)");
    assert_eq!(calls(&outcome).len(), 2, "AFTER.md made no Claude call");
    assert!(calls_for(&outcome, "[[AFTER]]").is_empty());
    assert_eq!(state(&outcome)["total_cost_usd"], 0.025);
}

/// Decision (docs/decisions.md, "Budget inside a call stack"): where raymond (R9.4)
/// runs the caller's prompt return state once more, paying for one more turn per
/// call level, Baton returns the budget message up the stack without another turn.
#[test]
fn r9_4_decision_a_prompt_return_state_is_not_run_again_once_over_budget() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("C.md", "[[C]]\n")
        .file("RET.md", "[[RET]] {{input}}\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<call return="RET">C</call>"#).cost(0.005))
        .rule("b", "[[C]]", Reply::text("<result>done</result>").cost(0.02))
        .rule("c", "", Reply::text("<result>should not run</result>").cost(0.02));
    let outcome = test.run_workflow(&["--budget", "0.01"]);
    outcome.status(0).stdout("Workflow terminated: budget exceeded ($0.0250 > $0.0100)\n");
    assert_eq!(
        transitions(&outcome),
        ["main:START.md -call-> C.md", "main:C.md -result-> RET.md", "main:RET.md -result-> -"]
    );
    assert!(calls_for(&outcome, "[[RET]]").is_empty(), "the return state spent nothing");
    assert_eq!(state(&outcome)["total_cost_usd"], 0.025);
}

#[test]
fn a10_budget_set_on_resume_stops_the_next_markdown_step_before_it_starts() {
    // Unlimited at first: START costs $0.02, then NEXT hits a usage limit (--no-wait).
    // Resumed with --budget 0.01, NEXT terminates without calling Claude.
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("NEXT.md", "[[NEXT]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text("<goto>NEXT</goto>").cost(0.02))
        .rule("b", "[[NEXT]]", Reply::usage_limit("You've hit your limit · resets 3pm (UTC)", 0).times(1))
        .rule("c", "[[NEXT]]", Reply::text("<result>should not run</result>"));
    let first = test.run_workflow(&["--no-wait"]);
    first.status(3);
    assert_eq!(calls(&first).len(), 2);
    let resumed = first.rerun(["resume", RUN, "--budget", "0.01"]);
    resumed.status(0).stdout("Workflow terminated: budget exceeded ($0.0200 > $0.0100)\n");
    assert_eq!(calls(&resumed).len(), 2, "no Claude call after the resume");
    let saved = state(&resumed);
    assert_eq!(saved["total_cost_usd"], 0.02);
    assert_eq!(saved["budget_usd"], 0.01);
}

#[test]
fn r9_1_budget_from_config_applies() {
    let test = Test::new()
        .with_fake_claude()
        .write(".baton/config.toml", "budget = 0.01\n")
        .file("START.md", "[[START]]\n")
        .file("NEXT.md", "[[NEXT]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("<goto>NEXT</goto>").cost(0.03)).rule(
        "b",
        "[[NEXT]]",
        Reply::text("<result>next</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("Workflow terminated: budget exceeded ($0.0300 > $0.0100)\n");
    assert_eq!(state(&outcome)["budget_usd"], 0.01);
}

#[test]
fn r9_2_scripts_cost_nothing_and_cost_accumulates_over_markdown_steps() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("S.sh", &emit("<goto>END</goto>"))
        .file("END.md", "[[END]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("<goto>S</goto>").cost(0.125)).rule(
        "b",
        "[[END]]",
        Reply::text("<result>end</result>").cost(0.25),
    );
    let outcome = test.run_workflow(&["--json"]);
    outcome.status(0);
    let report: serde_json::Value = serde_json::from_str(outcome.stdout.trim()).expect("--json prints JSON");
    assert_eq!(report["cost_usd"], 0.375);
    assert_eq!(state(&outcome)["total_cost_usd"], 0.375);
    let completed = outcome.events_of(RUN, "StateCompleted");
    let costs: Vec<(String, f64)> =
        completed.iter().map(|event| (str_of(&event["state"]), event["cost_usd"].as_f64().unwrap_or(-1.0))).collect();
    assert_eq!(costs, [("START.md".to_string(), 0.125), ("S.sh".to_string(), 0.0), ("END.md".to_string(), 0.25)]);
}

#[test]
fn r9_3_reminder_turns_count_toward_the_budget_within_a_step() {
    let policy = "allowed_transitions:\n  - tag: goto\n    target: A\n  - tag: goto\n    target: B";
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &super::with_frontmatter(policy, "[[START]]\n"))
        .file("A.md", "[[A]]\n")
        .file("B.md", "[[B]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("no tag").cost(0.006));
    let outcome = test.run_workflow(&["--budget", "0.01"]);
    outcome.status(0).stdout("Workflow terminated: budget exceeded ($0.0120 > $0.0100)\n");
    assert_eq!(calls(&outcome).len(), 2, "stopped after the first reminder");
    assert_eq!(state(&outcome)["total_cost_usd"], 0.012);
}

#[test]
fn r9_2_cost_of_a_failed_and_retried_turn_still_counts() {
    // R9.2: the cost of *each* invocation counts. A turn that spent money and then
    // failed (exit 1) is retried; its spend must not vanish from the total, or the
    // budget check undercounts.
    let failed = Reply::raw(
        vec![
            serde_json::json!({"type": "system", "subtype": "init", "session_id": "{{SESSION}}"}),
            serde_json::json!({"type": "result", "subtype": "error_during_execution", "is_error": true,
                               "result": "Execution error", "session_id": "{{SESSION}}", "total_cost_usd": 0.5}),
        ],
        1,
    );
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "[[START]]", failed.times(1)).rule(
        "b",
        "[[START]]",
        Reply::text("<result>ok</result>").cost(0.25),
    );
    let outcome = test.run_workflow(&["--json"]);
    outcome.status(0);
    assert_eq!(calls(&outcome).len(), 2);
    let report: serde_json::Value = serde_json::from_str(outcome.stdout.trim()).expect("--json prints JSON");
    assert_eq!(report["cost_usd"], 0.75);
    assert_eq!(state(&outcome)["total_cost_usd"], 0.75);
}
