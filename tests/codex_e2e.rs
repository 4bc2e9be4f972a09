//! Baton driving the real, pinned Codex CLI (`codex exec --json`) against the
//! fake Responses API (`support::fake_openai`): threads continued, forked and
//! started as the transition tags mean, commands run in the agent's directory,
//! failures and usage limits classified, and each turn's tokens counted once
//! although Codex reports a thread's running totals.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::Test;
use crate::support::codex_cli::{CODEX_ENV_REMOVE, codex_binary, codex_command, codex_env};
use crate::support::fake_openai::{FakeOpenAi, Reply, Rule};

/// What 1000 input and 100 output tokens (none cached) cost on the fake's
/// model, `gpt-5-codex`, at $1.25 / $10 per million.
const TURN_COST: f64 = 0.00225;

/// A project whose prompt states run the real `codex` against `fake`.
pub(crate) fn with_real_codex(mut test: Test, fake: &FakeOpenAi) -> Test {
    for key in CODEX_ENV_REMOVE {
        test = test.env_remove(key);
    }
    for (key, value) in codex_env(&fake.url()) {
        test = test.env(&key, &value);
    }
    // Retries at once: the failure tests retry twice.
    test.env("BATON_CODEX_BIN", &codex_binary().to_string_lossy()).env("BATON_RETRY_BASE_MS", "1")
}

/// A state file on Codex.
fn codex_state(body: &str) -> String {
    format!("---\nbackend: codex\n---\n{body}")
}

fn threads(fake: &FakeOpenAi, name: &str) -> Vec<Option<String>> {
    fake.requests_for(name).into_iter().map(|request| request.view.thread_id).collect()
}

fn costs(outcome: &crate::support::Outcome) -> Vec<f64> {
    outcome.events_of("test", "StateCompleted").iter().map(|event| event["cost_usd"].as_f64().unwrap_or(-1.0)).collect()
}

#[test]
fn a_plain_codex_step_gives_its_result_and_its_priced_tokens() {
    let fake =
        FakeOpenAi::start(vec![Rule::when_prompt("PLAIN STATE").reply_text("<result>done</result>").usage(1000, 100)]);
    let test = with_real_codex(Test::new().file("START.md", &codex_state("PLAIN STATE")), &fake);
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    let [cost] = costs(&outcome)[..] else { panic!("one step: {:?}", costs(&outcome)) };
    assert!((cost - TURN_COST).abs() < 1e-12, "{cost}");
    // The model's missing metadata is an `error` item: a warning, and the turn went on.
    let progress = outcome.events_of("test", "ProgressMessage");
    assert!(
        progress.iter().any(|event| event["message"]
            .as_str()
            .is_some_and(|message| message.starts_with("Codex warning: Model metadata for `gpt-5-codex` not found"))),
        "{progress:#?}"
    );
    let started = outcome.events_of("test", "ClaudeInvocationStarted");
    assert_eq!(started[0]["backend"], "codex");
}

#[test]
fn r3_15_goto_continues_the_codex_thread() {
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("STATE ONE").fresh().reply_text("Noted the number 8472.\n<goto>TWO</goto>"),
        Rule::when_prompt("STATE TWO").resumed().history_contains("8472").reply_text("<result>recalled 8472</result>"),
    ]);
    let test = Test::new()
        .file("START.md", &codex_state("STATE ONE: remember the number 8472."))
        .file("TWO.md", &codex_state("STATE TWO: which number?"));
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("recalled 8472\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    assert_eq!(threads(&fake, "STATE ONE"), threads(&fake, "STATE TWO"), "one thread for both states");
}

