//! Helpers shared by the conformance tests: shell snippets for state scripts, and
//! checks of the outcome of a run (exit code, console line, events, state file).

use std::io::{Cursor, Write};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::support::Outcome;

/// The run id `Test::run_workflow` uses.
pub(crate) const RUN: &str = "test";

/// A script that prints `text` to stdout verbatim (quoted heredoc: no expansion).
pub(crate) fn emit(text: &str) -> String {
    format!("cat <<'BATON_EOF'\n{text}\nBATON_EOF\n")
}

/// A script that prints `text` to stdout after shell expansion (`$VAR`, `$(...)`).
pub(crate) fn say(text: &str) -> String {
    format!("cat <<BATON_EOF\n{text}\nBATON_EOF\n")
}

/// Defines `wait_for FILE`: waits up to ~15 s for FILE to exist, else fails the script.
pub(crate) const WAIT_FOR: &str = r#"wait_for() {
  for _ in $(seq 1 150); do [ -e "$1" ] && return 0; sleep 0.1; done
  echo "gave up waiting for $1" >&2
  exit 1
}
"#;

/// A state script that first defines `wait_for`, then runs `body`.
pub(crate) fn with_wait_for(body: &str) -> String {
    format!("{WAIT_FOR}{body}")
}

/// `text` with the project root (as given and canonical) replaced by `[ROOT]`.
pub(crate) fn norm(outcome: &Outcome, text: &str) -> String {
    let mut text = text.to_string();
    if let Ok(canonical) = outcome.root().canonicalize() {
        text = text.replace(canonical.to_string_lossy().as_ref(), "[ROOT]");
    }
    text.replace(outcome.root().to_string_lossy().as_ref(), "[ROOT]")
}

/// The run's `state.json`.
pub(crate) fn state(outcome: &Outcome) -> Value {
    outcome.state(RUN)
}

/// The agent `id` in a state file's `agents`.
#[track_caller]
pub(crate) fn agent<'a>(state: &'a Value, id: &str) -> &'a Value {
    state["agents"]
        .as_array()
        .and_then(|agents| agents.iter().find(|agent| agent["id"] == id))
        .unwrap_or_else(|| panic!("no agent {id} in state.json:\n{state:#}"))
}

/// The result agent `id` terminated with, from the state file's `terminated` list.
#[track_caller]
pub(crate) fn terminated_result(state: &Value, id: &str) -> String {
    state["terminated"]
        .as_array()
        .and_then(|agents| agents.iter().find(|agent| agent["id"] == id))
        .and_then(|agent| agent["result"].as_str())
        .unwrap_or_else(|| panic!("agent {id} did not terminate:\n{state:#}"))
        .to_string()
}

/// Every `StateStarted` as `agent:state`, in order.
pub(crate) fn started(outcome: &Outcome) -> Vec<String> {
    outcome
        .events_of(RUN, "StateStarted")
        .iter()
        .map(|event| format!("{}:{}", str_of(&event["agent_id"]), str_of(&event["state"])))
        .collect()
}

