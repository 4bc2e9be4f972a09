//! Proof with the real CLIs that a session travels (issue 21, item 4): two
//! "machines" — each its own HOME (and CLI home) and a working directory at a
//! different path — one turn on A, its session collected there and installed
//! on B, and the next turn on B continues it: the fake model API sees A's
//! exchange in B's request.
//!
//! The CLIs are the pinned ones `tests/run` installs under the target dir
//! (`claude-code/`, `pi-cli/`, `codex-cli/`), or `BATON_TEST_CLAUDE_BIN`,
//! `BATON_TEST_PI_BIN`, `BATON_TEST_CODEX_BIN`. A CLI that is not there fails
//! the test with that sentence: nothing is skipped silently.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::cli_fakes::fake_anthropic::{self, FakeAnthropic};
use super::cli_fakes::fake_openai::{self, FakeOpenAi};
use crate::backend::session_files::SessionFile;
use crate::backend::{claude, codex, pi};
use crate::ids::BackendName;

const CLI_TIMEOUT: Duration = Duration::from_secs(120);

/// The CLI `tests/run` installed as `dir/node_modules/.bin/name`, or `variable`'s.
fn cli(variable: &str, dir: &str, name: &str) -> PathBuf {
    if let Some(binary) = std::env::var_os(variable).filter(|value| !value.is_empty()) {
        return PathBuf::from(binary);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|value| !value.is_empty())
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"), PathBuf::from);
    let binary = target.join(dir).join("node_modules/.bin").join(name);
    assert!(binary.exists(), "{} is not installed: run tests/run once, or set {variable}", binary.display());
    binary
}

/// One machine: its HOME and the working directory its steps run in.
struct Machine {
    _root: tempfile::TempDir,
    home: PathBuf,
    cwd: PathBuf,
}

impl Machine {
    fn new(name: &str, cwd: &str) -> Machine {
        let root = tempfile::Builder::new().prefix(&format!("baton-machine-{name}-")).tempdir().expect("machine");
        let home = root.path().join("home");
        let cwd = root.path().join(cwd);
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&cwd).expect("cwd");
        Machine { _root: root, home, cwd }
    }
}

struct Ran {
    status: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn lines(&self) -> Vec<Value> {
        self.stdout.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    }

    fn describe(&self) -> String {
        format!("exit {}\n--- stdout\n{}--- stderr\n{}", self.status, self.stdout, self.stderr)
    }
}

/// Run `program args` in `machine`'s cwd with only `env` (and PATH), `stdin` written.
fn run(program: &Path, args: &[&str], machine: &Machine, env: &[(&str, String)], stdin: &str) -> Ran {
    run_in(program, args, &machine.home, &machine.cwd, env, stdin)
}

