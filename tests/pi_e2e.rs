//! Baton driving the real, pinned pi CLI (`support::pi_cli`) against the fake
//! Anthropic API (`support::fake_anthropic`), through a pi provider whose
//! `baseUrl` is the fake: the session flags Baton passes make pi continue, fork
//! or start conversations as the transition tags mean, tools run for real, the
//! cost is pi's own, and a failed turn pauses the agent. raymond's five pi
//! workflows (`workflows/pi_smoke*`, `pi_test_fixture`) are recreated here with
//! the same states and prompts and reach raymond's outcomes.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::Test;
use crate::support::fake_anthropic::{FakeAnthropic, Reply, Rule, ToolUse};
use crate::support::pi_cli::{PI_ENV_REMOVE, PI_MODEL, agent_dir, pi_binary, pi_command, pi_env, pi_env_with};

/// pi's price for one turn of 1000 input and 100 output tokens on the fake
/// model ($3 and $15 per million).
const TURN_COST: f64 = 0.0045;

/// A project whose prompt states run the real `pi` against `fake`; its
/// workflow declares `backend: pi` (raymond's form).
fn with_real_pi(test: Test, fake: &FakeAnthropic) -> Test {
    let test = test.file("workflow.yaml", "id: pi-e2e\nbackend: pi\n");
    with_real_pi_env(test, fake)
}

/// A project whose pi states (by `--backend pi`, a manifest or frontmatter) run
/// the real `pi` against `fake`, with pi's retries off.
pub(crate) fn with_real_pi_env(test: Test, fake: &FakeAnthropic) -> Test {
    with_pi_env(test, pi_env(&fake.url()))
}

fn with_pi_env(mut test: Test, env: Vec<(String, String)>) -> Test {
    for key in PI_ENV_REMOVE {
        test = test.env_remove(key);
    }
    for (key, value) in env {
        test = test.env(&key, &value);
    }
    test.env("BATON_PI_BIN", &pi_binary().to_string_lossy())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn total_cost(outcome: &crate::support::Outcome) -> f64 {
    outcome.state("test")["total_cost_usd"].as_f64().expect("a total cost")
}

/// The pi session files under the fake's agent dir, by session id.
fn session_files(fake: &FakeAnthropic) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let sessions = agent_dir(&fake.url()).join("sessions");
    for dir in std::fs::read_dir(&sessions).into_iter().flatten().flatten() {
        for file in std::fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            let name = file.file_name().to_string_lossy().into_owned();
            let id = name.trim_end_matches(".jsonl").rsplit('_').next().unwrap_or_default().to_string();
            files.push((id, std::fs::read_to_string(file.path()).unwrap_or_default()));
        }
    }
    files
}

#[test]
fn a_plain_pi_step_gives_its_result_cost_and_session() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("PLAIN STATE").fresh().reply_text("Done.\n<result>plain ok</result>").usage(1000, 100),
    ]);
    let outcome = with_real_pi(Test::new().file("START.md", "PLAIN STATE"), &fake).run_workflow(&[]);
    outcome.status(0).stdout("plain ok\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    assert_eq!(fake.requests()[0].view.model, PI_MODEL, "pi's default model, configured in its agent dir");
    assert!(close(total_cost(&outcome), TURN_COST), "{}", total_cost(&outcome));
    // The agent's session is the one pi wrote.
    let sessions = session_files(&fake);
    assert_eq!(sessions.len(), 1);
    let events = outcome.events("test");
    let state = outcome.state("test");
    assert!(
        events.iter().any(|event| event.to_string().contains(&sessions[0].0))
            || state.to_string().contains(&sessions[0].0),
        "the run knows pi's session id {}",
        sessions[0].0
    );
}

