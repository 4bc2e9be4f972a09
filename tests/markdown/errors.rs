//! Failures of a markdown step: invalid frontmatter, usage limits, Claude errors,
//! idle timeouts, a missing CLI (§10, §12.4, A15; §16 items 39, 42–44).

use super::common::{RUN, assert_fatal, assert_paused, state, str_of};
use super::{calls, fake, with_frontmatter};
use crate::support::Test;
use crate::support::fake_claude::Reply;

/// `(error_type, is_retryable, retry_count)` of every `ErrorOccurred`.
fn error_kinds(outcome: &crate::support::Outcome) -> Vec<(String, bool, u64)> {
    outcome
        .events_of(RUN, "ErrorOccurred")
        .iter()
        .map(|event| {
            (
                str_of(&event["error_type"]),
                event["is_retryable"].as_bool().unwrap_or_default(),
                event["retry_count"].as_u64().unwrap_or(99),
            )
        })
        .collect()
}

/// The `attempt` of every `StateStarted` of `state_name`.
fn attempts(outcome: &crate::support::Outcome, state_name: &str) -> Vec<u64> {
    outcome
        .events_of(RUN, "StateStarted")
        .iter()
        .filter(|event| event["state"] == state_name)
        .map(|event| event["attempt"].as_u64().unwrap_or(0))
        .collect()
}

fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

/// Regression (deterministic errors are not retried): broken frontmatter used to be
/// retried three times (~5 s) before the agent paused. It pauses at once, naming the
/// file's own line and column (R5.3's retry is a documented difference).
#[test]
fn r5_3_invalid_frontmatter_pauses_at_once_with_its_line_and_column() {
    let test = Test::new().with_fake_claude().file("START.md", &with_frontmatter("model: [unclosed", "[[START]]\n"));
    fake(&test).rule("a", "", Reply::text("<result>never</result>"));
    let outcome = test.run_workflow(&["--no-lint"]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "prompt_error",
        "prompt file `[ROOT]/wf/START.md`, line 3, column 1: Invalid YAML frontmatter: while parsing a flow \
         sequence, expected ',' or ']'",
    );
    assert!(calls(&outcome).is_empty(), "Claude is never called");
    assert_eq!(error_kinds(&outcome), [("PromptFileError".to_string(), false, 0)]);
    assert_eq!(attempts(&outcome, "START.md"), [1]);
    outcome.stdout("");
}

/// Regression: a policy naming a missing state used to burn three Claude turns
/// (each refused by the policy) before failing. It is refused before the first.
#[test]
fn r5_8_a_policy_naming_a_missing_state_pauses_before_any_turn() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("allowed_transitions:\n  - tag: goto\n    target: REVEIW", "[[START]]\n"))
        .file("REVIEW.md", "[[REVIEW]]\n");
    fake(&test).rule("a", "", Reply::text("<goto>REVIEW</goto>"));
    let outcome = test.run_workflow(&["--no-lint"]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "prompt_error",
        "prompt file `[ROOT]/wf/START.md`: `allowed_transitions` entry 1 (`<goto>REVEIW</goto>`): its `target` \
         state `REVEIW` not found in workflow `[ROOT]/wf` (looked for REVEIW.md, REVEIW.sh); did you mean `REVIEW.md`?",
    );
    assert!(calls(&outcome).is_empty(), "no turn was spent");
}

#[test]
fn a13_attempts_flag_sets_the_number_of_attempts() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::api_error("API Error: 529 overloaded"));
    let outcome = test.run_workflow(&["--attempts", "2"]);
    outcome.status(3);
    assert_eq!(attempts(&outcome, "START.md"), [1, 2]);
}

