//! The real Claude Code CLI against the fake Anthropic API, without Baton:
//! proves the fake drives `claude` the way the Baton tests rely on (stream-json,
//! cost from scripted usage, resume and fork, real tool execution, retries).

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::claude_cli::claude_command;
use crate::support::fake_anthropic::{FakeAnthropic, NO_RULE_MATCHED, Reply, Role, Rule, ToolUse, Turn};

/// A claude run taking longer than this is killed and the test fails.
const CLAUDE_TIMEOUT: Duration = Duration::from_secs(90);

struct ClaudeRun {
    status: i32,
    lines: Vec<Value>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl ClaudeRun {
    /// The `result` line (the last line of every run).
    #[track_caller]
    fn result(&self) -> &Value {
        let last = self.lines.last().unwrap_or_else(|| panic!("no output\n{}", self.describe()));
        assert_eq!(last["type"], "result", "last line is not the result\n{}", self.describe());
        last
    }

    fn init_session(&self) -> &str {
        let init = self.lines.iter().find(|line| line["type"] == "system" && line["subtype"] == "init");
        init.and_then(|line| line["session_id"].as_str()).unwrap_or_else(|| panic!("no init\n{}", self.describe()))
    }

    fn result_session(&self) -> &str {
        self.result()["session_id"].as_str().expect("result session_id")
    }

    fn lines_of(&self, kind: &str, subtype: &str) -> Vec<&Value> {
        self.lines.iter().filter(|line| line["type"] == kind && line["subtype"] == subtype).collect()
    }

    #[track_caller]
    fn succeeded(&self) -> &ClaudeRun {
        assert_eq!(self.status, 0, "claude failed\n{}", self.describe());
        assert_eq!(self.result()["is_error"], false, "result is an error\n{}", self.describe());
        self
    }

    fn describe(&self) -> String {
        format!("exit {} after {:?}\n--- stdout\n{}--- stderr\n{}", self.status, self.elapsed, self.stdout, self.stderr)
    }
}

/// Run `claude -p` (Baton's flags, model sonnet) in `cwd` with `prompt` on stdin.
fn run_claude(fake: &FakeAnthropic, cwd: &Path, prompt: &str, extra: &[&str], env: &[(&str, &str)]) -> ClaudeRun {
    let mut command = claude_command(&fake.url());
    command
        .args(["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"])
        .args(["--model", "sonnet"])
        .args(["--disallowed-tools", "EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit"])
        .args(extra)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = command.spawn().expect("spawn claude");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(prompt.as_bytes()).expect("write prompt");
    drop(stdin);
    let pid = child.id();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || sender.send(child.wait_with_output()));
    let output: Output = match receiver.recv_timeout(CLAUDE_TIMEOUT) {
        Ok(output) => output.expect("wait for claude"),
        Err(_) => {
            // SAFETY: kill has no memory-safety preconditions; `pid` is our child, not yet reaped.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("claude ran longer than {CLAUDE_TIMEOUT:?}; fake API requests:\n{}", fake.summary());
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let lines = stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    ClaudeRun {
        status: output.status.code().unwrap_or(-1),
        lines,
        stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed: started.elapsed(),
    }
}

fn temp_cwd() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("baton-claude-smoke-").tempdir().expect("temp cwd")
}

#[test]
fn plain_text_reply_arrives_as_stream_json_with_the_scripted_cost() {
    let text = "Hello from the fake.\n<goto>NEXT.md</goto>";
    let fake = FakeAnthropic::start(vec![Rule::when_prompt("SMOKE PLAIN").reply_text(text).usage(1000, 100)]);
    let cwd = temp_cwd();

    let run = run_claude(&fake, cwd.path(), "SMOKE PLAIN: say hello", &[], &[]);

    run.succeeded();
    let result = run.result();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], text);
    assert_eq!(result["num_turns"], 1);
    let cost = result["total_cost_usd"].as_f64().expect("total_cost_usd");
    // Claude Code prices the turn from the scripted usage with its own price list,
    // which changes between versions: the cost is that of the model it reports.
    let priced: f64 = result["modelUsage"]
        .as_object()
        .map_or(0.0, |models| models.values().filter_map(|usage| usage["costUSD"].as_f64()).sum());
    assert!(cost > 0.0 && (cost - priced).abs() < 1e-9, "cost {cost} is the model's {priced}\n{}", run.describe());
    assert_eq!(result["usage"]["input_tokens"], 1000);
    assert_eq!(result["usage"]["output_tokens"], 100);
    let assistant: Vec<&Value> = run.lines.iter().filter(|line| line["type"] == "assistant").collect();
    assert_eq!(assistant.len(), 1, "{}", run.describe());
    assert_eq!(assistant[0]["message"]["content"][0]["text"], text);
    assert_eq!(run.init_session(), run.result_session());

    let requests = fake.requests();
    assert_eq!(requests.len(), 1, "{}", fake.summary());
    let view = &requests[0].view;
    assert_eq!(view.prompt, "SMOKE PLAIN: say hello");
    assert_eq!(view.round, 0);
    assert!(view.is_fresh(), "history of a new session: {:?}", view.history);
    assert!(view.model.contains("sonnet"), "model {}", view.model);
    assert_eq!(view.cwd.as_deref(), Some(cwd.path().canonicalize().expect("canonical cwd").as_path()));
    assert_eq!(view.session_id.as_deref(), Some(run.result_session()));
    assert_eq!(requests[0].rule.as_deref(), Some("SMOKE PLAIN"));
    // Besides the messages, Claude Code only preconnects (once per process).
    let other = fake.other_requests();
    assert!(other.iter().all(|request| request == "HEAD /"), "unexpected requests: {other:?}");
}

