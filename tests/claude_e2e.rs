//! Baton driving the real, pinned Claude Code CLI against the fake Anthropic API
//! (`support::fake_anthropic`). These tests prove with real Claude sessions what
//! the fast tests (with `fixtures/fake-claude`) can only assume: that the session
//! flags Baton passes make Claude continue, fork or start conversations as the
//! transition tags mean, that tools run in the agent's working directory, and that
//! retries, reminders, cost and budget work against Claude's own behaviour.

use crate::support::Test;
use crate::support::claude_cli::{CLAUDE_ENV_REMOVE, claude_binary, claude_env};
use crate::support::fake_anthropic::{FakeAnthropic, Reply, Rule, ToolUse};

/// A project whose prompt states run the real `claude` against `fake`.
pub(crate) fn with_real_claude(mut test: Test, fake: &FakeAnthropic) -> Test {
    for key in CLAUDE_ENV_REMOVE {
        test = test.env_remove(key);
    }
    for (key, value) in claude_env(&fake.url()) {
        test = test.env(&key, &value);
    }
    test.env("BATON_CLAUDE_BIN", &claude_binary().to_string_lossy())
}

#[test]
fn goto_resumes_the_same_conversation() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("STATE ONE").fresh().reply_text("Noted the number 8472.\n<goto>TWO</goto>"),
        Rule::when_prompt("STATE TWO").resumed().history_contains("8472").reply_text("<result>recalled 8472</result>"),
    ]);
    let test =
        Test::new().file("START.md", "STATE ONE: remember the number 8472.").file("TWO.md", "STATE TWO: which number?");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("recalled 8472\n");
    let two = fake.requests_for("STATE TWO");
    assert_eq!(two.len(), 1, "{}", fake.summary());
    assert!(two[0].view.history_contains("STATE ONE"), "the goto continued the first state's session");
    let sessions: Vec<_> = fake.requests().iter().map(|request| request.view.session_id.clone()).collect();
    assert_eq!(sessions[0], sessions[1], "one session for both states");
}

#[test]
fn a_call_child_sees_the_callers_history_but_the_caller_never_sees_the_childs() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("CALLER START").reply_text("Delegating.\n<call return=\"RET\">CHILD</call>"),
        Rule::when_prompt("CHILD WORK")
            .history_contains("CALLER START")
            .reply_text("child-only detail 5150\n<result>child done</result>"),
        Rule::when_prompt("RETURN STATE")
            .resumed()
            .history_contains("CALLER START")
            .history_lacks("child-only detail")
            .reply_text("<result>caller continued</result>"),
    ]);
    let test = Test::new()
        .file("START.md", "CALLER START")
        .file("CHILD.md", "CHILD WORK")
        .file("RET.md", "RETURN STATE, the child said: {{input}}");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("caller continued\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    let requests = fake.requests();
    let (caller, child, back) = (&requests[0].view, &requests[1].view, &requests[2].view);
    assert_ne!(child.session_id, caller.session_id, "the child forked the caller's session");
    assert_eq!(back.session_id, caller.session_id, "the return state resumed the caller's own session");
    assert!(back.prompt.contains("the child said: child done"), "{}", back.prompt);
}

