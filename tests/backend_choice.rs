//! Choosing a backend, refused clearly (issue 20): an unknown name on the command
//! line, in config or in a state; another backend's model; a missing CLI, which
//! pauses the agent (resumable) and never falls back to Claude.
//!
//! pi and Codex are not needed here: what is tested is refused, or paused,
//! before either would run. The fake Claude CLI proves Claude was not called. The
//! last test shows a step on another backend in the console, logs and report.

use serde_json::json;

use crate::conformance::common::{RUN, assert_paused};
use crate::markdown::{calls, fake};
use crate::support::Test;
use crate::support::fake_claude::Reply;

const HELLO: &str = "[[START]] Say hello, then <result>done</result>.\n";

/// A project with the fake Claude CLI answering `[[START]]`.
fn project(start: &str) -> Test {
    let test = Test::new().with_fake_claude().file("START.md", start);
    fake(&test).rule("start", "[[START]]", Reply::text("<result>done</result>"));
    test
}

/// The run was refused before it started: exit 1, `message` on stderr, no run, no model turn.
#[track_caller]
fn assert_refused(outcome: &crate::support::Outcome, message: &str) {
    outcome.status(1).stdout("");
    assert_eq!(outcome.error_message(), message);
    assert!(calls(outcome).is_empty(), "Claude was called");
    assert!(!outcome.run_dir(RUN).exists(), "no run is created");
}

#[test]
fn unknown_backend_flag_is_refused_with_the_known_ones() {
    let outcome = project(HELLO).run_workflow(&["--backend", "gemini"]);
    assert_refused(
        &outcome,
        "error: invalid value `gemini` for --backend: unknown backend `gemini`: expected one of claude, pi, codex",
    );
}

#[test]
fn unknown_backend_flag_with_a_typo_gets_a_did_you_mean() {
    let outcome = project(HELLO).run_workflow(&["--backend", "codx"]);
    assert_refused(
        &outcome,
        "error: invalid value `codx` for --backend: unknown backend `codx`: expected one of claude, pi, codex; \
         did you mean `codex`?",
    );
}

#[test]
fn unknown_backend_in_config_is_refused_naming_the_file() {
    let outcome = project(HELLO).write(".baton/config.toml", "backend = \"x\"\n").run_workflow(&[]);
    assert_refused(
        &outcome,
        "error: [ROOT]/.baton/config.toml: `backend`: unknown backend `x`: expected one of claude, pi, codex",
    );
}

#[test]
fn config_model_of_another_backend_than_configs_is_refused() {
    let outcome =
        project(HELLO).write(".baton/config.toml", "backend = \"codex\"\nmodel = \"opus\"\n").run_workflow(&[]);
    assert_refused(
        &outcome,
        "error: [ROOT]/.baton/config.toml: model `opus` is not a Codex model; expected an OpenAI model such as \
         `gpt-5-codex` or `gpt-5` (it is a Claude Code model: `backend: claude`?)",
    );
}

#[test]
fn unknown_backend_in_a_state_is_refused_by_the_runs_lint() {
    let outcome = project("---\nbackend: codx\n---\n[[START]] <result>done</result>\n").run_workflow(&[]);
    assert_refused(
        &outcome,
        "error: workflow `wf` has a lint error that would fail the run; fix it, or run with --no-lint:\n  \
         wf/START.md:2:1: error[unknown-backend]: `backend`: unknown backend `codx`: expected one of claude, pi, \
         codex; did you mean `codex`?",
    );
}

#[test]
fn unknown_backend_in_a_state_under_no_lint_pauses_the_agent_before_any_turn() {
    let outcome = project("---\nbackend: codx\n---\n[[START]] <result>done</result>\n").run_workflow(&["--no-lint"]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "prompt_error",
        "prompt file `[ROOT]/wf/START.md`: `backend`: unknown backend `codx`: expected one of claude, pi, codex; \
         did you mean `codex`?",
    );
    assert!(calls(&outcome).is_empty());
}