#[test]
fn unmatched_request_gets_the_loud_fallback() {
    let fake = FakeAnthropic::start(vec![Rule::when_prompt("SOMETHING ELSE").reply_text("never")]);
    let cwd = temp_cwd();

    let run = run_claude(&fake, cwd.path(), "SMOKE UNMATCHED", &[], &[]);

    run.succeeded();
    assert_eq!(run.result()["result"], NO_RULE_MATCHED);
    assert_eq!(fake.unmatched().len(), 1, "{}", fake.summary());
    assert_eq!(fake.fired("SOMETHING ELSE"), 0);
}

#[test]
fn resume_sends_the_history_and_fork_session_gets_a_new_id() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("Remember this secret number").fresh().reply_text("Noted the secret."),
        Rule::when_prompt("SECRET?").resumed().history_contains("8472").named("recall").reply_text("SECRET=8472"),
        Rule::when_prompt("SECRET?").named("forgot").reply_text("SECRET=unknown"),
    ]);
    let cwd = temp_cwd();

    let first = run_claude(&fake, cwd.path(), "Remember this secret number: 8472", &[], &[]);
    first.succeeded();
    let session = first.result_session().to_string();

    let resumed = run_claude(&fake, cwd.path(), "SECRET? (resumed)", &["--resume", &session], &[]);
    resumed.succeeded();
    assert_eq!(resumed.result()["result"], "SECRET=8472", "{}", fake.summary());
    assert_eq!(resumed.init_session(), session);
    assert_eq!(resumed.result_session(), session);

    let forked = run_claude(&fake, cwd.path(), "SECRET? (forked)", &["--resume", &session, "--fork-session"], &[]);
    forked.succeeded();
    assert_eq!(forked.result()["result"], "SECRET=8472", "{}", fake.summary());
    let fork_session = forked.result_session().to_string();
    assert_ne!(fork_session, session, "--fork-session keeps the id");
    assert_eq!(forked.init_session(), fork_session);

    let requests = fake.requests();
    assert_eq!(requests.len(), 3, "{}", fake.summary());
    assert!(requests[0].view.is_fresh());
    let resumed_view = &requests[1].view;
    assert_eq!(resumed_view.session_id.as_deref(), Some(session.as_str()));
    assert_eq!(
        resumed_view.history,
        [
            Turn { role: Role::User, text: "Remember this secret number: 8472".to_string() },
            Turn { role: Role::Assistant, text: "Noted the secret.".to_string() },
        ]
    );
    let fork_view = &requests[2].view;
    assert_eq!(fork_view.session_id.as_deref(), Some(fork_session.as_str()));
    assert_eq!(fork_view.history.len(), 4, "{}", fork_view.history_text());
    assert!(fork_view.history_contains("SECRET? (resumed)") && fork_view.history_contains("SECRET=8472"));
    assert_eq!(fake.fired("recall"), 2);
    assert_eq!(fake.fired("forgot"), 0);

    // The fork left the original session alone: resuming it again does not see the fork's turn.
    let again = run_claude(&fake, cwd.path(), "SECRET? (again)", &["--resume", &session], &[]);
    again.succeeded();
    let again_view = &fake.requests()[3].view;
    assert_eq!(again_view.session_id.as_deref(), Some(session.as_str()));
    assert!(!again_view.history_contains("SECRET? (forked)"), "{}", again_view.history_text());
}