#[test]
fn r3_13_a_call_child_forks_the_callers_thread_which_never_sees_the_childs_turn() {
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("CALLER START").fresh().reply_text("Delegating.\n<call return=\"RET\">CHILD</call>"),
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
        .file("START.md", &codex_state("CALLER START"))
        .file("CHILD.md", &codex_state("CHILD WORK"))
        .file("RET.md", &codex_state("RETURN STATE, the child said: {{input}}"));
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("caller continued\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    let (caller, child, back) =
        (threads(&fake, "CALLER START"), threads(&fake, "CHILD WORK"), threads(&fake, "RETURN STATE"));
    assert_ne!(child, caller, "the child ran in a fork of the caller's thread");
    assert_eq!(back, caller, "the return state resumed the caller's own thread");
    let back = &fake.requests_for("RETURN STATE")[0].view;
    assert!(back.prompt.contains("the child said: child done"), "{}", back.prompt);
}

#[test]
fn a_shell_command_codex_runs_changes_a_file_in_the_agents_directory() {
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("WRITE STATE").on_round(0).reply_text("Writing.").reply_command("echo made > made.txt"),
        Rule::when_prompt("WRITE STATE").on_round(1).reply_text("Finished.\n<result>turn over</result>"),
    ]);
    let test = with_real_codex(Test::new().file("START.md", &codex_state("WRITE STATE")), &fake);
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("turn over\n");
    assert_eq!(std::fs::read_to_string(outcome.root().join("made.txt")).unwrap(), "made\n");
    let tools = outcome.events_of("test", "ToolInvocation");
    assert!(tools.iter().any(|tool| tool["tool_name"] == "shell"), "{tools:#?}");
    // `baton logs --step` lays the Codex turn out: the command, its output, the answer.
    let logs = outcome.into_test().args(["logs", "test", "--step", "1"]).run();
    logs.status(0);
    for expected in [
        "--- shell `/bin/bash -lc 'echo made > made.txt'` (exit code 0)\n    (no output)\n",
        "    Finished.\n    <result>turn over</result>\n",
        "--- turn completed: the thread's totals so far 20 input (0 cached), 10 output tokens\n",
        "--- tag <result>turn over</result>\n",
    ] {
        assert!(logs.stdout.contains(expected), "{expected:?} in:\n{}", logs.stdout);
    }
}

#[test]
fn a_failed_codex_turn_is_retried_then_the_agent_pauses_naming_codex() {
    let body = r#"{"error":{"type":"invalid_request_error","message":"Bad thing in request","code":"bad"}}"#;
    let fake = FakeOpenAi::start(vec![Rule::when_prompt("DOWN STATE").named("down").http_error(400, body)]);
    let test = with_real_codex(Test::new().file("START.md", &codex_state("DOWN STATE")), &fake);
    let outcome = test.run_workflow(&[]);
    outcome.status(3);
    assert_eq!(fake.fired("down"), 3, "three attempts by Baton");
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "claude_error");
    assert_eq!(
        state["agents"][0]["error"],
        format!("Codex's turn failed (exited with code 1): {body}"),
        "Codex's own words, with what it did"
    );
}

#[test]
fn a_codex_usage_limit_pauses_the_agent_until_its_reset() {
    // Codex words the reset to the minute in its local time (TZ=UTC here).
    let resets_at = (jiff::Timestamp::now().as_second() / 60 + 150) * 60;
    let fake = FakeOpenAi::start(vec![Rule::when_prompt("LIMITED STATE").reply(Reply::usage_limit(resets_at))]);
    let test = with_real_codex(Test::new().file("START.md", &codex_state("LIMITED STATE")), &fake);
    let outcome = test.run_workflow(&["--no-wait"]);
    outcome.status(3);
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "usage_limit");
    assert_eq!(state["agents"][0]["limit_resets_at"], resets_at, "{state}");
    let error = state["agents"][0]["error"].as_str().unwrap_or_default();
    let resets = jiff::Timestamp::from_second(resets_at).unwrap();
    assert!(
        error.starts_with(&format!("usage limit reached (resets at {resets}): You’ve hit your usage limit.")),
        "{error}"
    );
    assert_eq!(outcome.events_of("test", "ClaudeInvocationStarted").len(), 1, "a usage limit is not retried");
}