#[test]
fn cross_workflow_tags_carry_sessions_across_workflows() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("MAIN START").fresh().reply_text("<call-workflow return=\"BACK\">../lib/</call-workflow>"),
        Rule::when_prompt("LIB ENTRY")
            .history_contains("MAIN START")
            .reply_text("lib-only detail 6061\n<result>from lib</result>"),
        Rule::when_prompt("BACK HOME")
            .resumed()
            .history_contains("MAIN START")
            .history_lacks("lib-only detail")
            .reply_text("<function-workflow return=\"END\">../tool/</function-workflow>"),
        Rule::when_prompt("TOOL ENTRY").fresh().reply_text("<reset-workflow>../final/</reset-workflow>"),
        Rule::when_prompt("FINAL ENTRY").fresh().reply_text("<result>final</result>"),
    ]);
    let test = Test::new()
        .file("START.md", "MAIN START")
        .file("BACK.md", "BACK HOME, lib said: {{input}}")
        // Only named as the return state: reset-workflow clears the stack before it runs.
        .file("END.md", "END STATE")
        .write("lib/START.md", "LIB ENTRY")
        .write("tool/START.md", "TOOL ENTRY")
        .write("final/START.md", "FINAL ENTRY");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    // reset-workflow cleared the stack, so the run ends inside `final/`.
    outcome.status(0).stdout("final\n");
    assert!(fake.unmatched().is_empty(), "every turn matched its session rule:\n{}", fake.summary());
    let requests = fake.requests();
    let (main, lib, back) = (&requests[0].view, &requests[1].view, &requests[2].view);
    assert_ne!(lib.session_id, main.session_id, "the callee forked the caller's session");
    assert_eq!(back.session_id, main.session_id, "the return state resumed the caller's own session");
    assert!(back.prompt.contains("lib said: from lib"), "{}", back.prompt);
}

#[test]
fn an_ask_pauses_the_run_and_the_answer_continues_the_same_conversation() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("PLAN THE TRIP").fresh().reply_text("Need one fact.\n<ask next=\"BOOK\">Which city?</ask>"),
        Rule::when_prompt("BOOK IT").resumed().history_contains("PLAN THE TRIP").reply_text("<result>booked</result>"),
    ]);
    let test = Test::new().file("START.md", "PLAN THE TRIP").file("BOOK.md", "BOOK IT: the person said {{input}}");
    let test = with_real_claude(test, &fake);
    let outcome = test.run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    let ask: serde_json::Value = serde_json::from_str(outcome.stdout.trim()).expect("the ask as JSON");
    assert_eq!(ask["prompt"], "Which city?");
    let outcome = outcome.rerun(["answer", "test", "Lisbon"]);
    outcome.status(0).stdout("booked\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    let book = fake.requests_for("BOOK IT");
    assert!(book[0].view.prompt.contains("the person said Lisbon"), "{}", book[0].view.prompt);
}

#[test]
fn tools_run_in_the_agents_working_directory() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("WRITE STATE")
            .on_round(0)
            .reply(Reply::text("Writing.").with_tool_use(ToolUse::bash("echo made > made.txt"))),
        Rule::when_prompt("WRITE STATE").on_round(1).reply_text("Done.\n<result>wrote</result>"),
    ]);
    let test = Test::new()
        .file("START.sh", "mkdir -p sub\necho '<reset cd=\"sub\">WRITE</reset>'\n")
        .file("WRITE.md", "WRITE STATE");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("wrote\n");
    assert_eq!(std::fs::read_to_string(outcome.root().join("sub/made.txt")).unwrap(), "made\n");
    assert_eq!(fake.requests()[0].view.cwd.as_deref(), Some(outcome.root().join("sub").as_path()));
    outcome.stderr_contains("[main]   tool Bash echo made > made.txt");
}

#[test]
fn a_missing_tag_under_a_policy_gets_the_reminder_and_recovers() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("REMINDER: Emit exactly one").resumed().reply_text("Sorry.\n<goto>NEXT</goto>"),
        Rule::when_prompt("DECIDE STATE").reply_text("I forgot the tag."),
        Rule::when_prompt("NEXT STATE").reply_text("<result>recovered</result>"),
    ]);
    let test = Test::new()
        .file(
            "START.md",
            "---\nallowed_transitions:\n  - { tag: goto, target: NEXT }\n  - { tag: result }\n---\nDECIDE STATE",
        )
        .file("NEXT.md", "NEXT STATE");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("recovered\n");
    let decide: Vec<_> =
        fake.requests().into_iter().filter(|request| request.view.prompt.contains("DECIDE STATE")).collect();
    assert_eq!(decide.len(), 2, "the first turn and one reminder");
    assert!(decide[1].view.prompt.contains("1. <goto>NEXT</goto>\n2. <result>...</result>"));
    assert_eq!(decide[0].view.session_id, decide[1].view.session_id, "the reminder resumed the failed turn");
    outcome.stderr_contains("[main]   reminder 1: asking again for exactly one allowed tag");
}