#[test]
fn goto_continues_the_pi_session() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("STATE ONE").fresh().reply_text("Noted the number 8472.\n<goto>TWO</goto>"),
        Rule::when_prompt("STATE TWO").resumed().history_contains("8472").reply_text("<result>recalled 8472</result>"),
    ]);
    let test = Test::new().file("START.md", "STATE ONE: remember 8472.").file("TWO.md", "STATE TWO: which number?");
    let outcome = with_real_pi(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("recalled 8472\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    assert!(fake.requests_for("STATE TWO")[0].view.history_contains("STATE ONE"));
    assert_eq!(session_files(&fake).len(), 1, "one pi session for both states");
}

/// The child of a `<call>` runs in `--fork` of the caller's session: it sees the
/// caller's history, the caller's own session file is unchanged by it, and the
/// copied history is not charged again (pi's stream holds only the fork's own
/// messages; raymond subtracts the session file's earlier total instead).
#[test]
fn a_call_child_forks_the_callers_pi_session_and_does_not_recharge_it() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("CALLER START").fresh().reply_text("<call return=\"RET\">CHILD</call>").usage(1000, 100),
        Rule::when_prompt("CHILD WORK")
            .history_contains("CALLER START")
            .reply_text("child-only detail 5150\n<result>child done</result>")
            .usage(1000, 100),
        Rule::when_prompt("RETURN STATE")
            .resumed()
            .history_contains("CALLER START")
            .history_lacks("child-only detail")
            .reply_text("<result>caller continued</result>")
            .usage(1000, 100),
    ]);
    let test = Test::new()
        .file("START.md", "CALLER START")
        .file("CHILD.md", "CHILD WORK")
        .file("RET.md", "RETURN STATE, the child said: {{input}}");
    let outcome = with_real_pi(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("caller continued\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    assert!(fake.requests_for("RETURN STATE")[0].view.prompt.contains("the child said: child done"));
    let sessions = session_files(&fake);
    assert_eq!(sessions.len(), 2, "the caller's session and the child's fork");
    let caller = sessions.iter().find(|(_, text)| !text.contains("parentSession")).expect("the caller's session");
    assert!(!caller.1.contains("child-only detail"), "the caller's session never saw the child's turn");
    let costs: Vec<f64> =
        outcome.events_of("test", "StateCompleted").iter().filter_map(|event| event["cost_usd"].as_f64()).collect();
    assert!(costs.iter().all(|cost| close(*cost, TURN_COST)), "each turn costs its own call only: {costs:?}");
    assert!(close(total_cost(&outcome), 3.0 * TURN_COST), "{}", total_cost(&outcome));
}

#[test]
fn fork_workers_run_in_parallel_with_their_own_pi_sessions() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("FAN OUT")
            .fresh()
            .reply_text("<fork next=\"JOIN\" item=\"a\">WORKER</fork><fork next=\"JOIN\" item=\"b\">WORKER</fork>"),
        Rule::when_prompt("WORKER ON a").fresh().history_lacks("FAN OUT").reply_text("<result>a done</result>"),
        Rule::when_prompt("WORKER ON b").fresh().history_lacks("FAN OUT").reply_text("<result>b done</result>"),
        Rule::when_prompt("JOIN BODY").resumed().history_contains("FAN OUT").reply_text("<result>joined</result>"),
    ]);
    let test =
        Test::new().file("START.md", "FAN OUT").file("WORKER.md", "WORKER ON {{item}}").file("JOIN.md", "JOIN BODY");
    let outcome = with_real_pi(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("joined\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    assert_eq!(session_files(&fake).len(), 3, "the parent's session and one fresh one per worker");
}

/// A `<function>` runs in a fresh pi session; its return continues the caller's.
#[test]
fn a_function_runs_fresh_and_its_return_continues_the_callers_pi_session() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("CALLER").fresh().reply_text("secret 3141\n<function return=\"AFTER\">FUNC</function>"),
        Rule::when_prompt("FUNC BODY").fresh().history_lacks("3141").reply_text("<result>f done</result>"),
        Rule::when_prompt("AFTER FUNC")
            .resumed()
            .history_contains("3141")
            .history_lacks("FUNC BODY")
            .reply_text("<result>back</result>"),
    ]);
    let test = Test::new()
        .file("START.md", "CALLER")
        .file("FUNC.md", "FUNC BODY")
        .file("AFTER.md", "AFTER FUNC got {{input}}");
    let outcome = with_real_pi(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("back\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    assert_eq!(session_files(&fake).len(), 2, "the caller's session and the function's own");
}

#[test]
fn reset_starts_a_fresh_pi_session() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("BEFORE RESET").fresh().reply_text("secret 4242\n<reset>AFTER</reset>"),
        Rule::when_prompt("AFTER RESET").fresh().history_lacks("4242").reply_text("<result>clean slate</result>"),
    ]);
    let test = Test::new().file("START.md", "BEFORE RESET").file("AFTER.md", "AFTER RESET");
    let outcome = with_real_pi(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("clean slate\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    assert_eq!(session_files(&fake).len(), 2);
}

/// R5.16: a turn without a tag gets a reminder in the same pi session.
#[test]
fn r5_16_a_reminder_continues_the_pi_session() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("REMINDER: Emit exactly one")
            .named("reminder")
            .resumed()
            .history_contains("I forgot the tag.")
            .reply_text("Sorry.\n<goto>NEXT</goto>"),
        Rule::when_prompt("DECIDE STATE").reply_text("I forgot the tag."),
        Rule::when_prompt("NEXT STATE").resumed().reply_text("<result>recovered</result>"),
    ]);
    let test = Test::new()
        .file(
            "START.md",
            "---\nallowed_transitions:\n  - { tag: goto, target: NEXT }\n  - { tag: result }\n---\nDECIDE STATE",
        )
        .file("NEXT.md", "NEXT STATE");
    let outcome = with_real_pi(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("recovered\n");
    assert_eq!(fake.fired("reminder"), 1, "{}", fake.summary());
    assert_eq!(session_files(&fake).len(), 1, "the reminder and the goto continued the first session");
    outcome.stderr_contains("[main]   reminder 1: asking again for exactly one allowed tag");
}