/// Each turn's tokens once: Codex reports the thread's running totals after a
/// resume, and a fork's include its parent's; Baton counts the difference.
#[test]
fn tokens_are_counted_once_across_resumed_and_forked_threads() {
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("CALLER").reply_text("<call return=\"RET\">CHILD</call>").usage(1000, 100),
        Rule::when_prompt("CHILD").reply_text("<result>x</result>").usage(1000, 100),
        Rule::when_prompt("BACK").reply_text("<goto>END</goto>").usage(1000, 100),
        Rule::when_prompt("LAST").reply_text("<result>done</result>").usage(1000, 100),
    ]);
    let test = Test::new()
        .file("START.md", &codex_state("CALLER"))
        .file("CHILD.md", &codex_state("CHILD"))
        .file("RET.md", &codex_state("BACK"))
        .file("END.md", &codex_state("LAST"));
    let outcome = with_real_codex(test, &fake).run_workflow(&["--json"]);
    outcome.status(0);
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    let costs = costs(&outcome);
    assert_eq!(costs.len(), 4);
    assert!(costs.iter().all(|cost| (cost - TURN_COST).abs() < 1e-12), "{costs:?}");
    let report: Value = serde_json::from_str(&outcome.stdout).expect("json");
    let total = report["cost_usd"].as_f64().expect("a total");
    assert!((total - 4.0 * TURN_COST).abs() < 1e-12, "{report}");
}

/// A turn killed with Baton: `resume` runs the step again, and the thread the
/// agent continues counts only the new turn's tokens.
#[test]
fn a_run_killed_mid_turn_resumes_and_counts_the_retried_turn_once() {
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("FIRST STATE").reply_text("<goto>SLOW</goto>").usage(1000, 100),
        Rule::when_prompt("SLOW STATE").times(1).delay(Duration::from_secs(60)).reply_text("late"),
    ]);
    let test = Test::new().file("START.md", &codex_state("FIRST STATE")).file("SLOW.md", &codex_state("SLOW STATE"));
    let test = with_real_codex(test, &fake);
    let mut child = test.spawn(&["run", "wf", "-q", "--run-id", "test"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while fake.requests_for("SLOW STATE").is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!fake.requests_for("SLOW STATE").is_empty(), "the slow turn reached the API: {}", fake.summary());
    // SAFETY: kill(2) on the pid of a child this test spawned.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    let _ = child.wait();
    fake.push_rule(
        Rule::when_prompt("SLOW STATE")
            .named("again")
            .resumed()
            .history_contains("FIRST STATE")
            .reply_text("<result>second time</result>")
            .usage(1000, 100),
    );
    let outcome = test.args(["resume", "test", "-q"]).run();
    outcome.status(0).stdout("second time\n");
    assert_eq!(fake.fired("again"), 1, "{}", fake.summary());
    assert_eq!(threads(&fake, "again"), threads(&fake, "FIRST STATE"), "the retried step resumed the agent's thread");
    let costs = costs(&outcome);
    assert!(costs.iter().all(|cost| (cost - TURN_COST).abs() < 1e-12), "{costs:?}");
}

#[test]
fn an_unpriced_model_costs_nothing_and_is_warned_about_once() {
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("ONE").reply_text("<goto>TWO</goto>").usage(1000, 100),
        Rule::when_prompt("TWO").reply_text("<result>ok</result>").usage(1000, 100),
    ]);
    let state = |body: &str| format!("---\nbackend: codex\nmodel: gpt-9-unpriced\n---\n{body}");
    let test = Test::new().file("START.md", &state("ONE")).file("TWO.md", &state("TWO"));
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    assert_eq!(costs(&outcome), [0.0, 0.0]);
    let warning = "Codex: no price for model `gpt-9-unpriced`, so its turns cost $0 in this run (add it to \
                   .baton/prices.toml; see docs/backends.md)";
    let warnings: Vec<_> =
        outcome.events_of("test", "ProgressMessage").into_iter().filter(|event| event["message"] == warning).collect();
    assert_eq!(warnings.len(), 1);
    assert!(fake.requests().iter().all(|request| request.view.model == "gpt-9-unpriced"));
}