#[test]
fn manifest_backend_option_no_backend_takes_is_refused() {
    let outcome =
        project(HELLO).file("workflow.yaml", "id: x\nbackend: {name: pi, options: {bogus: 1}}\n").run_workflow(&[]);
    assert_refused(
        &outcome,
        "error: manifest `[ROOT]/wf/workflow.yaml`: `backend.options` has `bogus`, which no backend takes; pi \
         takes provider, thinking, tools, no_builtin_tools, no_tools, no_extensions, no_skills, extensions, skills, \
         session_dir, append_system_prompt",
    );
}

#[test]
fn manifest_backend_option_with_a_bad_value_is_refused() {
    let outcome = project(HELLO)
        .file("workflow.yaml", "id: x\nbackend:\n  name: pi\n  options: {thinking: huge}\n")
        .run_workflow(&[]);
    assert_refused(
        &outcome,
        "error: manifest `[ROOT]/wf/workflow.yaml`: `backend.options`: `thinking` must be one of off, minimal, low, \
         medium, high, xhigh, found the text \"huge\"",
    );
}

#[test]
fn a_codex_model_on_a_claude_state_is_refused_by_the_runs_lint() {
    let outcome = project("---\nmodel: gpt-5\n---\n[[START]] <result>done</result>\n").run_workflow(&[]);
    assert_refused(
        &outcome,
        "error: workflow `wf` has a lint error that would fail the run; fix it, or run with --no-lint:\n  \
         wf/START.md:2:1: error[invalid-model]: model `gpt-5` is not a Claude Code model (an alias such as opus, \
         sonnet or haiku, or a full name such as `claude-sonnet-4-5`); it is a Codex model: `backend: codex`?",
    );
}

#[test]
fn a_claude_model_on_a_codex_state_is_refused_by_the_runs_lint() {
    let outcome =
        project("---\nbackend: codex\nmodel: sonnet\n---\n[[START]] <result>done</result>\n").run_workflow(&[]);
    assert_refused(
        &outcome,
        "error: workflow `wf` has a lint error that would fail the run; fix it, or run with --no-lint:\n  \
         wf/START.md:3:1: error[invalid-model]: model `sonnet` is not a Codex model; expected an OpenAI model such \
         as `gpt-5-codex` or `gpt-5` (it is a Claude Code model: `backend: claude`?)",
    );
}

#[test]
fn model_flag_of_codex_alone_is_refused_naming_its_backend() {
    let outcome = project(HELLO).run_workflow(&["--model", "gpt-5"]);
    assert_refused(
        &outcome,
        "error: invalid value `gpt-5` for --model: expected one of opus, sonnet, haiku (`gpt-5` is a Codex model: \
         `--backend codex`?)",
    );
}

#[test]
fn model_flag_of_claude_on_a_codex_run_is_refused() {
    let outcome = project(HELLO).run_workflow(&["--backend", "codex", "--model", "sonnet"]);
    assert_refused(
        &outcome,
        "error: invalid value `sonnet` for --model: model `sonnet` is not a Codex model; expected an OpenAI model \
         such as `gpt-5-codex` or `gpt-5` (it is a Claude Code model: `--backend claude`?)",
    );
}

#[test]
fn model_flag_of_codex_with_backend_codex_is_accepted_and_the_missing_cli_pauses() {
    let outcome =
        project(HELLO).run_workflow(&["--backend", "codex", "--model", "gpt-5", "--codex-bin", "/nonexistent"]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "backend_not_available",
        "state `START.md` runs on Codex: --codex-bin names `/nonexistent`, which does not exist (install: npm \
         install -g @openai/codex@0.169.0); once it can run, `baton resume test` goes on",
    );
    let started = outcome.events_of(RUN, "ClaudeInvocationStarted");
    assert_eq!((started[0]["backend"].as_str(), started[0]["model"].as_str()), (Some("codex"), Some("gpt-5")));
    assert!(calls(&outcome).is_empty(), "Claude was called");
    assert_eq!(outcome.state(RUN)["launch_params"]["backend"], "codex");
}