#[test]
fn bash_and_write_tool_uses_really_run_in_the_cwd() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("SMOKE TOOLS")
            .on_round(0)
            .named("bash")
            .reply_text("I'll run a command.")
            .reply_tool_use(ToolUse::bash("echo hi > out.txt && cat out.txt")),
        Rule::when_prompt("SMOKE TOOLS")
            .on_round(1)
            .named("write")
            .reply_tool_use(ToolUse::write("written.md", "hello from Write\n")),
        Rule::when_prompt("SMOKE TOOLS").on_round(2).named("done").reply_text("All done.\n<goto>DONE.md</goto>"),
    ]);
    let cwd = temp_cwd();

    let run = run_claude(&fake, cwd.path(), "SMOKE TOOLS: make files", &[], &[]);

    run.succeeded();
    assert_eq!(std::fs::read_to_string(cwd.path().join("out.txt")).expect("out.txt from Bash"), "hi\n");
    assert_eq!(std::fs::read_to_string(cwd.path().join("written.md")).expect("written.md"), "hello from Write\n");
    assert_eq!(run.result()["result"], "All done.\n<goto>DONE.md</goto>");
    assert_eq!(run.result()["num_turns"], 3);
    let requests = fake.requests();
    assert_eq!(
        requests.iter().map(|request| (request.rule.as_deref(), request.view.round)).collect::<Vec<_>>(),
        [(Some("bash"), 0), (Some("write"), 1), (Some("done"), 2)],
        "{}",
        fake.summary()
    );
    // Round 1 carries the Bash result back: [prompt, assistant(text + tool_use), user(tool_result "hi")].
    let messages = requests[1].raw["messages"].as_array().expect("messages");
    let tool_result = messages
        .iter()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .find(|block| block["type"] == "tool_result")
        .expect("a tool_result in round 1");
    assert_eq!(tool_result["is_error"], false, "{tool_result}");
    assert!(tool_result.to_string().contains("hi"), "{tool_result}");
    assert!(requests.iter().all(|request| request.view.prompt == "SMOKE TOOLS: make files"));
    assert!(requests.iter().all(|request| request.view.is_fresh()));
}

#[test]
fn overloaded_twice_then_ok_is_survived() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("SMOKE RETRY").named("overloaded").http_error(529, "Overloaded").times(2),
        Rule::when_prompt("SMOKE RETRY").named("ok").reply_text("Recovered.").usage(1000, 100),
    ]);
    let cwd = temp_cwd();

    let run = run_claude(&fake, cwd.path(), "SMOKE RETRY", &[], &[("CLAUDE_CODE_MAX_RETRIES", "2")]);

    run.succeeded();
    assert_eq!(run.result()["result"], "Recovered.");
    let retries = run.lines_of("system", "api_retry");
    assert_eq!(retries.len(), 2, "{}", run.describe());
    assert!(retries.iter().all(|retry| retry["error_status"] == 529), "{}", run.describe());
    assert_eq!((fake.fired("overloaded"), fake.fired("ok")), (2, 1), "{}", fake.summary());
    let cost = run.result()["total_cost_usd"].as_f64().expect("total_cost_usd");
    // Failed attempts cost nothing: the cost is the one successful turn's usage, priced.
    let models = run.result()["modelUsage"].as_object().cloned().unwrap_or_default();
    let priced: f64 = models.values().filter_map(|usage| usage["costUSD"].as_f64()).sum();
    let input: u64 = models.values().filter_map(|usage| usage["inputTokens"].as_u64()).sum();
    assert!(cost > 0.0 && (cost - priced).abs() < 1e-9 && input == 1000, "{cost} {}", run.describe());
}