#[test]
fn the_projects_price_table_prices_codex_turns() {
    let fake = FakeOpenAi::start(vec![Rule::when_prompt("PRICED").reply_text("<result>ok</result>").usage(1000, 100)]);
    let test = Test::new()
        .file("START.md", &codex_state("PRICED"))
        .write(".baton/prices.toml", "[models.\"gpt-5-codex\"]\ninput = 2.0\ncached_input = 1.0\noutput = 20.0\n");
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    let [cost] = costs(&outcome)[..] else { panic!("one step") };
    assert!((cost - 0.004).abs() < 1e-12, "{cost}");
}

/// Bad input: a `.baton/prices.toml` that is not a price table pauses the first
/// Codex state with the file and the expected shape, to be fixed and resumed.
#[test]
fn a_bad_prices_file_pauses_the_first_codex_state() {
    let fake = FakeOpenAi::start(vec![]);
    let test = Test::new()
        .file("START.md", &codex_state("PRICED"))
        .write(".baton/prices.toml", "[models.\"gpt-5\"]\ninput = \"cheap\"\n");
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(3).stdout("");
    outcome.stderr_contains(
        "[main] paused at START.md (prompt_error): [ROOT]/.baton/prices.toml: invalid type: string \"cheap\", \
         expected f64; expected `[models.\"NAME\"]` tables with `input`, `cached_input` and `output` in USD per 1M \
         tokens\n",
    );
    assert!(fake.requests().is_empty());
}

/// Bad input: a Codex older than the one Baton needs is refused before a turn.
#[test]
fn a_codex_cli_too_old_to_fork_is_refused() {
    let test = Test::new().file("START.md", &codex_state("OLD"));
    let fake = test.root().join("old-codex");
    std::fs::write(&fake, "#!/bin/sh\necho 'codex-cli 0.120.0'\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let outcome = test.run_workflow(&["--codex-bin", &fake.to_string_lossy()]);
    outcome.status(3).stdout("");
    outcome.stderr_contains(
        "[main] paused at START.md (backend_not_available): state `START.md` runs on Codex: Codex 0.120.0 \
         (`[ROOT]/old-codex`) is too old: Baton needs codex-cli 0.169.0 or newer (for `codex exec fork`); install it \
         with `npm install -g @openai/codex@0.169.0`; once it can run, `baton resume test` goes on\n",
    );
}

/// Bad input: a Codex that exits 0 with a stream that never finishes its turn.
#[test]
fn a_codex_stream_without_turn_completed_is_a_retryable_failure() {
    let test = Test::new().file("START.md", &codex_state("CUT"));
    let fake = test.root().join("cut-codex");
    let script = "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'codex-cli 0.169.0'; exit 0; fi\ncat >/dev/null\n\
                  echo '{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}'\necho 'not json'\n\
                  echo '{\"type\":\"turn.started\"}'\n";
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let outcome = test.env("BATON_RETRY_BASE_MS", "1").run_workflow(&["--codex-bin", &fake.to_string_lossy()]);
    outcome.status(3);
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "claude_error");
    assert_eq!(
        state["agents"][0]["error"],
        "Codex exited without finishing its turn: expected a `turn.completed` or `turn.failed` event (1 line of its \
         output was not JSON objects; the first: \"not json\")"
    );
}