/// A state's own `backend: pi` frontmatter, in a workflow of Claude states,
/// with its pi options: `tools` replaces the default set.
#[test]
fn a_states_frontmatter_chooses_pi_and_its_options() {
    let fake = FakeAnthropic::start(vec![Rule::when_prompt("PI STATE").reply_text("<result>on pi</result>")]);
    let test = Test::new().file("START.md", "---\nbackend: pi\ntools: [read, ls]\n---\nPI STATE\n");
    let outcome = with_pi_env(test, pi_env(&fake.url())).run_workflow(&[]);
    outcome.status(0).stdout("on pi\n");
    let tools = &fake.requests()[0].raw["tools"];
    let names: Vec<&str> = tools.as_array().into_iter().flatten().filter_map(|tool| tool["name"].as_str()).collect();
    assert_eq!(names, ["read", "ls"]);
}

/// R12.5: with `--dangerously-skip-permissions=false` pi gets the file tools
/// and no shell, and the `write` the model asks for happens in the agent's
/// directory.
#[test]
fn pi_runs_the_write_tool_the_model_asks_for() {
    let fake =
        FakeAnthropic::start(vec![
            Rule::when_prompt("WRITE STATE").on_round(0).reply(Reply::text("Writing.").with_tool_use(ToolUse::new(
                "write",
                serde_json::json!({"path": "made.txt", "content": "made by pi\n"}),
            ))),
            Rule::when_prompt("WRITE STATE").on_round(1).reply_text("Done.\n<result>wrote</result>"),
        ]);
    let outcome = with_real_pi(Test::new().file("START.md", "WRITE STATE"), &fake)
        .run_workflow(&["--dangerously-skip-permissions=false"]);
    outcome.status(0).stdout("wrote\n");
    assert_eq!(std::fs::read_to_string(outcome.root().join("made.txt")).expect("made.txt"), "made by pi\n");
    let logs = outcome.into_test().args(["logs", "test", "--step", "1"]).run();
    logs.status(0);
    for line in ["--- tool write", "    path: made.txt", "--- result of write", "--- turn ended: stop, $"] {
        assert!(logs.stdout.contains(line), "`baton logs --step` lays out the pi turn ({line}):\n{}", logs.stdout);
    }
    let tools = &fake.requests()[0].raw["tools"];
    let names: Vec<&str> = tools.as_array().into_iter().flatten().filter_map(|tool| tool["name"].as_str()).collect();
    assert!(names.contains(&"write") && !names.contains(&"bash"), "the default tools, no shell: {names:?}");
}

/// With `--dangerously-skip-permissions` (Baton's default) pi keeps its own
/// tools, bash included.
#[test]
fn skip_permissions_lets_pi_run_bash() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("BASH STATE").on_round(0).reply(
            Reply::text("Running.")
                .with_tool_use(ToolUse::new("bash", serde_json::json!({"command": "echo ran > ran.txt"}))),
        ),
        Rule::when_prompt("BASH STATE").on_round(1).reply_text("<result>ran</result>"),
    ]);
    let outcome = with_real_pi(Test::new().file("START.md", "BASH STATE"), &fake)
        .run_workflow(&["--dangerously-skip-permissions"]);
    outcome.status(0).stdout("ran\n");
    assert_eq!(std::fs::read_to_string(outcome.root().join("ran.txt")).expect("ran.txt"), "ran\n");
}

/// A provider error ends pi's turn with `stopReason: "error"` and exit code 0
/// ("a CLI that exits 0 with an error result"); pi has no usage-limit signal,
/// so a 429 is a retryable failure: Baton retries, then pauses the agent.
#[test]
fn a_provider_429_with_exit_0_fails_the_step_retryably_and_pauses() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("DOWN STATE")
            .named("down")
            .http_error(429, "Number of request tokens has exceeded your quota"),
    ]);
    let outcome = with_real_pi(Test::new().file("START.md", "DOWN STATE"), &fake).run_workflow(&[]);
    outcome.status(3);
    assert_eq!(fake.fired("down"), 3, "three attempts by Baton, none retried inside pi\n{}", fake.summary());
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "claude_error");
    let error = state["agents"][0]["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("pi exited 0 but its turn ended in error: 429 ")
            && error.contains("Number of request tokens has exceeded your quota"),
        "{error}"
    );
    outcome.stderr_contains("pi exited 0 but its turn ended in error: 429");
}