#[test]
fn an_overloaded_api_is_survived() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("BUSY STATE").named("overloaded").http_error(529, "Overloaded").times(2),
        Rule::when_prompt("BUSY STATE").reply_text("<result>served</result>"),
    ]);
    let test = Test::new().file("START.md", "BUSY STATE");
    let outcome = with_real_claude(test, &fake).env("CLAUDE_CODE_MAX_RETRIES", "3").run_workflow(&[]);
    outcome.status(0).stdout("served\n");
    assert_eq!(fake.fired("overloaded"), 2);
}

#[test]
fn baton_retries_when_claude_gives_up_then_pauses() {
    let fake = FakeAnthropic::start(vec![Rule::when_prompt("DOWN STATE").named("down").http_error(529, "Overloaded")]);
    let test = Test::new().file("START.md", "DOWN STATE");
    let outcome = with_real_claude(test, &fake).env("CLAUDE_CODE_MAX_RETRIES", "0").run_workflow(&[]);
    outcome.status(3);
    assert_eq!(fake.fired("down"), 3, "three attempts by Baton, none retried inside Claude");
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "claude_error");
    let error = state["agents"][0]["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("Claude Code exited with code 1: API Error: 529"), "{error}");
}

#[test]
fn cost_comes_from_claude_and_the_budget_stops_the_run() {
    // 1000 input + 100 output tokens on sonnet, priced by Claude Code.
    let fake =
        FakeAnthropic::start(vec![Rule::when_prompt("LOOP STATE").reply_text("<goto>START</goto>").usage(1000, 100)]);
    let test = Test::new().file("START.md", "LOOP STATE");
    let outcome = with_real_claude(test, &fake).run_workflow(&["--budget", "0.01", "--json"]);
    outcome.status(0);
    let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("json");
    // Each turn costs what Claude Code prices it at (its price list changes between
    // versions); the run stops at the first total over the budget.
    let turns = outcome.events_of("test", "StateCompleted");
    let per_turn = turns[0]["cost_usd"].as_f64().expect("a priced turn");
    assert!(per_turn > 0.0);
    let expected_turns = (0.01 / per_turn).floor() as usize + 1;
    let total = per_turn * expected_turns as f64;
    assert_eq!(turns.len(), expected_turns, "{report}");
    assert_eq!(report["result"], format!("Workflow terminated: budget exceeded (${total:.4} > $0.0100)"));
    assert!((report["cost_usd"].as_f64().unwrap() - total).abs() < 1e-9, "{report}");
    assert_eq!(fake.requests().len(), expected_turns);
}