/// The closing note's numbers: a plain Codex step through Baton against bare
/// `codex exec --json`, the median of five each. Not a timing assertion: run
/// with `--ignored --nocapture` to read them.
#[test]
#[ignore = "a measurement, not a check"]
fn time_a_codex_step_through_baton_and_bare() {
    let fake = FakeOpenAi::start(vec![Rule::any().reply_text("<result>done</result>")]);
    let median = |mut samples: Vec<Duration>| {
        samples.sort();
        samples[samples.len() / 2]
    };
    let mut bare = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..5 {
        let start = Instant::now();
        let output = codex_command(&fake.url())
            .args(["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "TIMED"])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("codex");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        bare.push(start.elapsed());
    }
    let mut through_baton = Vec::new();
    for index in 0..5 {
        let test = with_real_codex(Test::new().file("START.md", &codex_state("TIMED")), &fake);
        let start = Instant::now();
        let outcome = test.args(["run", "wf", "-q", "--run-id", &format!("t{index}")]).run();
        outcome.status(0);
        through_baton.push(start.elapsed());
    }
    eprintln!("bare codex exec --json: median {:?} of {bare:?}", median(bare.clone()));
    eprintln!("baton run (one codex step): median {:?} of {through_baton:?}", median(through_baton.clone()));
}

#[test]
fn output_schema_is_given_to_codex_and_its_json_answer_is_the_result() {
    let fake =
        FakeOpenAi::start(vec![Rule::when_prompt("JUDGE STATE").reply_text("{\"verdict\":\"approved\",\"score\":9}")]);
    let frontmatter = "backend: codex\noutput_schema:\n  type: object\n  required: [verdict, score]\n  \
                       additionalProperties: false\n  properties:\n    verdict: {type: string}\n    score: {type: integer}";
    let test = Test::new().file("START.md", &format!("---\n{frontmatter}\n---\nJUDGE STATE"));
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("{\"score\":9,\"verdict\":\"approved\"}\n");
    let request = &fake.requests_for("JUDGE STATE")[0];
    assert_eq!(request.raw["text"]["format"]["type"], "json_schema", "{}", request.raw["text"]);
    assert_eq!(request.raw["text"]["format"]["schema"]["required"], serde_json::json!(["verdict", "score"]));
}

/// The sandbox Codex ran a turn in, as it told the API.
fn sandbox_of(fake: &FakeOpenAi, name: &str) -> String {
    let request = &fake.requests_for(name)[0];
    let metadata = request
        .headers
        .iter()
        .find(|(header, _)| header == "x-codex-turn-metadata")
        .map(|(_, value)| value.clone())
        .unwrap_or_default();
    let metadata: Value = serde_json::from_str(&metadata).unwrap_or_default();
    metadata["sandbox_mode"].as_str().unwrap_or_default().to_string()
}

#[test]
fn the_sandbox_comes_from_the_state_then_claudes_permission_mode_then_the_run() {
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("RUNS").reply_text("<goto>SANDBOXED</goto>"),
        Rule::when_prompt("SANDBOXED").reply_text("<goto>PLANNED</goto>"),
        Rule::when_prompt("PLANNED").reply_text("<result>ok</result>"),
    ]);
    let test = Test::new()
        .file("START.md", &codex_state("RUNS"))
        .file("SANDBOXED.md", "---\nbackend: codex\nsandbox: workspace-write\n---\nSANDBOXED")
        .file("PLANNED.md", "---\nbackend: codex\npermission_mode: plan\n---\nPLANNED");
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    // The run skips permissions by default: no sandbox at all.
    assert_eq!(sandbox_of(&fake, "RUNS"), "danger-full-access");
    assert_eq!(sandbox_of(&fake, "SANDBOXED"), "workspace-write");
    assert_eq!(sandbox_of(&fake, "PLANNED"), "read-only");
}

/// Codex's sandbox confines commands on this kernel: `read-only` keeps a state
/// from writing in its own directory, `workspace-write` lets it.
#[test]
fn a_read_only_codex_state_cannot_write_and_a_workspace_write_one_can() {
    for (sandbox, written) in [("workspace-write", true), ("read-only", false)] {
        let fake = FakeOpenAi::start(vec![
            Rule::when_prompt("WRITE STATE").on_round(0).reply_command("echo made > made.txt"),
            Rule::when_prompt("WRITE STATE").on_round(1).reply_text("<result>over</result>"),
        ]);
        let test = Test::new().file("START.md", &format!("---\nbackend: codex\nsandbox: {sandbox}\n---\nWRITE STATE"));
        let outcome = with_real_codex(test, &fake).run_workflow(&[]);
        outcome.status(0).stdout("over\n");
        // What Codex reports of the refused write varies from run to run (the
        // command's output is not always in its item); the file is the fact.
        assert_eq!(outcome.root().join("made.txt").exists(), written, "{sandbox}: {}", fake.summary());
    }
}

