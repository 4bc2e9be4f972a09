//! One conformance suite for every backend (issue 20, item 5), in the way
//! object_store's `integration.rs` runs one set of tests against every store:
//! each scenario is written once against a [`Harness`] — a real agent CLI behind
//! its fake model API on 127.0.0.1 — and run for every backend. A scenario says
//! what the model answers ([`Answer`]) and, through each answer's history
//! conditions, what session semantics the tag must have: a `goto` that did not
//! continue the conversation finds no answer and fails the run.
//!
//! What a backend cannot do is a declared capability ([`Can`]) the scenario checks
//! the other way round (a usage limit on a CLI that cannot recognise one must
//! still pause the agent, as a failed turn), never a skipped test. Failing cells
//! are reported together, as `backend × scenario`.

mod answer_rules;
mod anthropic_answers;
mod claude;
mod codex;
mod pi;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::Test;

/// What the model answers to a prompt holding `prompt`.
#[derive(Clone, Debug)]
pub(crate) struct Answer {
    pub(crate) prompt: &'static str,
    /// The answer applies only when the conversation so far holds this text.
    pub(crate) history_has: Option<&'static str>,
    /// … and only when it does not hold this one.
    pub(crate) history_lacks: Option<&'static str>,
    pub(crate) reply: Reply,
}

#[derive(Clone, Debug)]
pub(crate) enum Reply {
    Text(&'static str),
    /// A shell command the CLI runs with its own tool, then this text.
    Bash {
        command: &'static str,
        then: &'static str,
    },
    /// The API fails the request (no retries are configured).
    ApiError,
    /// The provider says the account's usage limit is reached.
    UsageLimit,
    /// No answer for a minute: the turn is still running when the test acts.
    Slow,
}

impl Answer {
    pub(crate) fn to(prompt: &'static str, reply: Reply) -> Answer {
        Answer { prompt, history_has: None, history_lacks: None, reply }
    }

    fn has(mut self, text: &'static str) -> Answer {
        self.history_has = Some(text);
        self
    }

    fn lacks(mut self, text: &'static str) -> Answer {
        self.history_lacks = Some(text);
        self
    }
}

/// What a backend can do, as the suite checks it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Can {
    /// A usage limit pauses the agent with reason `usage_limit`.
    pub(crate) usage_limit: bool,
}

/// The fake model of one cell, kept alive while the cell runs.
pub(crate) trait FakeModel {
    /// Requests whose prompt held `prompt`.
    fn requests_for(&self, prompt: &str) -> usize;
    /// Add an answer (after a kill, say).
    fn push(&self, answer: Answer);
    /// What was asked and answered, for failure messages.
    fn summary(&self) -> String;
}

/// A backend under test: its real CLI, reached offline.
pub(crate) trait Harness: Sync {
    /// The backend's name in `backend:` and in cell names.
    fn name(&self) -> &'static str;
    fn can(&self) -> Can;
    /// The CLI's name as Baton's messages give it.
    fn cli(&self) -> &'static str;
    /// `test` with its prompt states on this backend, answered by a fake model
    /// that knows `answers`.
    fn prepare(&self, test: Test, answers: Vec<Answer>) -> (Test, Box<dyn FakeModel>);
}

type Scenario = fn(&dyn Harness);

const SCENARIOS: [(&str, Scenario); 11] = [
    ("a plain step", plain_step),
    ("goto continues the conversation", goto_continues),
    ("call and result", call_and_result),
    ("fork workers", fork_workers),
    ("reset starts afresh", reset_starts_afresh),
    ("a tool call", tool_call),
    ("a failed turn", failed_turn),
    ("a usage limit", usage_limit),
    ("resume after SIGKILL mid-turn", resume_after_kill),
    ("function, reset and fork workers start afresh", function_reset_and_fork_workers),
    ("call-workflow forks across workflows", call_workflow_across_workflows),
];

/// Run the workflow of `test` with the harness's backend chosen by `--backend`.
fn run(test: Test, extra: &[&str]) -> crate::support::Outcome {
    let mut args = vec!["run", "wf", "-q", "--run-id", "cell", "--attempts", "1"];
    args.extend_from_slice(extra);
    test.env("BATON_RETRY_BASE_MS", "1").args(args).run()
}

fn plain_step(harness: &dyn Harness) {
    let (test, fake) = harness.prepare(
        Test::new().file("START.md", "PLAIN STATE"),
        vec![Answer::to("PLAIN STATE", Reply::Text("<result>ok</result>"))],
    );
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.stdout, "ok\n", "{}\n{}", outcome.stderr, fake.summary());
}