#[test]
fn a15_usage_limit_with_no_wait_pauses_and_resume_continues() {
    let text = "You've hit your limit · resets 3pm (UTC)";
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    let resets_at = now() + 2;
    fake(&test).rule("a", "[[START]]", Reply::usage_limit(text, resets_at).times(1)).rule(
        "b",
        "[[START]]",
        Reply::text("<result>after the limit</result>"),
    );
    let outcome = test.run_workflow(&["--no-wait"]);
    let resets = jiff::Timestamp::from_second(resets_at).unwrap();
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "usage_limit",
        &format!("usage limit reached (resets at {resets}): {text}"),
    );
    outcome.stdout("");
    assert_eq!(error_kinds(&outcome), [("ClaudeCodeLimitError".to_string(), false, 0)]);
    assert!(outcome.events_of(RUN, "WorkflowWaiting").is_empty(), "--no-wait does not wait");
    assert_eq!(calls(&outcome).len(), 1, "a usage limit is not retried");
    let resumed = outcome.rerun(["resume", RUN]);
    resumed.status(0).stdout("after the limit\n");
    let calls = calls(&resumed);
    assert_eq!(calls.len(), 2);
    // The limited turn reported a session; the resumed step starts fresh like the first attempt.
    assert_eq!(calls[1].flag("--resume"), None);
    assert_eq!(state(&resumed)["status"], "completed");
}

#[test]
fn a15_usage_limit_waits_for_the_structured_reset_time_then_completes() {
    // The text has no reset time: only `rate_limit_event.resetsAt` says when (now + 2 s).
    let test = Test::new()
        .with_fake_claude()
        .env("BATON_LIMIT_BUFFER_SECS", "0")
        .env("BATON_LIMIT_POLL_SECS", "1")
        .file("START.md", "[[START]]\n");
    let resets_at = now() + 2;
    fake(&test).rule("a", "[[START]]", Reply::usage_limit("You've hit your session limit", resets_at).times(1)).rule(
        "b",
        "[[START]]",
        Reply::text("<result>after the wait</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("after the wait\n");
    let waiting = outcome.events_of(RUN, "WorkflowWaiting");
    assert_eq!(waiting.len(), 1);
    assert!(waiting[0]["wait_seconds"].as_u64().unwrap() <= 2, "{:?}", waiting[0]);
    assert_eq!(outcome.events_of(RUN, "WorkflowResuming").len(), 1);
    let paused = outcome.events_of(RUN, "AgentPaused");
    assert_eq!(paused.len(), 1);
    assert_eq!(paused[0]["reason"], "usage_limit");
    let resets = jiff::Timestamp::from_second(resets_at).unwrap();
    assert_eq!(
        paused[0]["message"],
        format!("usage limit reached (resets at {resets}): You've hit your session limit")
    );
    assert!(outcome.events_of(RUN, "WorkflowPaused").is_empty());
    assert_eq!(calls(&outcome).len(), 2);
}

#[test]
fn r10_1_claude_failing_twice_then_succeeding_completes_and_resets_the_retry_count() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("NEXT.md", "[[NEXT]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::api_error("API Error: 529 Overloaded").times(2))
        .rule("b", "[[START]]", Reply::text("<goto>NEXT</goto>"))
        .rule("c", "[[NEXT]]", Reply::api_error("API Error: 500 Internal").times(2))
        .rule("d", "[[NEXT]]", Reply::text("<result>done</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(calls(&outcome).len(), 6);
    // NEXT gets its own three attempts: START's failures were forgotten on success.
    assert_eq!(attempts(&outcome, "START.md"), [1, 2, 3]);
    assert_eq!(attempts(&outcome, "NEXT.md"), [1, 2, 3]);
    let claude_error = |retry| ("ClaudeCodeError".to_string(), true, retry);
    assert_eq!(error_kinds(&outcome), [claude_error(1), claude_error(2), claude_error(1), claude_error(2)]);
    let messages: Vec<String> =
        outcome.events_of(RUN, "ErrorOccurred").iter().map(|event| str_of(&event["message"])).collect();
    assert_eq!(messages[0], "Claude Code exited with code 1: API Error: 529 Overloaded");
    assert_eq!(messages[2], "Claude Code exited with code 1: API Error: 500 Internal");
}

#[test]
fn r10_1_three_claude_failures_pause_with_claude_error() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::api_error("API Error: 529 Overloaded"));
    let outcome = test.run_workflow(&[]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "claude_error",
        "Claude Code exited with code 1: API Error: 529 Overloaded",
    );
    outcome.stdout("");
    assert_eq!(calls(&outcome).len(), 3);
    let saved = state(&outcome);
    assert_eq!(super::common::agent(&saved, "main")["retry_count"], 3);
}

#[test]
fn r10_1_claude_exit_without_result_text_uses_stderr() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::raw(vec![serde_json::json!({"type": "system", "subtype": "init"})], 2));
    let outcome = test.run_workflow(&["--attempts", "1"]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "claude_error",
        "Claude Code exited with code 2: no result text and an empty stderr",
    );
}