#[test]
fn missing_pi_binary_pauses_naming_the_state_the_backend_and_the_install() {
    let outcome =
        project("---\nbackend: pi\n---\n[[START]] <result>done</result>\n").run_workflow(&["--pi-bin", "/nonexistent"]);
    assert_paused(
        &outcome,
        "main",
        "START.md",
        "backend_not_available",
        "state `START.md` runs on pi: --pi-bin names `/nonexistent`, which does not exist (install: npm install -g \
         @mariozechner/pi-coding-agent@0.73.1); once it can run, `baton resume test` goes on",
    );
    assert!(calls(&outcome).is_empty(), "Claude was called");
}

#[test]
fn missing_codex_on_an_empty_path_pauses_and_never_falls_back_to_claude() {
    let outcome =
        project("---\nbackend: codex\n---\n[[START]] <result>done</result>\n").env("PATH", "").run_workflow(&[]);
    let message = "state `START.md` runs on Codex: cannot find the Codex CLI: give --codex-bin, set BATON_CODEX_BIN, \
                   set codex_bin in .baton/config.toml, or put `codex` on PATH (npm install -g @openai/codex@0.169.0); \
                   once it can run, `baton resume test` goes on";
    assert_paused(&outcome, "main", "START.md", "backend_not_available", message);
    // The fake Claude CLI answers `[[START]]`, and was never asked.
    assert!(calls(&outcome).is_empty(), "Claude was called");
    // Still missing, a resume pauses again, the same way: the run stays resumable.
    let resumed = outcome.rerun(["resume", RUN]);
    resumed.status(3);
    assert_eq!(resumed.state(RUN)["agents"][0]["pause_reason"], "backend_not_available");
    assert!(calls(&resumed).is_empty(), "Claude was called on resume");
}

#[test]
fn a_step_on_another_backend_shows_in_the_console_logs_report_and_status() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]] Implement, then <goto>REVIEW</goto>.\n")
        .file("REVIEW.md", "---\nbackend: codex\nmodel: gpt-5\n---\nReview: <result>ok</result>.\n");
    fake(&test).rule("start", "[[START]]", Reply::text("<goto>REVIEW</goto>").cost(0.01));
    let outcome = test.run_workflow(&["--codex-bin", "/nonexistent"]);
    outcome.status(3);
    let paused = "state `REVIEW.md` runs on Codex: --codex-bin names `/nonexistent`, which does not exist (install: \
                  npm install -g @openai/codex@0.169.0); once it can run, `baton resume test` goes on";
    let console = format!(
        "run test started: [ROOT]/wf (START.md)\n\
         [main] > START.md\n\
         [main]   <goto>REVIEW</goto>\n\
         [main] < START.md in N ms, $0.0100: goto -> REVIEW.md\n\
         [main] > REVIEW.md\n\
         [main]   on codex (model gpt-5)\n\
         [main]   REVIEW.md: a fresh Codex conversation: the agent's session is Claude Code's, and a session never \
         crosses backends\n\
         [main] error: {paused}\n\
         [main] paused at REVIEW.md (backend_not_available): {paused}\n\
         paused: run test: 1 agent paused; continue with `baton resume test`\n"
    );
    assert_eq!(outcome.stderr_normalized(), console);
    let started = outcome.events_of(RUN, "ClaudeInvocationStarted");
    let on: Vec<_> = started.iter().map(|event| (event["backend"].clone(), event["model"].clone())).collect();
    assert_eq!(on, [(json!("claude"), json!("sonnet")), (json!("codex"), json!("gpt-5"))]);

    // `baton logs` words the trace as the console did.
    let logs = outcome.rerun(["logs", RUN]);
    logs.status(0);
    assert_eq!(crate::support::normalize(&logs.stdout, logs.root()), console);

    let report = logs.rerun(["report", RUN]);
    report.status(0);
    for line in [
        "BACKEND               STEPS      COST   TOK IN TOK OUT\n\
         claude                    1   $0.0100      100      20\n\
         codex                     0   $0.0000        0       0\n",
        "main START.md step 1 (claude sonnet)\n",
    ] {
        assert!(report.stdout.contains(line), "{line} not in:\n{}", report.stdout);
    }
    let json = report.rerun(["report", RUN, "--json"]);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
    let backends: Vec<_> =
        document["backends"].as_array().expect("backends").iter().map(|figures| figures["backend"].clone()).collect();
    assert_eq!(backends, [json!("claude"), json!("codex")]);
}