/// Bad input: a misspelt sandbox is a lint error of the state's line, before any turn.
#[test]
fn a_misspelt_codex_sandbox_is_refused_with_a_did_you_mean() {
    let test = Test::new().file("START.md", "---\nbackend: codex\nsandbox: readonly\n---\nX");
    let outcome = test.run_workflow(&["--codex-bin", "/bin/true"]);
    outcome.status(1).stdout("");
    outcome.stderr_contains(
        "  wf/START.md:3:1: error[frontmatter-parse-error]: Invalid YAML frontmatter: `sandbox` must be one of \
         read-only, workspace-write, danger-full-access, found the text \"readonly\"; did you mean `read-only`?\n",
    );
}

/// Bad input: the thread the agent continues is gone from Codex's records (its
/// sessions deleted, or another `CODEX_HOME`): the agent pauses at once, since
/// every retry would fail alike.
#[test]
fn a_thread_codex_lost_pauses_the_agent_without_retries() {
    let fake = FakeOpenAi::start(vec![Rule::when_prompt("STATE ONE").reply_text("<goto>FORGET.sh</goto>")]);
    let test = Test::new()
        .file("START.md", &codex_state("STATE ONE"))
        .file("FORGET.sh", "#!/bin/sh\nrm -rf \"$CODEX_HOME/sessions\"\necho '<goto>TWO.md</goto>'\n")
        .file("TWO.md", &codex_state("STATE TWO"));
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(3);
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "prompt_error");
    let error = state["agents"][0]["error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with(
            "Codex cannot continue the agent's thread: Error: thread/resume: thread/resume failed: no \
                           rollout found for thread id "
        ),
        "{error}"
    );
    assert!(error.ends_with("; check that CODEX_HOME is the one the thread was made under"), "{error}");
    assert_eq!(outcome.events_of("test", "ClaudeInvocationStarted").len(), 2, "not retried");
}

/// A turn that fails after a command still cost its API calls: Baton reads them
/// from the thread's record, so the run's total and `--budget` include them.
#[test]
fn a_failed_codex_turn_still_counts_what_it_spent() {
    let body = r#"{"error":{"type":"invalid_request_error","message":"Bad thing in request"}}"#;
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("COSTLY STATE").on_round(0).reply_command("true").usage(1000, 100),
        Rule::when_prompt("COSTLY STATE").on_round(1).http_error(400, body),
    ]);
    let test = with_real_codex(Test::new().file("START.md", &codex_state("COSTLY STATE")), &fake);
    let outcome = test.run_workflow(&[]);
    outcome.status(3);
    assert_eq!(fake.requests().len(), 6, "three attempts of two calls: {}", fake.summary());
    let total = outcome.state("test")["total_cost_usd"].as_f64().expect("a total");
    assert!((total - 3.0 * TURN_COST).abs() < 1e-12, "{total}");
}

/// A response that fails mid-stream (`response.failed`) fails Codex's turn: retried, then paused.
#[test]
fn a_response_failed_mid_stream_is_a_retryable_codex_failure() {
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("FLAKY STATE").named("broken").reply(Reply::stream_failure("the model fell over")).times(1),
        Rule::when_prompt("FLAKY STATE").reply_text("<result>second try</result>"),
    ]);
    let test = with_real_codex(Test::new().file("START.md", &codex_state("FLAKY STATE")), &fake);
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("second try\n");
    assert_eq!(fake.fired("broken"), 1);
    let errors = outcome.events_of("test", "ErrorOccurred");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(
        errors[0]["message"],
        "Codex's turn failed (exited with code 1): stream disconnected before completion: the model fell over"
    );
    assert_eq!(errors[0]["is_retryable"], true);
}