/// [`run`] with this HOME and cwd.
fn run_in(program: &Path, args: &[&str], home: &Path, cwd: &Path, env: &[(&str, String)], stdin: &str) -> Ran {
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .envs(env.iter().map(|(key, value)| (*key, value)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap_or_else(|error| panic!("spawn {}: {error}", program.display()));
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.as_bytes()).expect("write stdin");
    drop(input);
    let pid = child.id();
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || sender.send(child.wait_with_output()));
    let output = match receiver.recv_timeout(CLI_TIMEOUT) {
        Ok(output) => output.expect("wait"),
        Err(_) => {
            // SAFETY: kill has no memory-safety preconditions; `pid` is our child, not yet reaped.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            panic!("{} ran longer than {CLI_TIMEOUT:?}", program.display());
        }
    };
    Ran {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The files as they cross the wire: to JSON and back.
fn over_the_wire(files: Vec<SessionFile>) -> Vec<SessionFile> {
    let json = serde_json::to_string(&files).expect("to json");
    serde_json::from_str(&json).expect("from json")
}

fn claude_env(server_url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", server_url.to_string()),
        ("ANTHROPIC_API_KEY", "sk-test".to_string()),
        ("IS_SANDBOX", "1".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ("DISABLE_AUTOUPDATER", "1".to_string()),
    ]
}

fn claude_turn(fake: &FakeAnthropic, machine: &Machine, prompt: &str, resume: Option<&str>) -> Ran {
    let binary = cli("BATON_TEST_CLAUDE_BIN", "claude-code", "claude");
    let mut args = vec!["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"];
    args.extend(["--model", "sonnet"]);
    if let Some(session) = resume {
        args.extend(["--resume", session]);
    }
    let ran = run(&binary, &args, machine, &claude_env(&fake.url()), prompt);
    assert_eq!(ran.status, 0, "claude failed\n{}\n{}", ran.describe(), fake.summary());
    ran
}

#[test]
fn a_claude_session_made_on_one_machine_is_continued_on_another() {
    let fake = FakeAnthropic::start(vec![
        fake_anthropic::Rule::when_prompt("REMEMBER").fresh().reply_text("Noted."),
        fake_anthropic::Rule::when_prompt("RECALL").resumed().history_contains("8472").reply_text("SECRET=8472"),
    ]);
    let (a, b) = (Machine::new("a", "work/on-a"), Machine::new("b", "elsewhere/b"));
    let first = claude_turn(&fake, &a, "REMEMBER the secret 8472", None);
    let result = first.lines().pop().expect("result line");
    let session = result["session_id"].as_str().expect("session id").to_string();

    let files = claude::session_files::collect(&session, &a.cwd, &a.home.join(".claude")).expect("collected on A");
    assert_eq!(files[0].path, format!("{session}.jsonl"));
    claude::session_files::install(&over_the_wire(files), &b.cwd, &b.home.join(".claude")).expect("installed on B");

    let second = claude_turn(&fake, &b, "RECALL the secret", Some(&session));
    let result = second.lines().pop().expect("result line");
    assert_eq!(result["result"], "SECRET=8472", "{}\n{}", second.describe(), fake.summary());
    assert_eq!(result["session_id"], session.as_str());
    let requests = fake.requests();
    let last = &requests.last().expect("requests").view;
    assert!(last.history_contains("REMEMBER the secret 8472"), "{:?}", last.history);
    // Claude Code keeps the session's first system prompt and says where it runs now.
    let raw = requests.last().expect("requests").raw.to_string();
    let (cwd_a, cwd_b) = (a.cwd.canonicalize().expect("a"), b.cwd.canonicalize().expect("b"));
    let update = format!("Primary working directory: {} (was {})", cwd_b.display(), cwd_a.display());
    assert!(raw.contains(&update), "no `{update}` in {raw}");
    // B's turn is in B's copy, which goes back the same way.
    let back = claude::session_files::collect(&session, &b.cwd, &b.home.join(".claude")).expect("collected on B");
    assert!(String::from_utf8_lossy(&back[0].bytes).contains("SECRET=8472"));
}

/// pi's agent dir for `machine`, its provider the fake at `server_url`.
fn pi_agent_dir(machine: &Machine, server_url: &str) -> PathBuf {
    let dir = machine.home.join(".pi/agent");
    std::fs::create_dir_all(&dir).expect("agent dir");
    let models = json!({"providers": {"fake": {
        "baseUrl": server_url, "api": "anthropic-messages", "apiKey": "sk-test",
        "models": [{"id": "fake-model", "name": "Fake model", "reasoning": false, "input": ["text"],
                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
                    "contextWindow": 200000, "maxTokens": 8192}],
    }}});
    std::fs::write(dir.join("models.json"), models.to_string()).expect("models.json");
    let settings = json!({"defaultProvider": "fake", "defaultModel": "fake-model", "quietStartup": true,
                          "retry": {"enabled": false, "provider": {"maxRetries": 0}}});
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("settings.json");
    dir
}

fn pi_turn(fake: &FakeAnthropic, machine: &Machine, prompt: &str, session: Option<&str>) -> Ran {
    let binary = cli("BATON_TEST_PI_BIN", "pi-cli", "pi");
    let env = [("PI_OFFLINE", "1".to_string()), ("PI_TELEMETRY", "0".to_string())];
    let _ = pi_agent_dir(machine, &fake.url());
    let mut args = vec!["--mode", "json", "-p", "--no-tools"];
    if let Some(session) = session {
        args.extend(["--session", session]);
    }
    let ran = run(&binary, &args, machine, &env, prompt);
    assert_eq!(ran.status, 0, "pi failed\n{}\n{}", ran.describe(), fake.summary());
    ran
}

#[test]
fn a_pi_session_made_on_one_machine_is_continued_on_another() {
    let fake = FakeAnthropic::start(vec![
        fake_anthropic::Rule::when_prompt("REMEMBER").fresh().reply_text("Noted."),
        fake_anthropic::Rule::when_prompt("RECALL").resumed().history_contains("8472").reply_text("SECRET=8472"),
    ]);
    let (a, b) = (Machine::new("a", "work/on-a"), Machine::new("b", "elsewhere/b"));
    let first = pi_turn(&fake, &a, "REMEMBER the secret 8472", None);
    let header = first.lines().into_iter().find(|line| line["type"] == "session").expect("session event");
    let session = header["id"].as_str().expect("session id").to_string();

    let files = pi::session_files::collect(&session, &a.cwd, &a.home.join(".pi/agent")).expect("collected on A");
    pi::session_files::install(&over_the_wire(files), &b.cwd, &b.home.join(".pi/agent")).expect("installed on B");

    let second = pi_turn(&fake, &b, "RECALL the secret", Some(&session));
    assert!(second.stdout.contains("SECRET=8472"), "{}\n{}", second.describe(), fake.summary());
    let requests = fake.requests();
    let last = &requests.last().expect("requests").view;
    assert!(last.history_contains("REMEMBER the secret 8472"), "{:?}", last.history);
    let back = pi::session_files::collect(&session, &b.cwd, &b.home.join(".pi/agent")).expect("collected on B");
    assert!(String::from_utf8_lossy(&back[0].bytes).contains("SECRET=8472"));
}

fn codex_turn(fake: &FakeOpenAi, machine: &Machine, prompt: &str, thread: Option<&str>) -> Ran {
    let binary = cli("BATON_TEST_CODEX_BIN", "codex-cli", "codex");
    let home = machine.home.join(".codex");
    std::fs::create_dir_all(&home).expect("codex home");
    std::fs::write(home.join("config.toml"), super::cli_fakes::codex_cli::codex_config(&fake.url())).expect("config");
    let env = [("CODEX_HOME", home.to_string_lossy().into_owned()), ("OPENAI_API_KEY", "sk-test".to_string())];
    let mut args = vec!["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"];
    if let Some(thread) = thread {
        args.extend(["resume", thread]);
    }
    args.push("-");
    let ran = run(&binary, &args, machine, &env, prompt);
    assert_eq!(ran.status, 0, "codex failed\n{}\n{}", ran.describe(), fake.summary());
    ran
}

#[test]
fn a_codex_thread_made_on_one_machine_is_continued_on_another() {
    let fake = FakeOpenAi::start(vec![
        fake_openai::Rule::when_prompt("REMEMBER").fresh().reply_text("Noted."),
        fake_openai::Rule::when_prompt("RECALL").resumed().history_contains("8472").reply_text("SECRET=8472"),
    ]);
    let (a, b) = (Machine::new("a", "work/on-a"), Machine::new("b", "elsewhere/b"));
    let first = codex_turn(&fake, &a, "REMEMBER the secret 8472", None);
    let started = first.lines().into_iter().find(|line| line["type"] == "thread.started").expect("thread.started");
    let thread = started["thread_id"].as_str().expect("thread id").to_string();

    let env = BTreeMap::from([("CODEX_HOME".to_string(), a.home.join(".codex").to_string_lossy().into_owned())]);
    let home_a = codex::session_files::codex_home(&env).expect("codex home");
    let files = codex::session_files::collect(&thread, &a.cwd, &home_a).expect("collected on A");
    codex::session_files::install(&over_the_wire(files), &b.cwd, &b.home.join(".codex")).expect("installed on B");

    let second = codex_turn(&fake, &b, "RECALL the secret", Some(&thread));
    assert!(second.stdout.contains("SECRET=8472"), "{}\n{}", second.describe(), fake.summary());
    let requests = fake.requests();
    let last = &requests.last().expect("requests").view;
    assert!(last.history_contains("REMEMBER the secret 8472"), "{:?}", last.history);
}

fn git(dir: &Path, args: &[&str]) {
    crate::process::git::git_with(dir, args, &[]).unwrap_or_else(|error| panic!("git {args:?}: {error}"));
}

/// The whole of `--files shipped` with the real Claude Code: a coordinator
/// (its own HOME, a git checkout, a task folder) and two workers (each its own
/// HOME and worker dir). Step 1 runs on worker 1 and writes a file; the file,
/// the task folder and the session come back; step 2 runs on worker 2 and
/// continues the conversation of step 1.
#[test]
fn a_claude_step_on_one_worker_is_continued_by_the_next_step_on_another() {
    let root = tempfile::tempdir().expect("root");
    let path = |name: &str| root.path().join(name);
    let remote = path("remote.git");
    git(root.path(), &["init", "--quiet", "--bare", &remote.to_string_lossy()]);
    let project = path("coordinator/project");
    std::fs::create_dir_all(project.join("src")).expect("project");
    std::fs::write(project.join("README.md"), "project\n").expect("readme");
    git(&project, &["init", "--quiet"]);
    git(&project, &["add", "-A"]);
    git(&project, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "first"]);
    git(&project, &["remote", "add", "origin", &remote.to_string_lossy()]);
    let scope = path("coordinator/flows/main");
    std::fs::create_dir_all(&scope).expect("scope");
    std::fs::write(scope.join("START.md"), "STEP ONE").expect("state");
    let task_folder = path("coordinator/project/.baton/tasks/run-9/main");
    std::fs::create_dir_all(&task_folder).expect("task folder");
    std::fs::write(task_folder.join("plan.md"), "the plan").expect("plan");
    let cwd = project.join("src");
    let homes: Vec<PathBuf> = ["coordinator-home", "w1-home", "w2-home"].iter().map(|name| path(name)).collect();
    let envs: Vec<BTreeMap<String, String>> = homes
        .iter()
        .map(|home| {
            BTreeMap::from([("CLAUDE_CONFIG_DIR".to_string(), home.join(".claude").to_string_lossy().into_owned())])
        })
        .collect();
    let worker_cwd = |worker: &str| path(worker).join("checkouts/run-9/main/src");
    let written = worker_cwd("w1").join("answer.md");
    let fake = FakeAnthropic::start(vec![
        fake_anthropic::Rule::when_prompt("STEP ONE")
            .on_round(0)
            .reply_tool_use(fake_anthropic::ToolUse::write(&written.to_string_lossy(), "42\n")),
        fake_anthropic::Rule::when_prompt("STEP ONE").on_round(1).reply_text("Wrote it."),
        fake_anthropic::Rule::when_prompt("STEP TWO").resumed().history_contains("Wrote it.").reply_text("Continued."),
    ]);
    let claude = cli("BATON_TEST_CLAUDE_BIN", "claude-code", "claude");
    let remote_url = super::workdir::remote_for(&cwd, None).expect("origin");
    let step = |worker: &str, env: &BTreeMap<String, String>, prompt: &str, sessions: &[(BackendName, String)]| {
        let prepared = super::shipped::prepare(&super::shipped::Outgoing {
            run_id: "run-9",
            agent_id: "main",
            scope: &scope,
            cwd: &cwd,
            task_folder: &task_folder,
            remote: &remote_url,
            sessions,
            step_env: &envs[0],
        })
        .expect("prepared");
        assert_eq!(prepared.notices, Vec::<String>::new());
        let request: super::shipped::ShippedFiles =
            serde_json::from_str(&serde_json::to_string(&prepared.files).expect("json")).expect("back");
        let workspace = super::shipped::materialise(&request, "run-9", &path(worker), env).expect("materialised");
        assert_eq!(workspace.cwd, worker_cwd(worker));
        let worker_scope = workspace.workflows.to_worker(&scope).expect("scope on the worker");
        assert_eq!(std::fs::read_to_string(worker_scope.join("START.md")).expect("state"), "STEP ONE");
        assert_eq!(
            std::fs::read_to_string(workspace.task_folder.worker_root.join("plan.md")).expect("plan"),
            "the plan"
        );
        let mut args = vec!["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"];
        args.extend(["--model", "sonnet"]);
        if let Some((_, session)) = sessions.first() {
            args.extend(["--resume", session.as_str()]);
        }
        let mut claude_env = claude_env(&fake.url());
        claude_env.push(("CLAUDE_CONFIG_DIR", env["CLAUDE_CONFIG_DIR"].clone()));
        let home = path(&format!("{worker}-home"));
        let ran = run_in(&claude, &args, &home, &workspace.cwd, &claude_env, prompt);
        assert_eq!(ran.status, 0, "claude failed\n{}\n{}", ran.describe(), fake.summary());
        let result = ran.lines().pop().expect("result");
        let session = result["session_id"].as_str().expect("session").to_string();
        std::fs::write(workspace.task_folder.worker_root.join(format!("{worker}.md")), "was here").expect("task");
        let back =
            super::shipped::send_back(&workspace, &[(BackendName::Claude, session.clone())], &workspace.cwd, env)
                .expect("sent back");
        let back: super::shipped::ShippedBack =
            serde_json::from_str(&serde_json::to_string(&back).expect("json")).expect("back");
        let received = super::shipped::receive(&request, &back, &cwd, &envs[0]).expect("received");
        (result, session, received.changed)
    };

    let (first, session, changed) = step("w1", &envs[1], "STEP ONE: write the answer", &[]);
    assert_eq!(first["result"], "Wrote it.", "{}", fake.summary());
    assert_eq!(changed, ["src/answer.md"]);
    assert_eq!(std::fs::read_to_string(cwd.join("answer.md")).expect("answer"), "42\n");
    assert!(task_folder.join("w1.md").is_file());

    let (second, resumed, _) = step("w2", &envs[2], "STEP TWO: go on", &[(BackendName::Claude, session.clone())]);
    assert_eq!(second["result"], "Continued.", "{}", fake.summary());
    assert_eq!(resumed, session);
    let requests = fake.requests();
    assert!(requests.last().expect("requests").view.history_contains("STEP ONE: write the answer"));
    // Worker 2 saw worker 1's file and task note; all of it is back on the coordinator.
    assert!(task_folder.join("w1.md").is_file() && task_folder.join("w2.md").is_file());
    assert!(claude::session_files::collect(&session, &cwd, &homes[0].join(".claude")).is_ok());
}