fn goto_continues(harness: &dyn Harness) {
    let (test, fake) = harness.prepare(
        Test::new().file("START.md", "FIRST STATE: remember 8472.").file("SECOND.md", "SECOND STATE: which number?"),
        vec![
            Answer::to("FIRST STATE", Reply::Text("Noted 8472.\n<goto>SECOND</goto>")),
            Answer::to("SECOND STATE", Reply::Text("<result>SECRET=8472</result>")).has("FIRST STATE"),
        ],
    );
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.stdout, "SECRET=8472\n", "{}\n{}", outcome.stderr, fake.summary());
}

fn call_and_result(harness: &dyn Harness) {
    let (test, fake) = harness.prepare(
        Test::new()
            .file("START.md", "CALLER STATE: remember 8472.")
            .file("CHILD.md", "CHILD STATE: which number?")
            .file("DONE.md", "DONE STATE, the child said: {{input}}"),
        vec![
            Answer::to("CALLER STATE", Reply::Text("Calling.\n<call return=\"DONE\">CHILD</call>")),
            Answer::to("CHILD STATE", Reply::Text("child-only 5150\n<result>SECRET=8472</result>")).has("CALLER STATE"),
            Answer::to("DONE STATE", Reply::Text("<result>back with SECRET=8472</result>"))
                .has("CALLER STATE")
                .lacks("child-only 5150"),
        ],
    );
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.stdout, "back with SECRET=8472\n", "{}\n{}", outcome.stderr, fake.summary());
}

fn fork_workers(harness: &dyn Harness) {
    let (test, fake) = harness.prepare(
        Test::new().file("START.md", "PARENT STATE").file("WORKER.md", "WORKER STATE").file("JOIN.md", "JOIN STATE"),
        vec![
            Answer::to("PARENT STATE", Reply::Text("<fork next=\"JOIN\">WORKER</fork>")),
            Answer::to("WORKER STATE", Reply::Text("<result>worked</result>")).lacks("PARENT STATE"),
            Answer::to("JOIN STATE", Reply::Text("<result>joined</result>")).has("PARENT STATE"),
        ],
    );
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.status, 0, "{}\n{}", outcome.stderr, fake.summary());
    assert!(outcome.stdout.lines().any(|line| line == "joined"), "{}\n{}", outcome.stdout, fake.summary());
    assert_eq!(fake.requests_for("WORKER STATE"), 1, "the worker ran once, fresh: {}", fake.summary());
}

fn reset_starts_afresh(harness: &dyn Harness) {
    let (test, fake) = harness.prepare(
        Test::new().file("START.md", "OLD STATE: secret 8472.").file("NEW.md", "NEW STATE"),
        vec![
            Answer::to("OLD STATE", Reply::Text("<reset>NEW</reset>")),
            Answer::to("NEW STATE", Reply::Text("<result>fresh</result>")).lacks("OLD STATE"),
        ],
    );
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.stdout, "fresh\n", "{}\n{}", outcome.stderr, fake.summary());
}

fn tool_call(harness: &dyn Harness) {
    let (test, fake) = harness.prepare(
        Test::new().file("START.md", "TOOL STATE"),
        vec![Answer::to("TOOL STATE", Reply::Bash { command: "echo hi > tool.txt", then: "<result>wrote</result>" })],
    );
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.stdout, "wrote\n", "{}\n{}", outcome.stderr, fake.summary());
    let written = std::fs::read_to_string(outcome.root().join("tool.txt")).unwrap_or_default();
    assert_eq!(written, "hi\n", "the CLI ran the tool in the agent's directory");
}

fn failed_turn(harness: &dyn Harness) {
    let (test, fake) = harness
        .prepare(Test::new().file("START.md", "FAILING STATE"), vec![Answer::to("FAILING STATE", Reply::ApiError)]);
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.status, 3, "the agent paused: {}\n{}", outcome.stderr, fake.summary());
    assert!(outcome.stderr.contains(harness.cli()), "the message names {}: {}", harness.cli(), outcome.stderr);
}

fn usage_limit(harness: &dyn Harness) {
    let (test, fake) = harness
        .prepare(Test::new().file("START.md", "LIMITED STATE"), vec![Answer::to("LIMITED STATE", Reply::UsageLimit)]);
    let outcome = run(test, &["--backend", harness.name(), "--no-wait"]);
    assert_eq!(outcome.status, 3, "the agent paused: {}\n{}", outcome.stderr, fake.summary());
    let state = outcome.state("cell");
    let reason = &state["agents"][0]["pause_reason"];
    if harness.can().usage_limit {
        assert_eq!(reason, "usage_limit", "{state}");
    } else {
        // A CLI that cannot tell a usage limit from another failure still pauses the agent.
        assert!(reason.is_string() && reason != "usage_limit", "{state}");
    }
}