/// Regression: `--session` with an id pi does not know is pi's own error (exit
/// 1, "No session found matching …"), reported with its stderr.
#[test]
fn an_unknown_pi_session_is_reported_with_pis_own_message() {
    let fake = FakeAnthropic::start(vec![]);
    let cwd = tempfile::tempdir().expect("cwd");
    let output = pi_command(&fake.url())
        .args(["--mode", "json", "-p", "--session", "no-such-session"])
        .current_dir(cwd.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("pi");
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("No session found matching 'no-such-session'"));
    assert!(fake.requests().is_empty());
}

/// Baton is killed with SIGKILL while pi's turn is in flight; `baton resume`
/// runs the step again and the run completes. The step's first request is held
/// by the fake until the test ends (the orphaned pi never gets an answer).
#[test]
fn sigkill_mid_pi_turn_then_resume_completes() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("FIRST STEP").reply_text("<goto>SLOW</goto>"),
        Rule::when_prompt("SLOW STEP")
            .named("held")
            .times(1)
            .reply(Reply::text("too late").delay(Duration::from_secs(600))),
        Rule::when_prompt("SLOW STEP")
            .named("again")
            .resumed()
            .history_contains("FIRST STEP")
            .reply_text("<result>resumed ok</result>"),
    ]);
    let test = with_real_pi(Test::new().file("START.md", "FIRST STEP").file("SLOW.md", "SLOW STEP"), &fake);
    let mut child = test.spawn(&["run", "wf", "--run-id", "test"]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while fake.fired("held") == 0 {
        assert!(Instant::now() < deadline, "pi never reached the slow step:\n{}", fake.summary());
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL baton");
    let killed = child.wait().expect("baton");
    assert_eq!(killed.code(), None, "baton was killed by a signal");
    let outcome = test.args(["resume", "test"]).run();
    outcome.status(0).stdout("resumed ok\n");
    assert_eq!(fake.fired("again"), 1, "{}", fake.summary());
}

// raymond's pi workflows, same states and prompts.

const SECRET_PROMPT: &str =
    "Remember this secret number: 8472. Do not write it to any file — just hold\nit in memory.\n\n";

fn raymond_workflow(files: &[(&str, &str)], manifest: &str) -> Test {
    let mut test = Test::new().file("workflow.yaml", manifest);
    for (name, text) in files {
        test = test.file(name, text);
    }
    test
}

fn manifest(id: &str) -> String {
    format!("id: {id}\nname: {id}\nbackend: pi\ndefault_budget: 1.0\n")
}

/// The model of raymond's smoke tests: it does what the prompt says to
/// "respond with exactly", and recalls the secret when its history holds it.
fn obedient_model() -> Rule {
    Rule::any().reply_with(|view| {
        let history = view.history_text();
        let answer = if view.prompt.contains("What was the secret number") {
            match history.contains("8472") {
                true => "<result>SECRET=8472</result>".to_string(),
                false => "<result>SECRET=unknown</result>".to_string(),
            }
        } else {
            // The first line after "respond with exactly" that is a tag.
            let lower = view.prompt.to_lowercase();
            let after = lower.find("respond with exactly").map_or("", |at| &view.prompt[at..]);
            after.lines().skip(1).map(str::trim).find(|line| line.starts_with('<')).unwrap_or_default().to_string()
        };
        Reply::text(&answer).usage(1000, 100)
    })
}

/// raymond's `workflows/pi_smoke`.
fn pi_smoke() -> Test {
    raymond_workflow(
        &[("START.md", "Respond with exactly the following and nothing else:\n\n<result>ok</result>\n")],
        &manifest("pi-smoke"),
    )
}

/// raymond's `workflows/pi_smoke_resume`.
fn pi_smoke_resume() -> Test {
    raymond_workflow(
        &[
            (
                "START.md",
                &format!(
                    "---\nallowed_transitions:\n  - {{ tag: goto, target: SECOND.md }}\n---\n{SECRET_PROMPT}Then respond with exactly:\n\n<goto>SECOND.md</goto>\n"
                ),
            ),
            (
                "SECOND.md",
                "---\nallowed_transitions:\n  - { tag: result }\n---\nWhat was the secret number I told you to remember in the previous turn?\n\nRespond with exactly:\n\n<result>SECRET=<the number></result>\n\nFor example, if the number was 9999, respond with <result>SECRET=9999</result>.\n",
            ),
        ],
        &manifest("pi-smoke-resume"),
    )
}

/// raymond's `workflows/pi_smoke_call`.
fn pi_smoke_call() -> Test {
    raymond_workflow(
        &[
            (
                "START.md",
                &format!(
                    "---\nallowed_transitions:\n  - {{ tag: call, target: CHILD.md, return: DONE.md }}\n---\n{SECRET_PROMPT}Then respond with exactly:\n\n<call return=\"DONE.md\">CHILD.md</call>\n"
                ),
            ),
            (
                "CHILD.md",
                "---\nallowed_transitions:\n  - { tag: result }\n---\nWhat was the secret number I told you to remember earlier?\n\nRespond with exactly:\n\n<result>SECRET=<the number></result>\n\nFor example, if the number was 9999, respond with <result>SECRET=9999</result>.\n",
            ),
            (
                "DONE.md",
                "---\nallowed_transitions:\n  - { tag: result }\n---\nThe sub-workflow returned: {{input}}\n\nRespond with exactly:\n\n<result>{{input}}</result>\n",
            ),
        ],
        &manifest("pi-smoke-call"),
    )
}

/// raymond's `workflows/pi_smoke_fork`.
fn pi_smoke_fork() -> Test {
    raymond_workflow(
        &[
            (
                "START.md",
                "---\nallowed_transitions:\n  - { tag: fork, target: WORKER.md, next: JOIN.md }\n---\nSpawn one parallel worker and advance to the join state.\n\nRespond with exactly:\n\n<fork next=\"JOIN.md\">WORKER.md</fork>\n",
            ),
            (
                "WORKER.md",
                "---\nallowed_transitions:\n  - { tag: result }\n---\nYou are a worker. Respond with exactly:\n\n<result>ok</result>\n",
            ),
            (
                "JOIN.md",
                "---\nallowed_transitions:\n  - { tag: result }\n---\nYou are the join state. Respond with exactly:\n\n<result>ok</result>\n",
            ),
        ],
        &manifest("pi-smoke-fork"),
    )
}

/// raymond's `workflows/pi_test_fixture`.
fn pi_test_fixture() -> Test {
    raymond_workflow(
        &[(
            "START.sh",
            "#!/bin/sh\n# START.sh — Entry state for pi test fixture.\n# This is a script state; it does not invoke the pi backend.\necho \"pi test fixture: START\"\necho \"<result>pi_test_fixture_done</result>\"\n",
        )],
        "id: pi-test-fixture\nname: Pi Backend Test Fixture\nbackend: pi\n",
    )
}

fn run_raymond(test: Test, fake: &FakeAnthropic) -> crate::support::Outcome {
    with_pi_env(test, pi_env(&fake.url())).run_workflow(&[])
}

#[test]
fn raymond_pi_smoke() {
    let fake = FakeAnthropic::start(vec![obedient_model()]);
    let test = pi_smoke();
    let outcome = run_raymond(test, &fake);
    outcome.status(0).stdout("ok\n");
    assert!(close(total_cost(&outcome), TURN_COST));
}

#[test]
fn raymond_pi_smoke_resume() {
    let fake = FakeAnthropic::start(vec![obedient_model()]);
    let test = pi_smoke_resume();
    let outcome = run_raymond(test, &fake);
    outcome.status(0).stdout("SECRET=8472\n");
    assert_eq!(session_files(&fake).len(), 1);
}

#[test]
fn raymond_pi_smoke_call() {
    let fake = FakeAnthropic::start(vec![obedient_model()]);
    let test = pi_smoke_call();
    let outcome = run_raymond(test, &fake);
    outcome.status(0).stdout("SECRET=8472\n");
    // (1) the callee recalled the caller's secret, (2) in a session of its own,
    // (3) without re-charging the caller's history: three turns, three prices.
    assert_eq!(session_files(&fake).len(), 2);
    assert!(close(total_cost(&outcome), 3.0 * TURN_COST), "{}", total_cost(&outcome));
}

#[test]
fn raymond_pi_smoke_fork() {
    let fake = FakeAnthropic::start(vec![obedient_model()]);
    let test = pi_smoke_fork();
    let outcome = run_raymond(test, &fake);
    outcome.status(0).stdout("ok\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    assert_eq!(session_files(&fake).len(), 2, "the main agent's session and the worker's own");
    assert!(close(total_cost(&outcome), 3.0 * TURN_COST), "{}", total_cost(&outcome));
}

/// Script states only: pi is never started, so the run needs no pi at all.
#[test]
fn raymond_pi_test_fixture() {
    let test = pi_test_fixture();
    let outcome = test.env("BATON_PI_BIN", "/nonexistent/pi").env("PATH", "/usr/bin:/bin").run_workflow(&[]);
    outcome.status(0).stdout("pi_test_fixture_done\n");
}

/// raymond's five pi workflows under raymond itself and under Baton, side by side,
/// against the same fake API and the same pi: `RAYMOND_BIN=…/ray cargo test --test
/// integration pi_e2e::raymond_side_by_side -- --ignored --nocapture` (raymond is
/// built from its public source by `../shared/bench/build-go-peer.sh`; nothing of
/// it is in this repository). Prints each workflow's exit code, result and cost;
/// fails when the two disagree on the result.
#[test]
#[ignore = "needs raymond's binary in RAYMOND_BIN"]
fn raymond_side_by_side() {
    let Some(ray) = std::env::var_os("RAYMOND_BIN") else { panic!("set RAYMOND_BIN to raymond's `ray`") };
    type Workflow = (&'static str, fn() -> Test);
    let workflows: [Workflow; 5] = [
        ("pi_smoke", pi_smoke),
        ("pi_smoke_resume", pi_smoke_resume),
        ("pi_smoke_call", pi_smoke_call),
        ("pi_smoke_fork", pi_smoke_fork),
        ("pi_test_fixture", pi_test_fixture),
    ];
    let pi_dir = pi_binary().parent().expect("pi's directory").to_path_buf();
    let path = format!("{}:{}", pi_dir.display(), std::env::var("PATH").unwrap_or_default());
    let mut disagreements = Vec::new();
    println!("| workflow | raymond: exit, result, cost | Baton: exit, result, cost |");
    println!("| --- | --- | --- |");
    for (name, workflow) in workflows {
        let fake = FakeAnthropic::start(vec![obedient_model()]);
        let baton = run_raymond(workflow(), &fake);
        let baton_cost = baton.state("test")["total_cost_usd"].as_f64().unwrap_or_default();
        let fake = FakeAnthropic::start(vec![obedient_model()]);
        let test = workflow();
        let root = std::fs::canonicalize(test.root()).expect("root");
        let mut command = std::process::Command::new(&ray);
        let entry = ["wf/START.md", "wf/START.sh"].into_iter().map(|file| root.join(file)).find(|file| file.exists());
        command.arg(entry.expect("an entry state")).current_dir(&root).env("PATH", &path);
        for key in PI_ENV_REMOVE {
            command.env_remove(key);
        }
        command.envs(pi_env(&fake.url()));
        let output = command.output().expect("raymond runs");
        let raymond_out = String::from_utf8_lossy(&output.stdout).trim().to_string();
        let raymond_err = String::from_utf8_lossy(&output.stderr);
        // raymond prints `=> Result: "…"` for a terminating agent and its total last.
        let raymond_result = raymond_out
            .lines()
            .rev()
            .find_map(|line| line.trim().strip_prefix("=> Result: "))
            .map(|quoted| quoted.trim_matches('"').to_string())
            .unwrap_or_default();
        let raymond_cost =
            raymond_out.lines().rev().find_map(|line| line.strip_prefix("Workflow completed. Total cost: "));
        println!(
            "| {name} | {}, `{raymond_result}`, {} | {}, `{}`, ${baton_cost:.4} |",
            output.status.code().unwrap_or(-1),
            raymond_cost.unwrap_or("no total"),
            baton.status,
            baton.stdout.trim()
        );
        if raymond_result != baton.stdout.trim() || baton.status != 0 {
            disagreements.push(format!(
                "{name}: raymond said {raymond_result:?}\n{raymond_out}\n{raymond_err}\nBaton said {:?}",
                baton.stdout
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}

/// How long a plain pi step takes through Baton and as a bare `pi --mode json`
/// (median of five each), for the docs: `cargo test --test integration
/// pi_e2e::time_a_plain_pi_step -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check"]
fn time_a_plain_pi_step() {
    let fake = FakeAnthropic::start(vec![Rule::any().reply_text("<result>ok</result>")]);
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let mut through_baton = Vec::new();
    let mut bare = Vec::new();
    for _ in 0..5 {
        let test = with_real_pi(Test::new().file("START.md", "TIME ME"), &fake);
        let started = Instant::now();
        test.run_workflow(&[]).status(0);
        through_baton.push(started.elapsed());
        let cwd = tempfile::tempdir().expect("cwd");
        let started = Instant::now();
        let output = pi_command(&fake.url())
            .args(["--mode", "json", "-p", "TIME ME"])
            .current_dir(cwd.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("pi");
        assert!(output.status.success());
        bare.push(started.elapsed());
    }
    eprintln!("plain pi step: baton {:?}, bare pi {:?} (median of 5)", median(through_baton), median(bare));
}

/// Re-records `fixtures/pi/` with the pinned pi against the fake API:
/// `cargo test --test integration pi_e2e::record_pi_stream_fixtures -- --ignored`.
/// A tool, not a check (the stream reader's unit tests read what it writes);
/// paths are rewritten to `/home/dev/…` so the fixtures do not name a temp dir.
#[test]
#[ignore = "rewrites fixtures/pi; run by hand when the pinned pi changes"]
fn record_pi_stream_fixtures() {
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pi");
    std::fs::create_dir_all(&out).expect("fixtures/pi");
    let cwd = tempfile::tempdir().expect("cwd");
    // `env` is `pi_env` or `pi_env_with`, whichever wrote the agent dir's settings last.
    let run = |env: &[(String, String)], prompt: &str, extra: &[&str]| -> String {
        let mut command = std::process::Command::new(pi_binary());
        command.envs(env.iter().cloned());
        let output = command
            .args(["--mode", "json", "-p"])
            .args(extra)
            .arg(prompt)
            .current_dir(cwd.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("pi");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let root = std::fs::canonicalize(cwd.path()).expect("cwd").to_string_lossy().into_owned();
        let config = regex::Regex::new(r"/tmp/baton-claude-config-[A-Za-z0-9]+/pi-agent").expect("pattern");
        let dashed = regex::Regex::new(r"--tmp-[A-Za-z0-9.]+--").expect("pattern");
        let text = stdout.replace(&root, "/home/dev/project");
        let text = config.replace_all(&text, "/home/dev/.pi/agent");
        dashed.replace_all(&text, "--home-dev-project--").into_owned()
    };
    let session_of = |stream: &str| -> String {
        let first: Value = serde_json::from_str(stream.lines().next().expect("a line")).expect("json");
        first["id"].as_str().expect("a session id").to_string()
    };
    let save = |name: &str, stream: &str| std::fs::write(out.join(name), stream).expect("write fixture");

    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("PLAIN").reply_text("Done.\n<result>ok</result>").usage(1000, 100),
        Rule::when_prompt("FIRST").fresh().reply_text("<goto>SECOND.md</goto>").usage(1000, 100),
        Rule::when_prompt("SECRET?")
            .history_contains("8472")
            .reply_text("<result>SECRET=8472</result>")
            .usage(1000, 100),
        Rule::when_prompt("WRITE").on_round(0).reply(
            Reply::tool_use(ToolUse::new("write", serde_json::json!({"path": "made.txt", "content": "made\n"})))
                .usage(1000, 100),
        ),
        Rule::when_prompt("WRITE").on_round(1).reply_text("Wrote it.\n<result>wrote</result>").usage(1000, 100),
        Rule::when_prompt("READ MISSING")
            .on_round(0)
            .reply(Reply::tool_use(ToolUse::new("read", serde_json::json!({"path": "missing.txt"})))),
        Rule::when_prompt("READ MISSING").on_round(1).reply_text("<result>no file</result>"),
        Rule::when_prompt("LIMITED").http_error(429, "Number of request tokens has exceeded your quota"),
        Rule::when_prompt("FLAKY").named("flaky").http_error(500, "Internal server error").times(1),
        Rule::when_prompt("FLAKY").reply_text("<result>after retry</result>"),
    ]);
    let env = pi_env(&fake.url());
    save("01_plain.jsonl", &run(&env, "PLAIN: say hello", &[]));
    let start = run(&env, "FIRST: remember 8472", &[]);
    save("02a_start.jsonl", &start);
    let session = session_of(&start);
    save("02b_session.jsonl", &run(&env, "SECRET? (continued)", &["--session", &session]));
    save("02c_fork.jsonl", &run(&env, "SECRET? (forked)", &["--fork", &session]));
    save("03_tool.jsonl", &run(&env, "WRITE made.txt", &[]));
    save("04_tool_error.jsonl", &run(&env, "READ MISSING", &[]));
    save("05_http_429.jsonl", &run(&env, "LIMITED", &[]));
    let retrying = pi_env_with(
        &fake.url(),
        serde_json::json!({"retry": {"enabled": true, "maxRetries": 2, "baseDelayMs": 10, "provider": {"maxRetries": 0}}}),
    );
    save("06_retried_then_ok.jsonl", &run(&retrying, "FLAKY", &[]));
}

// Bad input and broken CLIs, with a stand-in `pi` script: each failure names pi
// and what was expected.

/// A project whose `pi` is `script` (a shell script reading the prompt from stdin).
fn with_stand_in_pi(script: &str) -> Test {
    let test = Test::new()
        .file("workflow.yaml", "id: pi-stand-in\nbackend: pi\n")
        .file("START.md", "HELLO")
        .write("bin/pi", &format!("#!/bin/sh\ncat > /dev/null\n{script}"));
    let pi = test.root().join("bin/pi");
    std::fs::set_permissions(&pi, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    test.env("BATON_PI_BIN", &pi.to_string_lossy())
}

fn pause_error(outcome: &crate::support::Outcome) -> String {
    outcome.state("test")["agents"][0]["error"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_pi_stream_without_agent_end_fails_retryably_naming_what_came_instead() {
    let outcome = with_stand_in_pi(
        "echo '{\"type\":\"session\",\"version\":3,\"id\":\"s-1\"}'\n\
         echo 'Session found in different project: /elsewhere'\n\
         echo '{\"type\":\"agent_start\"}'\n",
    )
    .run_workflow(&[]);
    outcome.status(3);
    let expected = "pi exited without an agent_end event (expected `pi --mode json` to end the turn with one) \
                    (1 line of its output was not JSON objects; the first: \"Session found in different project: /elsewhere\")";
    assert_eq!(pause_error(&outcome), expected);
    outcome.stderr_contains(&format!("paused at START.md (claude_error): {expected}"));
    outcome.stderr_contains("(attempt 3 of 3 failed)");
}

#[test]
fn pi_exiting_non_zero_fails_with_its_stderr() {
    let outcome = with_stand_in_pi("echo \"No session found matching 'abc'\" >&2\nexit 1\n").run_workflow(&[]);
    outcome.status(3);
    assert_eq!(pause_error(&outcome), "pi exited with code 1: No session found matching 'abc'");
}

#[test]
fn pi_ending_the_turn_without_assistant_text_fails() {
    let outcome = with_stand_in_pi(
        "echo '{\"type\":\"session\",\"version\":3,\"id\":\"s-1\"}'\n\
         echo '{\"type\":\"message_end\",\"message\":{\"role\":\"assistant\",\"content\":[],\"stopReason\":\"stop\"}}'\n\
         echo '{\"type\":\"agent_end\",\"messages\":[]}'\n",
    )
    .run_workflow(&[]);
    outcome.status(3);
    assert_eq!(
        pause_error(&outcome),
        "pi ended the turn without assistant text (expected the model's answer in its last message; stop reason stop)"
    );
}

#[test]
fn a_missing_pi_says_how_to_install_it() {
    let test = Test::new().file("workflow.yaml", "id: no-pi\nbackend: pi\n").file("START.md", "HELLO");
    let outcome = test.env("PATH", "/usr/bin:/bin").run_workflow(&[]);
    outcome.status(3);
    outcome.stderr_contains(
        "[main] paused at START.md (backend_not_available): state `START.md` runs on pi: cannot find the pi CLI: \
         give --pi-bin, set BATON_PI_BIN, set pi_bin in .baton/config.toml, or put `pi` on PATH (npm install -g \
         @mariozechner/pi-coding-agent@0.73.1); once it can run, `baton resume test` goes on",
    );
}

/// The version is read from the npm package `pi` belongs to, once per run,
/// before the first pi turn.
#[test]
fn an_unsupported_pi_version_is_refused_before_any_turn() {
    let test = Test::new()
        .file("workflow.yaml", "id: old-pi\nbackend: pi\n")
        .file("START.md", "HELLO")
        .write("pkg/package.json", r#"{"name": "@earendil-works/pi-coding-agent", "version": "2.0.0"}"#)
        .write("pkg/dist/cli.js", "#!/bin/sh\necho never run >> ran.txt\n");
    let root = std::fs::canonicalize(test.root()).expect("root");
    std::fs::set_permissions(root.join("pkg/dist/cli.js"), std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    std::fs::create_dir_all(root.join("bin")).expect("bin");
    std::os::unix::fs::symlink(root.join("pkg/dist/cli.js"), root.join("bin/pi")).expect("link");
    let outcome = test.env("BATON_PI_BIN", &root.join("bin/pi").to_string_lossy()).run_workflow(&[]);
    outcome.status(3);
    outcome.stderr_contains(
        "[main] paused at START.md (backend_not_available): state `START.md` runs on pi: pi 2.0.0 \
         (`[ROOT]/pkg/package.json`) is not supported: Baton reads the `--mode json` events of pi 0.73 up to 1.x; \
         install the tested release with `npm install -g @mariozechner/pi-coding-agent@0.73.1`; once it can run, \
         `baton resume test` goes on",
    );
    assert!(!root.join("ran.txt").exists(), "pi never ran");
}

#[test]
fn malformed_pi_lines_are_counted_in_the_failure() {
    let outcome = with_stand_in_pi(
        "echo '{\"type\":\"message_end\",\"message\":{\"role\":\"assist'\n\
         echo 'Warning: something odd'\n\
         echo '{\"type\":\"agent_end\",\"messages\":[]}'\n",
    )
    .run_workflow(&[]);
    outcome.status(3);
    assert_eq!(
        pause_error(&outcome),
        concat!(
            "pi ended the turn without assistant text (expected the model's answer in its last message; stop reason ",
            r#"missing) (2 lines of its output were not JSON objects; the first: "{\"type\":\"message_end\",\"message\":{\"role\":\"assist")"#
        )
    );
}