#[test]
fn r7_14_claude_idle_timeout_is_retried_not_fatal() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("<result>too late</result>").delay(6.0).times(1)).rule(
        "b",
        "[[START]]",
        Reply::text("<result>in time</result>"),
    );
    let outcome = test.run_workflow(&["--timeout", "2"]);
    outcome.status(0).stdout("in time\n");
    assert_eq!(error_kinds(&outcome), [("ClaudeCodeTimeout".to_string(), true, 1)]);
    let error = &outcome.events_of(RUN, "ErrorOccurred")[0];
    assert_eq!(
        str_of(&error["message"]),
        "Claude Code printed nothing for 2 seconds and was stopped (timeout from --timeout flag)"
    );
    assert_eq!(calls(&outcome).len(), 2);
    assert!(outcome.events_of(RUN, "RunFailed").is_empty());
}

#[test]
fn missing_claude_cli_pauses_the_agent_with_the_exact_message_and_resume_goes_on() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("start", "[[START]]", Reply::text("<result>done</result>"));
    let outcome = test.run_workflow(&["--claude-bin", "/nonexistent"]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "backend_not_available",
        "state `START.md` runs on Claude Code: --claude-bin names `/nonexistent`, which does not exist (install: \
         npm install -g @anthropic-ai/claude-code); once it can run, `baton resume test` goes on",
    );
    assert!(calls(&outcome).is_empty());
    // Installed (here: BATON_CLAUDE_BIN, the fake, once the flag is gone), the run goes on.
    let resumed = outcome.rerun(["resume", RUN]);
    resumed.status(0).stdout("done\n");
    assert_eq!(calls(&resumed).len(), 1);
}

/// A usage limit reported only in text, the way older Claude Code versions did (§16 item 42).
fn text_only_limit(text: &str) -> Reply {
    Reply::raw(
        vec![
            serde_json::json!({"type": "system", "subtype": "init", "session_id": "{{SESSION}}"}),
            serde_json::json!({"type": "result", "subtype": "success", "is_error": true, "result": text,
                               "session_id": "{{SESSION}}", "total_cost_usd": 0}),
        ],
        1,
    )
}

/// The instant the text above names, computed here independently of Baton's parser.
fn next_3pm_in_chicago() -> jiff::Timestamp {
    let now = jiff::Zoned::now().in_tz("America/Chicago").expect("zone");
    let today = now.date().at(15, 0, 0, 0).in_tz("America/Chicago").expect("3pm today");
    if today.timestamp() > now.timestamp() {
        today.timestamp()
    } else {
        now.date().tomorrow().expect("tomorrow").at(15, 0, 0, 0).in_tz("America/Chicago").expect("3pm").timestamp()
    }
}

#[test]
fn a15_usage_limit_text_without_structured_signal_pauses() {
    let text = "You've hit your limit · resets 3pm (America/Chicago)";
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", text_only_limit(text));
    let outcome = test.run_workflow(&["--no-wait"]);
    // The reset time comes from the text: the next 3pm in Chicago.
    let resets = next_3pm_in_chicago();
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "usage_limit",
        &format!("usage limit reached (resets at {resets}): {text}"),
    );
    assert_eq!(calls(&outcome).len(), 1);
}