/// Bad input: a Codex that reports `turn.failed` yet exits 0 is still a failed turn.
#[test]
fn a_codex_turn_failed_with_exit_0_is_retried_then_pauses() {
    let test = Test::new().file("START.md", &codex_state("QUIET FAILURE"));
    let fake = test.root().join("quiet-codex");
    let script = "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'codex-cli 0.169.0'; exit 0; fi\ncat >/dev/null\n\
                  echo '{\"type\":\"thread.started\",\"thread_id\":\"t-1\"}'\n\
                  echo '{\"type\":\"turn.failed\",\"error\":{\"message\":\"something broke\"}}'\nexit 0\n";
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let outcome = test.env("BATON_RETRY_BASE_MS", "1").run_workflow(&["--codex-bin", &fake.to_string_lossy()]);
    outcome.status(3);
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "claude_error");
    assert_eq!(state["agents"][0]["error"], "Codex's turn failed (exited with code 0): something broke");
    assert_eq!(outcome.events_of("test", "ClaudeInvocationStarted").len(), 3, "retried twice");
}

/// Records `fixtures/codex/` (the stream reader's and thread usage's unit tests
/// read them) from the pinned CLI against the fake: run by hand when the pin
/// changes (`fixtures/codex/README.md`).
#[test]
#[ignore = "rewrites fixtures/codex"]
fn record_stream_fixtures() {
    let text = "Hello from fake. <goto>NEXT.md</goto>";
    let bad = r#"{"error":{"type":"invalid_request_error","message":"Bad thing in request","code":"bad"}}"#;
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("PLAIN").reply_text(text).usage(10, 5).cached(2),
        Rule::when_prompt("RESUME TOOL")
            .on_round(0)
            .reply_command("echo hi > out.txt; echo done")
            .usage(10, 5)
            .cached(2),
        Rule::when_prompt("RESUME TOOL").on_round(1).reply_text(text).usage(10, 5).cached(2),
        Rule::when_prompt("FORK").reply_text(text).usage(10, 5).cached(2),
        Rule::when_prompt("LIMIT").reply(Reply::usage_limit(1_795_900_000)),
        Rule::when_prompt("BAD").http_error(400, bad),
    ]);
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/codex");
    let project = tempfile::tempdir().unwrap();
    let exec = |prompt: &str, extra: &[&str]| -> String {
        let mut arguments = vec!["exec", "--json", "--skip-git-repo-check"];
        arguments.extend_from_slice(extra);
        arguments.push(prompt);
        let output = codex_command(&fake.url())
            .args(&arguments)
            .current_dir(project.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("codex");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let plain = exec("PLAIN", &[]);
    let thread: Value = serde_json::from_str(plain.lines().next().expect("a first line")).expect("JSON");
    let thread = thread["thread_id"].as_str().expect("a thread id").to_string();
    let recordings = [
        ("01_plain.jsonl", plain),
        (
            "02_resume_tool_call.jsonl",
            exec("RESUME TOOL", &["--dangerously-bypass-approvals-and-sandbox", "resume", &thread]),
        ),
        ("03_fork.jsonl", exec("FORK", &["fork", &thread])),
        ("04_usage_limit.jsonl", exec("LIMIT", &[])),
        ("05_bad_request.jsonl", exec("BAD", &[])),
    ];
    for (name, stream) in recordings {
        std::fs::write(fixtures.join(name), stream).unwrap();
    }
    // The thread's rollout, cut to what Baton reads (and a little context).
    let rollout = walk(&fake.codex_home().join("sessions"))
        .into_iter()
        .find(|path| path.to_string_lossy().ends_with(&format!("-{thread}.jsonl")))
        .expect("the thread's rollout");
    let mut kept = String::new();
    for line in std::fs::read_to_string(rollout).unwrap().lines() {
        let mut object: Value = serde_json::from_str(line).expect("JSON");
        let keep: &[&str] = match (object["type"].as_str(), object["payload"]["type"].as_str()) {
            (Some("session_meta"), _) => &["id", "timestamp", "cwd", "originator", "cli_version"],
            (Some("turn_context"), _) => &["cwd", "model", "effort", "approval_policy", "sandbox_policy"],
            (Some("event_msg"), Some("token_count")) => &["type", "info"],
            _ => continue,
        };
        let payload = object["payload"].as_object().cloned().unwrap_or_default();
        object["payload"] = payload.into_iter().filter(|(key, _)| keep.contains(&key.as_str())).collect();
        let line = object.to_string().replace(&project.path().to_string_lossy().into_owned(), "/home/dev/project");
        kept.push_str(&line);
        kept.push('\n');
    }
    std::fs::write(fixtures.join("rollout_of_01_and_02.jsonl"), kept).unwrap();
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// The state's model, effort and `codex_config` reach the API as Codex sends them.
#[test]
fn model_effort_and_codex_config_reach_codex() {
    let fake = FakeOpenAi::start(vec![Rule::when_prompt("TUNED STATE").reply_text("<result>ok</result>")]);
    let frontmatter = "backend: codex\nmodel: gpt-5.5\neffort: high\ncodex_config: {model_verbosity: low}";
    let test = Test::new().file("START.md", &format!("---\n{frontmatter}\n---\nTUNED STATE"));
    let outcome = with_real_codex(test, &fake).run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    let request = &fake.requests_for("TUNED STATE")[0].raw;
    assert_eq!(request["model"], "gpt-5.5");
    assert_eq!(request["reasoning"]["effort"], "high", "{}", request["reasoning"]);
    assert_eq!(request["text"]["verbosity"], "low", "{}", request["text"]);
}

/// `add_dirs` makes a directory outside the agent's writable in `workspace-write`.
/// `workspace-write` also lets Codex write under `/tmp` and `$TMPDIR`, where the
/// directory is when the checkout is (CI once cloned into `/tmp`, and the write without
/// `add_dirs` went through): the state turns those two off, so only `add_dirs` can grant it.
#[test]
fn add_dirs_lets_a_sandboxed_codex_state_write_elsewhere() {
    for granted in [true, false] {
        let extra = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let target = extra.path().join("out.txt");
        let fake = FakeOpenAi::start(vec![
            Rule::when_prompt("EXTRA STATE").on_round(0).reply_command(&format!("echo x > {}", target.display())),
            Rule::when_prompt("EXTRA STATE").on_round(1).reply_text("<result>over</result>"),
        ]);
        let add_dirs = if granted { format!("\nadd_dirs: [{}]", extra.path().display()) } else { String::new() };
        let state = format!(
            "---\nbackend: codex\nsandbox: workspace-write{add_dirs}\ncodex_config: {{sandbox_workspace_write: \
             {{exclude_slash_tmp: true, exclude_tmpdir_env_var: true}}}}\n---\nEXTRA STATE"
        );
        let outcome = with_real_codex(Test::new().file("START.md", &state), &fake).run_workflow(&[]);
        outcome.status(0).stdout("over\n");
        assert_eq!(target.exists(), granted, "add_dirs {granted}: {}", fake.summary());
    }
}

#[test]
fn a_run_that_keeps_permissions_runs_codex_in_workspace_write() {
    let fake = FakeOpenAi::start(vec![Rule::when_prompt("CAREFUL").reply_text("<result>ok</result>")]);
    let test = with_real_codex(Test::new().file("START.md", &codex_state("CAREFUL")), &fake);
    let outcome = test.run_workflow(&["--dangerously-skip-permissions=false"]);
    outcome.status(0).stdout("ok\n");
    assert_eq!(sandbox_of(&fake, "CAREFUL"), "workspace-write");
}

/// Bad input: no Codex anywhere stops the run at the first Codex state, saying
/// where Baton looked and how to install it (resumable once it is there).
#[test]
fn a_missing_codex_cli_names_every_place_baton_looked() {
    let test = Test::new()
        .file("START.md", &codex_state("NOWHERE"))
        .env_remove("BATON_CODEX_BIN")
        .env("PATH", "/usr/bin:/bin");
    let outcome = test.run_workflow(&[]);
    outcome.status(3).stdout("");
    outcome.stderr_contains(
        "[main] paused at START.md (backend_not_available): state `START.md` runs on Codex: cannot find the Codex \
         CLI: give --codex-bin, set BATON_CODEX_BIN, set codex_bin in .baton/config.toml, or put `codex` on PATH \
         (npm install -g @openai/codex@0.169.0); once it can run, `baton resume test` goes on\n",
    );
}
