//! What is read from Claude's stream: the `result` text only (R4.10, §16 item 55),
//! `<print>` from assistant text (R3.48–R3.49), multi-fork from a prompt (A1, A2).

use serde_json::json;

use super::common::{RUN, spawned_by, state, str_of, terminated_result, transitions};
use super::{calls, calls_for, fake, session_of, with_frontmatter};
use crate::support::Test;
use crate::support::fake_claude::Reply;

#[test]
fn r4_10_goto_only_in_an_earlier_assistant_message_is_not_a_transition() {
    let session = "{{SESSION}}";
    let lines = vec![
        json!({"type": "system", "subtype": "init", "session_id": session}),
        json!({"type": "assistant", "session_id": session, "message": {"content": [
            {"type": "text", "text": "Let me check first. <goto>OTHER</goto>"},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}}),
        json!({"type": "user", "session_id": session, "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "file.txt"}]}}),
        json!({"type": "assistant", "session_id": session, "message": {"content": [
            {"type": "text", "text": "<result>final</result>"}]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": "<result>final</result>",
               "session_id": session, "total_cost_usd": 0.01}),
    ];
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("OTHER.md", "[[OTHER]]\n");
    fake(&test).rule("a", "[[START]]", Reply::raw(lines, 0)).rule("b", "[[OTHER]]", Reply::text("<result>o</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("final\n");
    assert_eq!(calls(&outcome).len(), 1);
    assert_eq!(transitions(&outcome), ["main:START.md -result-> -"]);
    let tools = outcome.events_of(RUN, "ToolInvocation");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["tool_name"], "Bash");
    assert_eq!(tools[0]["detail"], "ls");
}

#[test]
fn r3_49_print_in_assistant_text_emits_print_output() {
    let session = "{{SESSION}}";
    let lines = vec![
        json!({"type": "system", "subtype": "init", "session_id": session}),
        json!({"type": "assistant", "session_id": session, "message": {"content": [
            {"type": "text", "text": "<print>first</print> and <print>sec"}]}}),
        json!({"type": "assistant", "session_id": session, "message": {"content": [
            {"type": "text", "text": "ond part</print> <result>r</result>"}]}}),
        json!({"type": "result", "subtype": "success", "is_error": false,
               "result": "<print>not from here</print> <result>r</result>", "session_id": session, "total_cost_usd": 0}),
    ];
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::raw(lines, 0));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("r\n");
    let prints: Vec<(String, String, String)> = outcome
        .events_of(RUN, "PrintOutput")
        .iter()
        .map(|event| (str_of(&event["agent_id"]), str_of(&event["stream"]), str_of(&event["content"])))
        .collect();
    let print = |content: &str| ("main".to_string(), "assistant".to_string(), content.to_string());
    assert_eq!(prints, [print("first"), print("second part")], "from assistant text only, never the result");
    outcome.stderr_contains("[main] print: first\n").stderr_contains("[main] print: second part\n");
}

#[test]
fn r3_50_transition_inside_a_print_still_counts() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("X.md", "[[X]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("<print>going <goto>X</goto></print>")).rule(
        "b",
        "[[X]]",
        Reply::text("<result>x</result>"),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("x\n");
    let prints = outcome.events_of(RUN, "PrintOutput");
    assert_eq!(prints.len(), 1);
    assert_eq!(prints[0]["content"], "going <goto>X</goto>");
    assert_eq!(transitions(&outcome)[0], "main:START.md -goto-> X.md");
}

#[test]
fn a1_two_forks_and_a_goto_from_a_prompt_spawn_workers() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("W.md", "[[W]] item={{item}} agent={{agent_id}}\n")
        .file("N.md", "[[N]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<fork item="a">W</fork> <fork item="b">W</fork> <goto>N</goto>"#))
        .rule("b", "item=a", Reply::text("<result>wa</result>"))
        .rule("c", "item=b", Reply::text("<result>wb</result>"))
        .rule("d", "[[N]]", Reply::text("<result>main</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("main\n");
    assert_eq!(spawned_by(&outcome, "main"), ["main_w1", "main_w2"]);
    let mut workers: Vec<String> = calls_for(&outcome, "[[W]]").iter().map(|call| call.prompt.clone()).collect();
    workers.sort();
    assert_eq!(workers, ["[[W]] item=a agent=main_w1\n", "[[W]] item=b agent=main_w2\n"]);
    assert!(calls_for(&outcome, "[[W]]").iter().all(|call| session_of(call) == "fresh"));
    assert_eq!(session_of(&calls_for(&outcome, "[[N]]")[0]), "resume fake-session-1");
    let saved = state(&outcome);
    assert_eq!(terminated_result(&saved, "main_w1"), "wa");
    assert_eq!(terminated_result(&saved, "main_w2"), "wb");
    assert_eq!(saved["fork_counters"], json!({"main": 2}));
    // A2: the workers' targets and the continuation are resolved to filenames.
    let initial: Vec<String> =
        outcome.events_of(RUN, "AgentSpawned").iter().map(|event| str_of(&event["initial_state"])).collect();
    assert_eq!(initial, ["W.md", "W.md"]);
    assert!(
        transitions(&outcome).contains(&"main:START.md -multi-fork-> N.md".to_string()),
        "{:?}",
        transitions(&outcome)
    );
}

#[test]
fn a2_fork_tag_disallowed_by_the_policy_gets_a_reminder() {
    let policy = "allowed_transitions:\n  - tag: goto\n    target: N\n  - tag: result";
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter(policy, "[[START]]\n"))
        .file("W.md", "[[W]]\n")
        .file("N.md", "[[N]]\n");
    fake(&test)
        .rule("a", "REMINDER", Reply::text("<goto>N</goto>"))
        .rule("b", "[[START]]", Reply::text("<fork>W</fork> <goto>N</goto>"))
        .rule("c", "[[N]]", Reply::text("<result>n</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("n\n");
    assert!(calls_for(&outcome, "[[W]]").is_empty(), "no worker runs");
    assert!(outcome.events_of(RUN, "AgentSpawned").is_empty());
    let errors = outcome.events_of(RUN, "ErrorOccurred");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["error_type"], "PolicyViolation");
    assert_eq!(errors[0]["is_retryable"], true);
    assert_eq!(
        str_of(&errors[0]["message"]),
        "state `START.md`: tag <fork> is not allowed; allowed tags: goto, result"
    );
    assert_eq!(calls_for(&outcome, "[[START]]").len(), 2);
}

#[test]
fn r3_44_multi_fork_with_disagreeing_continuations_pauses_the_agent() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("W.md", "[[W]]\n")
        .file("N.md", "[[N]]\n")
        .file("M.md", "[[M]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text(r#"<fork next="M">W</fork> <goto>N</goto>"#));
    let outcome = test.run_workflow(&[]);
    outcome.status(3);
    let paused = outcome.events_of(RUN, "AgentPaused");
    assert_eq!(paused.len(), 1);
    assert_eq!(paused[0]["reason"], "validation_error");
    assert!(outcome.events_of(RUN, "AgentSpawned").is_empty());
    assert_eq!(calls(&outcome).len(), 1, "not retried, no reminder");
}

/// A turn run with `--json-schema`: Claude Code's result object carries `structured_output`
/// (and repeats it as the result text, as Claude Code 2.1.197 does), unless `text` is given.
fn structured_turn(structured: serde_json::Value, text: Option<&str>) -> Reply {
    let session = "{{SESSION}}";
    let result = text.map_or_else(|| structured.to_string(), str::to_string);
    Reply::raw(
        vec![
            json!({"type": "system", "subtype": "init", "session_id": session}),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": result,
                   "structured_output": structured, "session_id": session, "total_cost_usd": 0.0}),
        ],
        0,
    )
}

#[test]
fn output_schema_structured_output_is_the_result() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("output_schema: {type: object}", "[[START]]\n"));
    // Tag-like text inside the JSON is data, not a transition.
    let structured = json!({"verdict": "approved", "note": "no <goto>X</goto> here"});
    fake(&test).rule("a", "", structured_turn(structured, None));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("{\"note\":\"no <goto>X</goto> here\",\"verdict\":\"approved\"}\n");
    assert_eq!(calls(&outcome)[0].flag("--json-schema"), Some("{\"type\":\"object\"}"));
}

#[test]
fn output_schema_a_transition_tag_in_the_text_still_wins() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("output_schema: {type: object}", "[[START]]\n"))
        .file("NEXT.md", "[[NEXT]]\n");
    fake(&test)
        .rule("a", "[[START]]", structured_turn(json!({"verdict": "redo"}), Some("Again.\n<goto>NEXT</goto>")))
        .rule("b", "[[NEXT]]", Reply::text("<result>next</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("next\n");
}

#[test]
fn output_schema_without_structured_output_parses_the_text() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("output_schema: {type: object}", "[[START]]\n"));
    fake(&test).rule("a", "", Reply::text("No structure today.\n<result>plain</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("plain\n");
}

#[test]
fn max_turns_reached_pauses_the_agent_without_a_retry() {
    let session = "{{SESSION}}";
    // Claude Code 2.1.197's result when `--max-turns` stops a turn: no `result` text, exit 1.
    let lines = vec![
        json!({"type": "system", "subtype": "init", "session_id": session}),
        json!({"type": "assistant", "session_id": session, "message": {"content": [{"type": "text", "text": "Working."}]}}),
        json!({"type": "result", "subtype": "error_max_turns", "is_error": true, "session_id": session,
               "errors": ["Reached maximum number of turns (2)"], "total_cost_usd": 0.02}),
    ];
    let test = Test::new().with_fake_claude().file("START.md", &with_frontmatter("max_turns: 2", "[[START]]\n"));
    fake(&test).rule("a", "", Reply::raw(lines, 1));
    let outcome = test.run_workflow(&[]);
    outcome.status(3);
    assert_eq!(calls(&outcome).len(), 1, "not retried");
    assert_eq!(calls(&outcome)[0].flag("--max-turns"), Some("2"));
    let state = state(&outcome);
    assert_eq!(state["agents"][0]["pause_reason"], "claude_error");
    assert_eq!(
        state["agents"][0]["error"],
        "Claude Code stopped at the state's max_turns: Reached maximum number of turns (2)"
    );
}
