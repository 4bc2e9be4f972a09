//! `workflow.yaml` manifests at launch (R13.1–R13.3; `docs/decisions.md`, "Manifests").

use super::common::{RUN, emit, state};
use crate::support::Test;

fn with_manifest(manifest: &str) -> Test {
    Test::new()
        .file("workflow.yaml", manifest)
        .file("START.sh", "echo \"<result>in=$BATON_INPUT $(basename \"$PWD\") $GREETING</result>\"\n")
}

#[test]
fn r13_1_a_manifest_backend_runs_the_workflows_prompt_states_there() {
    // The manifest's backend is taken: its prompt state runs on pi (whose CLI is
    // missing here, so the agent pauses naming it), never on Claude.
    let outcome = Test::new()
        .with_fake_claude()
        .file("workflow.yaml", "id: w\nbackend: {name: pi, options: {provider: x}}\n")
        .file("START.md", "Hello, then <result>done</result>.\n")
        .run_workflow(&["--pi-bin", "/nonexistent"]);
    outcome.status(3);
    let paused = outcome.events_of(RUN, "AgentPaused");
    assert_eq!(paused[0]["reason"], "backend_not_available");
    let message = paused[0]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("state `START.md` runs on pi: --pi-bin names `/nonexistent`"), "{message}");
    assert!(crate::markdown::calls(&outcome).is_empty(), "Claude was called");
    // A script-only workflow never needs the CLI.
    with_manifest("id: w\nbackend: pi\n").run_workflow(&["-q"]).status(0);
}

#[test]
fn r13_1_an_unknown_manifest_backend_is_refused_before_anything_runs() {
    let outcome = with_manifest("id: w\nbackend: {name: gemini}\n").run_workflow(&[]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: manifest `[ROOT]/wf/workflow.yaml`: `backend`: unknown backend `gemini`: expected one of claude, pi, \
         codex"
    );
    assert!(!outcome.root().join(".baton/runs/test").exists());
}

#[test]
fn r13_1_input_mode_is_checked() {
    let outcome = with_manifest("id: w\ninput: {mode: required, label: the ticket}\n").run_workflow(&[]);
    outcome.status(1);
    assert_eq!(outcome.error_message(), "error: workflow `wf` needs an input (the ticket): give it with --input TEXT");
    with_manifest("id: w\ninput: {mode: required}\n").run_workflow(&["--input", "T-1", "-q"]).status(0);
    let outcome = with_manifest("id: w\ninput: {mode: none}\n").run_workflow(&["--input", "x"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: workflow `wf` takes no input (its manifest says `input: {mode: none}`); drop --input"
    );
}

#[test]
fn r13_1_default_budget_environment_and_working_directory_are_honoured() {
    let outcome = with_manifest(
        "id: w\ndefault_budget: 1.5\nworking_directory: ../site\nenvironment:\n  GREETING: \"hi ${BATON_TEST_NAME}\"\n",
    )
    .write("site/.keep", "")
    .env("BATON_TEST_NAME", "ada")
    .run_workflow(&["--input", "x", "-q"]);
    outcome.status(0).stdout("in=x site hi ada\n");
    assert_eq!(state(&outcome)["budget_usd"], 1.5);
    // --budget still wins.
    let outcome = with_manifest("id: w\ndefault_budget: 1.5\n").run_workflow(&["--budget", "3", "-q"]);
    assert_eq!(state(&outcome)["budget_usd"], 3.0);
}

#[test]
fn r11_2_a_workflow_that_asks_needs_on_ask_pause() {
    let outcome = with_manifest("id: w\nrequires_human_input: \"true\"\n").run_workflow(&[]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: workflow `wf` asks a person for input (`requires_human_input: true` in its manifest); run it with \
         --on-ask pause"
    );
    with_manifest("id: w\nrequires_human_input: \"true\"\n").run_workflow(&["--on-ask", "pause", "-q"]).status(0);
    // Every mode that lets agents ask passes the check (`prompt` falls back to `pause`
    // without a terminal).
    with_manifest("id: w\nrequires_human_input: \"true\"\n").run_workflow(&["--on-ask", "prompt", "-q"]).status(0);
}

#[test]
fn r13_2_a_workflow_yaml_with_states_is_no_manifest_and_a_yaml_workflow_carries_its_own() {
    // A directory whose workflow.yaml has states: no manifest (no `id` needed).
    Test::new()
        .file("workflow.yaml", "states:\n  X:\n    sh: echo\n")
        .file("START.sh", &emit("<result>ok</result>"))
        .run_workflow(&["-q"])
        .status(0)
        .stdout("ok\n");
    // R13.4: manifest keys beside `states` are read (a backend Baton lacks is refused).
    let outcome = Test::new()
        .write("flow.yaml", "id: flow\nbackend: codx\nstates:\n  START:\n    sh: echo '<result>x</result>'\n")
        .args(["run", "flow.yaml", "--run-id", RUN])
        .run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: manifest `[ROOT]/flow.yaml`: `backend`: unknown backend `codx`: expected one of claude, pi, codex; \
         did you mean `codex`?"
    );
}

#[test]
fn a_broken_manifest_is_named() {
    let outcome = with_manifest("name: no id\n").run_workflow(&[]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: manifest `[ROOT]/wf/workflow.yaml`: `id` is required and must not be empty"
    );
}