/// Every `TransitionOccurred` as `agent:from -type-> to` (`to` is `-` on termination).
pub(crate) fn transitions(outcome: &Outcome) -> Vec<String> {
    outcome
        .events_of(RUN, "TransitionOccurred")
        .iter()
        .map(|event| {
            format!(
                "{}:{} -{}-> {}",
                str_of(&event["agent_id"]),
                str_of(&event["from_state"]),
                str_of(&event["transition_type"]),
                event["to_state"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

/// The ids of the agents spawned by `parent`, in order.
pub(crate) fn spawned_by(outcome: &Outcome, parent: &str) -> Vec<String> {
    outcome
        .events_of(RUN, "AgentSpawned")
        .iter()
        .filter(|event| event["parent_agent_id"] == parent)
        .map(|event| str_of(&event["new_agent_id"]))
        .collect()
}

pub(crate) fn str_of(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

/// The console line of a fatal step error: continuation lines are indented.
pub(crate) fn fatal_line(agent: &str, state: &str, message: &str) -> String {
    format!(
        "error: run test failed: agent {agent} at {state}: {}\ncontinue after fixing it with `baton resume test`",
        message.replace('\n', "\n    ")
    )
}

/// The run failed (exit 1, empty stdout) because `agent` at `state` hit a fatal
/// error of `error_type` whose message is exactly `message` (`[ROOT]` for the root):
/// on the console, in `ErrorOccurred`, in `RunFailed` and in `state.json`.
#[track_caller]
pub(crate) fn assert_fatal(outcome: &Outcome, agent: &str, state_name: &str, error_type: &str, message: &str) {
    outcome.status(1).stdout("");
    outcome.stderr_contains(&fatal_line(agent, state_name, message));
    // Warnings (an ignored attribute, an unknown field) may come before the error.
    let errors: Vec<_> = outcome
        .events_of(RUN, "ErrorOccurred")
        .into_iter()
        .filter(|error| !matches!(error["error_type"].as_str(), Some("IgnoredAttribute" | "UnknownField")))
        .collect();
    assert_eq!(errors.len(), 1, "expected one ErrorOccurred, got {errors:#?}");
    let error = &errors[0];
    assert_eq!(error["agent_id"], agent);
    assert_eq!(error["state"], state_name);
    assert_eq!(error["error_type"], error_type);
    assert_eq!(error["is_retryable"], false);
    assert_eq!(norm(outcome, &str_of(&error["message"])), message);
    let failed = outcome.events_of(RUN, "RunFailed");
    assert_eq!(failed.len(), 1, "expected one RunFailed, got {failed:#?}");
    assert_eq!(failed[0]["agent_id"], agent);
    assert_eq!(failed[0]["state"], state_name);
    assert_eq!(norm(outcome, &str_of(&failed[0]["error"])), message);
    let saved = state(outcome);
    assert_eq!(saved["status"], "failed");
    assert_eq!(norm(outcome, &str_of(&saved["error"])), message);
}

/// The run paused (exit 3) because `agent` at `state` was paused for `reason`.
#[track_caller]
pub(crate) fn assert_paused(outcome: &Outcome, agent_id: &str, state_name: &str, reason: &str, message: &str) {
    outcome.status(3);
    let paused = outcome.events_of(RUN, "AgentPaused");
    assert_eq!(paused.len(), 1, "expected one AgentPaused, got {paused:#?}");
    assert_eq!(paused[0]["agent_id"], agent_id);
    assert_eq!(paused[0]["state"], state_name);
    assert_eq!(paused[0]["reason"], reason);
    assert_eq!(norm(outcome, &str_of(&paused[0]["message"])), message);
    assert!(outcome.events_of(RUN, "RunFailed").is_empty(), "a pause is not a failure");
    assert_eq!(outcome.events_of(RUN, "WorkflowPaused").len(), 1);
    outcome.stderr_contains("paused: run test: 1 agent paused; continue with `baton resume test`");
    outcome.stderr_contains(&format!(
        "[{agent_id}] paused at {state_name} ({reason}): {}",
        message.replace('\n', "\n    ")
    ));
    let saved = state(outcome);
    assert_eq!(saved["status"], "paused");
    let paused_agent = agent(&saved, agent_id);
    assert_eq!(paused_agent["status"], "paused");
    assert_eq!(paused_agent["pause_reason"], reason);
    assert_eq!(paused_agent["current_state"], state_name);
    assert_eq!(norm(outcome, &str_of(&paused_agent["error"])), message);
}

/// A zip archive holding `files` (name, contents).
pub(crate) fn archive(files: &[(&str, &str)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, contents) in files {
        writer.start_file(*name, zip::write::SimpleFileOptions::default()).expect("start");
        writer.write_all(contents.as_bytes()).expect("write");
    }
    writer.finish().expect("finish").into_inner()
}

/// The SHA-256 of `bytes`, in lowercase hex.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}