/// Issue 19, item 8, against the real CLI: raymond's `call_without_result` shape (a
/// call forks the caller's session, then a goto loop resumes it) under a budget.
/// Claude Code's `total_cost_usd` is the session's running total, the fork's
/// including its parent's turn; Baton's total equals the CLI's own running total
/// at the last turn and the API calls made times their price: each call is counted
/// once. Adding up the running totals, as raymond does, counts the first call once
/// per later turn.
#[test]
fn the_budget_counts_each_api_call_once_across_a_forked_and_resumed_session() {
    let fake =
        FakeAnthropic::start(vec![Rule::any().reply_with(|view| Reply::text(view.prompt.trim()).usage(100, 50))]);
    let test = Test::new()
        .file("1_START.md", "<call return=\"DONE\">SUB</call>")
        .file("DONE.md", "<result></result>")
        .file("LOOP.md", "<goto>SUB</goto>")
        .file("SUB.md", "<goto>LOOP</goto>");
    let outcome = with_real_claude(test, &fake).run_workflow(&["--budget", "0.002", "--json"]);
    outcome.status(0);
    let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("json");
    let turns: Vec<_> = outcome
        .events_of("test", "StateCompleted")
        .into_iter()
        .filter(|event| event["cost_usd"].as_f64().is_some_and(|cost| cost > 0.0))
        .collect();
    let per_call = turns[0]["cost_usd"].as_f64().expect("a priced turn");
    assert!(turns.iter().all(|turn| (turn["cost_usd"].as_f64().unwrap() - per_call).abs() < 1e-12), "{turns:?}");
    let calls = fake.requests().len();
    assert_eq!(turns.len(), calls, "{}", fake.summary());
    let total = report["cost_usd"].as_f64().expect("a total");
    assert!((total - per_call * calls as f64).abs() < 1e-9, "{report}");
    assert_eq!(report["result"], format!("Workflow terminated: budget exceeded (${total:.4} > $0.0020)"));
    // The CLI's own running total of the session at the last turn is the same sum.
    let last = turns.last().expect("a turn");
    let stem = last["state"].as_str().unwrap().trim_end_matches(".md");
    let stream = outcome.run_dir("test").join(format!("main_{stem}_{:03}.jsonl", last["step"].as_u64().unwrap()));
    let stream = std::fs::read_to_string(&stream).expect("the turn's stream is traced");
    let session_total = stream
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|object| object["type"] == "result")
        .and_then(|result| result["total_cost_usd"].as_f64())
        .expect("a total_cost_usd");
    assert!((session_total - total).abs() < 1e-9, "Claude says {session_total}, Baton {total}");
}

#[test]
fn a_usage_limit_message_pauses_the_agent() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("LIMITED STATE").http_error(400, "You've hit your limit · resets 3pm (America/Chicago)"),
    ]);
    let test = Test::new().file("START.md", "LIMITED STATE");
    let outcome = with_real_claude(test, &fake).run_workflow(&["--no-wait"]);
    outcome.status(3);
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "usage_limit");
    assert!(state["agents"][0]["limit_resets_at"].as_i64().is_some(), "the reset time was parsed: {state}");
    // Claude Code may retry the request itself (2.1.330 does); Baton must not run the turn again.
    let invocations = outcome.events_of("test", "ClaudeInvocationStarted");
    assert_eq!(invocations.len(), 1, "a usage limit is not retried by Baton");
}

#[test]
fn the_review_loop_sample_runs_end_to_end() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("You are the planner").on_round(0).reply(Reply::text("Planning.").with_tool_use(
            ToolUse::bash("printf '1. add greeting\\n' > \"$(ls -d \"$PWD\"/.baton/tasks/*/main)/plan.md\""),
        )),
        Rule::when_prompt("You are the planner").on_round(1).reply_text("Plan written.\n<goto>IMPLEMENT</goto>"),
        Rule::when_prompt("Implement the plan")
            .on_round(0)
            .reply(Reply::text("Implementing.").with_tool_use(ToolUse::bash("echo hello > greeting.txt"))),
        Rule::when_prompt("Implement the plan")
            .on_round(1)
            .history_contains("You are the planner")
            .reply_text("Implemented.\n<goto>TEST</goto>"),
        Rule::when_prompt("You are a strict code reviewer").fresh().reply_text("<result>APPROVED</result>"),
    ]);
    let sample = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("states/review-loop");
    let test = with_real_claude(Test::new(), &fake).env("TEST_COMMAND", "test -f greeting.txt");
    let outcome =
        test.args(["run", &sample.to_string_lossy(), "--input", "add a greeting", "--run-id", "review"]).run();
    outcome.status(0);
    assert!(outcome.stdout.starts_with("Approved after 1 review round(s)."), "{}\n{}", outcome.stdout, fake.summary());
    assert_eq!(std::fs::read_to_string(outcome.root().join("greeting.txt")).unwrap(), "hello\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
}