/// Re-records `fixtures/claude-streams/` with the pinned CLI against the fake API:
/// `cargo test --test integration claude_cli_smoke::record_stream_fixtures -- --ignored`.
/// A tool, not a check (the stream reader's unit tests read what it writes); paths
/// are rewritten to `/home/dev/project` so the fixtures do not name a temp dir.
#[test]
#[ignore = "rewrites fixtures/claude-streams; run by hand when the pinned CLI changes"]
fn record_stream_fixtures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/claude-streams");
    let cwd = temp_cwd();
    let save = |name: &str, run: &ClaudeRun| {
        let root = cwd.path().to_string_lossy().into_owned();
        let config = regex::Regex::new(r"/tmp/baton-claude-config-[A-Za-z0-9]+").expect("pattern");
        let dashed = regex::Regex::new(r"-tmp-baton-claude-smoke-[A-Za-z0-9]+").expect("pattern");
        let clean = |text: &str| {
            let text = text.replace(&root, "/home/dev/project");
            let text = config.replace_all(&text, "/home/dev/.claude");
            dashed.replace_all(&text, "-home-dev-project").into_owned()
        };
        std::fs::write(dir.join(format!("{name}.jsonl")), clean(&run.stdout)).expect("write stream");
        let rc = dir.join(format!("{name}.rc"));
        let stderr = dir.join(format!("{name}.stderr"));
        let _ = std::fs::remove_file(&rc);
        let _ = std::fs::remove_file(&stderr);
        if run.status != 0 {
            std::fs::write(rc, format!("rc={}\n", run.status)).expect("write rc");
        }
        if !run.stderr.trim().is_empty() {
            std::fs::write(stderr, clean(&run.stderr)).expect("write stderr");
        }
    };
    let no_retries = [("CLAUDE_CODE_MAX_RETRIES", "0")];

    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("PLAIN").reply_text("Hello there. <goto>NEXT.md</goto>").usage(1000, 100),
    ]);
    save("01_plain_text", &run_claude(&fake, cwd.path(), "PLAIN: say hello", &[], &[]));

    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("FIRST").fresh().reply_text("<goto>SECOND.md</goto>"),
        Rule::when_prompt("SECRET?").history_contains("8472").reply_text("<result>SECRET=8472</result>"),
    ]);
    let start = run_claude(&fake, cwd.path(), "FIRST: remember 8472", &[], &[]);
    save("02a_session_start", &start);
    let session = start.result_session().to_string();
    save("02b_resume", &run_claude(&fake, cwd.path(), "SECRET? (resumed)", &["--resume", &session], &[]));
    let fork = ["--resume", session.as_str(), "--fork-session"];
    save("02c_resume_fork_session", &run_claude(&fake, cwd.path(), "SECRET? (forked)", &fork, &[]));
    // 2.1.197 refused a session resumed from another directory; 2.1.330 accepts it, so
    // the failed resume is one of a session that does not exist.
    let unknown = ["--resume", "00000000-0000-4000-8000-000000000000"];
    save("02d_resume_unknown_session", &run_claude(&fake, cwd.path(), "SECRET? (unknown)", &unknown, &[]));

    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("TOOLS").on_round(0).reply(
            Reply::text("I'll run a command.")
                .with_tool_use(ToolUse::bash("echo hi > out.txt && cat out.txt"))
                .with_tool_use(ToolUse::write("notes.txt", "notes\n"))
                .with_tool_use(ToolUse::read("/home/dev/project/missing.txt")),
        ),
        Rule::when_prompt("TOOLS").on_round(1).reply_text("All done.\n<goto>DONE.md</goto>"),
    ]);
    save("03_tool_use", &run_claude(&fake, cwd.path(), "TOOLS: use them", &[], &[]));

    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("RETRY").http_error(429, "slow down").times(1),
        Rule::when_prompt("RETRY").reply_text("recovered <result>ok</result>"),
    ]);
    save("04a_429_retried", &run_claude(&fake, cwd.path(), "RETRY", &[], &[("CLAUDE_CODE_MAX_RETRIES", "2")]));
    let fake = FakeAnthropic::start(vec![Rule::when_prompt("BAD").http_error(400, "bad request from fake")]);
    save("04b_400_error", &run_claude(&fake, cwd.path(), "BAD", &[], &no_retries));
    let limit = "You've hit your limit · resets 3pm (America/Chicago)";
    let fake = FakeAnthropic::start(vec![Rule::when_prompt("LIMIT").http_error(400, limit)]);
    save("04c_400_limit_text", &run_claude(&fake, cwd.path(), "LIMIT", &[], &no_retries));
    let fake = FakeAnthropic::start(vec![Rule::when_prompt("BUSY").http_error(529, "Overloaded")]);
    save("04d_529_gives_up", &run_claude(&fake, cwd.path(), "BUSY", &[], &[("CLAUDE_CODE_MAX_RETRIES", "2")]));
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("SUBSCRIBER").reply(Reply::subscription_limit("five_hour", 1_795_312_800)),
    ]);
    let oauth =
        [("ANTHROPIC_API_KEY", ""), ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-fake"), ("TZ", "America/Chicago")];
    save("04e_oauth_session_limit", &run_claude(&fake, cwd.path(), "SUBSCRIBER", &[], &oauth));
}