fn resume_after_kill(harness: &dyn Harness) {
    let (test, fake) =
        harness.prepare(Test::new().file("START.md", "SLOW STATE"), vec![Answer::to("SLOW STATE", Reply::Slow)]);
    let test = test.env("BATON_RETRY_BASE_MS", "1");
    let mut child = test.spawn(&["run", "wf", "-q", "--run-id", "cell", "--backend", harness.name()]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while fake.requests_for("SLOW STATE") == 0 {
        assert!(Instant::now() < deadline, "the turn never reached the API: {}", fake.summary());
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the pid of a child this test spawned.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    let _ = child.wait();
    fake.push(Answer::to("SLOW STATE", Reply::Text("<result>second time</result>")));
    let outcome = test.args(["resume", "cell", "-q"]).run();
    assert_eq!(outcome.stdout, "second time\n", "{}\n{}", outcome.stderr, fake.summary());
}

fn function_reset_and_fork_workers(harness: &dyn Harness) {
    let (test, fake) = harness.prepare(
        Test::new()
            .file("START.md", "FIRST STATE")
            .file("FUNC.md", "FUNC BODY")
            .file("AFTER.md", "AFTER FUNC")
            .file("FRESH.md", "FRESH START")
            .file("WORKER.md", "WORKER BODY")
            .file("JOIN.md", "JOIN BODY"),
        vec![
            Answer::to("FIRST STATE", Reply::Text("<function return=\"AFTER\">FUNC</function>")),
            Answer::to("FUNC BODY", Reply::Text("<result>f</result>")).lacks("FIRST STATE"),
            Answer::to("AFTER FUNC", Reply::Text("<reset>FRESH</reset>")).has("FIRST STATE"),
            Answer::to("FRESH START", Reply::Text("<fork next=\"JOIN\">WORKER</fork>")).lacks("AFTER FUNC"),
            Answer::to("WORKER BODY", Reply::Text("<result>worker</result>")).lacks("FRESH START"),
            Answer::to("JOIN BODY", Reply::Text("<result>joined</result>")).has("FRESH START"),
        ],
    );
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.status, 0, "{}\n{}", outcome.stderr, fake.summary());
    assert!(outcome.stdout.lines().any(|line| line == "joined"), "{}\n{}", outcome.stdout, fake.summary());
}

fn call_workflow_across_workflows(harness: &dyn Harness) {
    let (test, fake) = harness.prepare(
        Test::new()
            .file("START.md", "MAIN START")
            .file("BACK.md", "BACK HOME, lib said: {{input}}")
            .write("lib/START.md", "LIB ENTRY"),
        vec![
            Answer::to("MAIN START", Reply::Text("<call-workflow return=\"BACK\">../lib/</call-workflow>")),
            Answer::to("LIB ENTRY", Reply::Text("lib-only detail 6061\n<result>from lib</result>")).has("MAIN START"),
            Answer::to("BACK HOME", Reply::Text("<result>home</result>")).has("MAIN START").lacks("lib-only detail"),
        ],
    );
    // `--backend` carries into the called workflow, which has no manifest.
    let outcome = run(test, &["--backend", harness.name()]);
    assert_eq!(outcome.stdout, "home\n", "{}\n{}", outcome.stderr, fake.summary());
}

/// Every backend under test.
fn harnesses() -> Vec<Box<dyn Harness>> {
    vec![Box::new(claude::Claude), Box::new(pi::Pi), Box::new(codex::Codex)]
}

#[test]
fn every_backend_keeps_every_tags_meaning() {
    let harnesses = harnesses();
    let cells: Vec<(&dyn Harness, &str, Scenario)> = harnesses
        .iter()
        .flat_map(|harness| SCENARIOS.iter().map(move |(name, scenario)| (harness.as_ref(), *name, *scenario)))
        .collect();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..std::thread::available_parallelism().map_or(2, |count| count.get()).max(2) {
            scope.spawn(|| {
                while let Some((harness, name, scenario)) = cells.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(panic) = catch_unwind(AssertUnwindSafe(|| scenario(*harness))) {
                        let text = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|text| text.to_string()))
                            .unwrap_or_default();
                        failures.lock().expect("failures").push(format!("{} × {name}:\n    {text}", harness.name()));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("failures");
    failures.sort();
    assert!(failures.is_empty(), "{} of {} cells failed:\n{}", failures.len(), cells.len(), failures.join("\n"));
}