#[test]
fn a15_the_subscriber_limit_is_read_from_the_structured_signal() {
    // Under OAuth auth Claude Code reports a subscriber limit as a `rate_limit_event`
    // with `resetsAt` and "You've hit your session limit · resets …" (A15).
    let resets_at = (jiff::Timestamp::now().as_second() / 3600 + 3) * 3600;
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("SUBSCRIBER STATE").reply(Reply::subscription_limit("five_hour", resets_at)),
    ]);
    let test = with_real_claude(Test::new().file("START.md", "SUBSCRIBER STATE"), &fake)
        .env("ANTHROPIC_API_KEY", "")
        .env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-fake");
    let outcome = test.run_workflow(&["--no-wait"]);
    outcome.status(3);
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "usage_limit");
    assert_eq!(state["agents"][0]["limit_resets_at"], resets_at, "the reset time came from resetsAt");
    let error = state["agents"][0]["error"].as_str().unwrap_or_default();
    let resets = jiff::Timestamp::from_second(resets_at).unwrap();
    // The wording changes between Claude Code versions ("session limit", "5-hour limit").
    let expected = format!("usage limit reached (resets at {resets}): You've hit your ");
    assert!(error.starts_with(&expected), "{error}");
    outcome.stderr_contains(&format!("paused at START.md (usage_limit): {expected}"));
}

/// A workflow whose one state asks the model to write `made.txt`, with `frontmatter`
/// (none when empty); the scripted model calls `Write`, then ends with a result.
fn writing_state(fake_frontmatter: &str) -> (FakeAnthropic, Test) {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("WRITE STATE")
            .on_round(0)
            .reply(Reply::text("Writing the file.").with_tool_use(ToolUse::write("made.txt", "made by the model\n"))),
        Rule::when_prompt("WRITE STATE").on_round(1).reply_text("Finished.\n<result>turn over</result>"),
    ]);
    let body = "WRITE STATE: create made.txt.";
    let text =
        if fake_frontmatter.is_empty() { body.to_string() } else { format!("---\n{fake_frontmatter}\n---\n{body}") };
    (fake, Test::new().file("START.md", &text))
}

#[test]
fn a_plan_mode_state_cannot_write_even_in_a_run_that_skips_permissions() {
    // Without the option, the run's --dangerously-skip-permissions lets the write happen.
    let (fake, test) = writing_state("");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("turn over\n");
    assert_eq!(std::fs::read_to_string(outcome.root().join("made.txt")).unwrap(), "made by the model\n");

    let (fake, test) = writing_state("permission_mode: plan");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("turn over\n");
    assert!(!outcome.root().join("made.txt").exists(), "plan mode kept the state read-only:\n{}", fake.summary());
    let trace = std::fs::read_to_string(outcome.run_dir("test").join("main_START_001.jsonl")).unwrap_or_default();
    assert!(trace.contains("\"permissionMode\":\"plan\""), "Claude Code ran in plan mode: {trace}");
}

#[test]
fn a_state_limited_to_reading_cannot_write() {
    let (fake, test) = writing_state("allowed_tools: [Read]\npermission_mode: dontAsk");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("turn over\n");
    assert!(!outcome.root().join("made.txt").exists(), "{}", fake.summary());
}

#[test]
fn output_schema_makes_claude_codes_structured_output_the_result() {
    let fake =
        FakeAnthropic::start(vec![Rule::when_prompt("JUDGE STATE").on_round(0).reply(
            Reply::text("Judging.").with_tool_use(ToolUse::new(
                "StructuredOutput",
                serde_json::json!({"verdict": "approved", "score": 9}),
            )),
        )]);
    let frontmatter = "output_schema:\n  type: object\n  required: [verdict]\n  properties:\n    verdict: {type: string}\n    \
                       score: {type: integer}";
    let test = Test::new().file("START.md", &format!("---\n{frontmatter}\n---\nJUDGE STATE"));
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("{\"score\":9,\"verdict\":\"approved\"}\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
}

#[test]
fn max_turns_stops_a_turn_that_keeps_calling_tools() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("BUSY STATE").reply(Reply::text("Working.").with_tool_use(ToolUse::bash("echo hi"))),
    ]);
    let test = Test::new().file("START.md", "---\nmax_turns: 2\n---\nBUSY STATE");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(3);
    assert_eq!(fake.requests().len(), 2, "two model turns, then Claude Code stopped; Baton did not retry");
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "claude_error");
    assert_eq!(
        state["agents"][0]["error"],
        "Claude Code stopped at the state's max_turns: Reached maximum number of turns (2)"
    );
}