#[test]
fn a15_unknown_limit_wording_with_unknown_reset_polls_then_completes() {
    // "out of extra usage" is a limit (R12.7) with no reset time: Baton polls (here after 1 s).
    let test = Test::new()
        .with_fake_claude()
        .env("BATON_LIMIT_BUFFER_SECS", "0")
        .env("BATON_LIMIT_POLL_SECS", "1")
        .file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", text_only_limit("You're out of extra usage").times(1)).rule(
        "b",
        "",
        Reply::text("<result>polled</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("polled\n");
    let waiting = outcome.events_of(RUN, "WorkflowWaiting");
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["wait_seconds"], 1);
}

#[test]
fn r12_10_an_error_result_that_is_not_a_limit_is_parsed_as_text() {
    // Exit 0 with `is_error`: not a failure by itself; without a tag and a policy it is fatal.
    let lines = vec![
        serde_json::json!({"type": "system", "subtype": "init", "session_id": "{{SESSION}}"}),
        serde_json::json!({"type": "result", "subtype": "error_during_execution", "is_error": true,
                           "result": "Something went wrong", "session_id": "{{SESSION}}", "total_cost_usd": 0}),
    ];
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::raw(lines, 0));
    let outcome = test.run_workflow(&[]);
    assert_fatal(&outcome, "main", "START.md", "NoTransitionTag", "state `START.md`: no transition tag in the output");
    assert_eq!(calls(&outcome).len(), 1);
}

#[test]
fn r7_12_idle_timeout_from_config_names_its_source() {
    let test =
        Test::new().with_fake_claude().write(".baton/config.toml", "timeout = 1\n").file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::text("<result>late</result>").delay(3.0));
    let outcome = test.run_workflow(&["--attempts", "1"]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "timeout",
        "Claude Code printed nothing for 1 second and was stopped (timeout from .baton/config.toml)",
    );
}

#[test]
fn r12_4_a_stream_line_over_1_mib_is_a_retryable_claude_error() {
    let huge = "x".repeat(1_100_000);
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::text(&format!("{huge} <result>huge</result>")).times(1)).rule(
        "b",
        "",
        Reply::text("<result>small</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("small\n");
    assert_eq!(error_kinds(&outcome), [("ClaudeCodeError".to_string(), true, 1)]);
    assert_eq!(
        str_of(&outcome.events_of(RUN, "ErrorOccurred")[0]["message"]),
        "Claude Code printed a line longer than 1048576 bytes"
    );
}

#[test]
fn a15_epoch_in_the_limit_text_sets_the_wait() {
    let test = Test::new()
        .with_fake_claude()
        .env("BATON_LIMIT_BUFFER_SECS", "0")
        .env("BATON_LIMIT_POLL_SECS", "600")
        .file("START.md", "[[START]]\n");
    let text = format!("Claude AI usage limit reached|{}", now() + 2);
    fake(&test).rule("a", "", text_only_limit(&text).times(1)).rule(
        "b",
        "",
        Reply::text("<result>after the epoch</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("after the epoch\n");
    let waiting = outcome.events_of(RUN, "WorkflowWaiting");
    assert_eq!(waiting.len(), 1);
    assert!(waiting[0]["wait_seconds"].as_u64().unwrap() <= 2, "{:?}", waiting[0]);
}

#[test]
fn a10_launch_timeout_is_honoured_on_resume() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test)
        .rule("a", "", Reply::api_error("API Error: 529 Overloaded").times(1))
        .rule("b", "", Reply::text("<result>late</result>").delay(6.0).times(1))
        .rule("c", "", Reply::text("<result>in time</result>"));
    let first = test.run_workflow(&["--timeout", "2", "--attempts", "1"]);
    first.status(3);
    let resumed = first.rerun(["resume", RUN]);
    resumed.status(0).stdout("in time\n");
    let timeouts: Vec<String> = resumed
        .events_of(RUN, "ErrorOccurred")
        .iter()
        .filter(|event| event["error_type"] == "ClaudeCodeTimeout")
        .map(|event| str_of(&event["message"]))
        .collect();
    assert_eq!(
        timeouts,
        [
            "Claude Code printed nothing for 2 seconds and was stopped (timeout from --timeout of the original `baton run`)"
        ]
    );
}