/// Issue 13.4: Baton chooses a new conversation's id and journals it with the
/// step's launch, before Claude starts; Claude Code uses it (`--session-id`, also
/// with `--resume … --fork-session` for a call), so a turn cut short by a crash
/// leaves a conversation the run knows by name, and the agent still points at
/// its last committed session.
#[test]
fn new_conversations_take_the_ids_baton_journalled_before_claude_started() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("FRESH STATE").reply_text("<call return=\"BACK\">CHILD</call>"),
        Rule::when_prompt("CHILD STATE").reply_text("<result>child</result>"),
        Rule::when_prompt("BACK STATE").resumed().reply_text("<result>back</result>"),
    ]);
    let test =
        Test::new().file("START.md", "FRESH STATE").file("CHILD.md", "CHILD STATE").file("BACK.md", "BACK STATE");
    let outcome = with_real_claude(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("back\n");
    let journal = std::fs::read_to_string(outcome.run_dir("test").join("journal.jsonl")).unwrap_or_default();
    let planned: Vec<String> = journal
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .flat_map(|entry| entry["upsert"].as_array().cloned().unwrap_or_default())
        .filter_map(|agent| agent["new_session_id"].as_str().map(str::to_string))
        .collect();
    let sessions = |prompt: &str| fake.requests_for(prompt).first().and_then(|request| request.view.session_id.clone());
    let fresh = sessions("FRESH STATE").expect("the first turn's session");
    let child = sessions("CHILD STATE").expect("the call's fork");
    assert!(planned.contains(&fresh), "the fresh conversation's id {fresh} was journalled: {planned:?}");
    assert!(planned.contains(&child), "the forked conversation's id {child} was journalled: {planned:?}");
    assert_ne!(fresh, child, "the call forked a new conversation");
    assert_eq!(sessions("BACK STATE"), Some(fresh), "the return resumed the caller's conversation in place");
}

/// Issue 13.4, the crash: a turn killed mid-way has its conversation's id on disk
/// already; after `resume` the step runs again in a conversation of a new id, and
/// the agent never pointed at the half-written one.
#[test]
fn a_turn_killed_mid_way_left_its_session_id_on_disk_and_resume_starts_another() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("SLOW STATE").times(1).delay(std::time::Duration::from_secs(60)).reply_text("late"),
    ]);
    let test = with_real_claude(Test::new().file("START.md", "SLOW STATE"), &fake);
    let mut child = test.spawn(&["run", "wf", "-q", "--run-id", "killed"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while fake.requests_for("SLOW STATE").is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let first = fake.requests_for("SLOW STATE").first().and_then(|request| request.view.session_id.clone());
    let first = first.expect("the turn reached the API");
    let state = test.root().join(".baton/runs/killed");
    let journal = std::fs::read_to_string(state.join("journal.jsonl")).unwrap_or_default();
    assert!(journal.contains(&format!("\"new_session_id\":\"{first}\"")), "on disk mid-turn: {journal}");
    // SAFETY: kill(2) on the pid of a child this test spawned.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    let _ = child.wait();
    fake.push_rule(Rule::when_prompt("SLOW STATE").fresh().reply_text("<result>second time</result>"));
    let outcome = test.args(["resume", "killed", "-q"]).run();
    outcome.status(0).stdout("second time\n");
    let second = fake.requests_for("SLOW STATE").last().and_then(|request| request.view.session_id.clone());
    assert!(second.is_some_and(|second| second != first), "the retried step started a conversation of its own");
}
