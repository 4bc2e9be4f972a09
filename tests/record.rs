//! `baton test --record RUN` (issue 23): a finished run written as a test file,
//! replayed offline by `baton test`; secrets kept out of it; runs that cannot be
//! recorded refused with a clear message, the run untouched.

use crate::support::fake_claude::{FakeClaude, Reply};
use crate::support::{Outcome, Test};

/// A run of a prompt state (the fake Claude CLI) that goes to a script, started
/// with an input holding a secret of the environment.
fn finished_run() -> Outcome {
    let test = Test::new().with_fake_claude().env("DEPLOY_TOKEN", "tok-1234567890");
    FakeClaude::at(test.root()).rule(
        "plan",
        "PLAN",
        Reply::text("planned: \"quoted\"\nline two\n<goto input=\"x1\">NEXT.sh</goto>").cost(0.25),
    );
    let outcome = test
        .file("START.md", "PLAN the work on {{input}}")
        .file("NEXT.sh", "echo \"checked $BATON_INPUT\" >&2\necho \"<result>done: $BATON_INPUT</result>\"\n")
        .run_workflow(&["--input", "ticket tok-1234567890"]);
    outcome.status(0).stdout("done: x1\n");
    outcome
}

const RECORDED: &str = r#"---
description: recorded from run test (completed)
input: "ticket [redacted DEPLOY_TOKEN]"
start: START.md
replies:
  START.md:
    - text: |-
        planned: "quoted"
        line two
        <goto input="x1">NEXT.sh</goto>
      cost_usd: 0.25
      backend: claude
scripts:
  NEXT.sh:
    - stdout: |
        <result>done: x1</result>
      stderr: |
        checked x1
      exit_code: 0
expect:
  outcome: completed
  result: "done: x1"
  path:
    - START.md
    - NEXT.sh
  steps: 2
  cost_usd: 0.25
"#;

#[test]
fn a_finished_run_is_recorded_into_the_workflows_tests_and_replays_exactly() {
    let recorded = finished_run().rerun(["test", "--record", "test"]);
    recorded.status(0).stdout("");
    assert_eq!(
        recorded.error_message(),
        "recorded run test as [ROOT]/wf/tests/recorded-test.yaml; replay it with \
         `baton test [ROOT]/wf/tests/recorded-test.yaml`"
    );
    let file = std::fs::read_to_string(recorded.root().join("wf/tests/recorded-test.yaml")).expect("the test file");
    assert_eq!(file, RECORDED);
    assert!(!file.contains("tok-1234567890"), "no secret in the file");

    // The replay calls no CLI: the fake Claude's calls stay one.
    let replay = recorded.rerun(["test", "wf"]);
    replay
        .status(0)
        .stdout("PASS wf/tests/recorded-test.yaml: recorded from run test (completed)\n1 passed, 0 failed\n");
    assert_eq!(FakeClaude::at(replay.root()).calls().len(), 1);
}

#[test]
fn keep_scripts_lets_the_replay_run_them_and_output_names_the_file() {
    let recorded =
        finished_run().rerun(["test", "--record", "test", "--keep-scripts", "--output", "wf/tests/kept.yaml"]);
    recorded.status(0);
    let file = std::fs::read_to_string(recorded.root().join("wf/tests/kept.yaml")).expect("the test file");
    assert!(!file.contains("scripts:"), "{file}");
    let replay = recorded.rerun(["test", "wf/tests/kept.yaml"]);
    replay.status(0).stdout("PASS wf/tests/kept.yaml: recorded from run test (completed)\n1 passed, 0 failed\n");

    // Recording over a file is refused.
    let again = replay.rerun(["test", "--record", "test", "--output", "wf/tests/kept.yaml"]);
    again.status(1);
    assert_eq!(
        again.error_message(),
        "error: wf/tests/kept.yaml already exists: choose another --output, or remove it to record again"
    );
}

#[test]
fn a_paused_run_is_recorded_with_its_bound_and_replays_to_the_same_pause() {
    let outcome = Test::new()
        .file("START.sh", "echo '<goto input=\"1\">STEP.sh</goto>'\n")
        .file("STEP.sh", "echo \"<goto input=\\\"$((BATON_INPUT + 1))\\\">STEP.sh</goto>\"\n")
        .run_workflow(&["--max-steps", "3"]);
    outcome.status(3);
    let recorded = outcome.rerun(["test", "--record", "test"]);
    recorded.status(0);
    let file = std::fs::read_to_string(recorded.root().join("wf/tests/recorded-test.yaml")).expect("the test file");
    assert!(file.contains("max_steps: 3\n") && file.contains("outcome: paused\n"), "{file}");
    recorded.rerun(["test", "wf"]).status(0);
}

#[test]
fn runs_that_cannot_be_recorded_are_refused_with_what_is_wrong() {
    // A trace whose turn lost its stream: the reply is not on disk.
    let outcome = finished_run();
    let events = outcome.run_dir("test").join("events.jsonl");
    let trace = std::fs::read_to_string(&events).expect("the trace");
    let without: String =
        trace.lines().filter(|line| !line.contains("ClaudeStreamOutput")).map(|line| format!("{line}\n")).collect();
    std::fs::write(&events, without).expect("rewrite the trace");
    let refused = outcome.rerun(["test", "--record", "test"]);
    refused.status(1);
    assert_eq!(
        refused.error_message(),
        "error: START.md, turn 1 of agent main in run test has no reply in the trace (its output is not on disk, or \
         the turn was cut short): the run cannot be replayed"
    );
    assert!(!refused.root().join("wf/tests").exists(), "nothing written");

    // A damaged trace.
    std::fs::write(&events, format!("{trace}not an event\n")).expect("damage the trace");
    let damaged = refused.rerun(["test", "--record", "test"]);
    damaged.status(1);
    let lines = trace.lines().count() + 1;
    assert!(
        damaged
            .error_message()
            .starts_with(&format!("error: line {lines} of the trace of run test is not a trace event (")),
        "{}",
        damaged.error_message()
    );
    assert!(damaged.error_message().ends_with("): the trace is damaged"), "{}", damaged.error_message());

    // No trace at all.
    let untraced = Test::new().file("START.sh", "echo '<result>x</result>'\n").run_workflow(&["--no-debug"]);
    untraced.status(0);
    let refused = untraced.rerun(["test", "--record", "test"]);
    refused.status(1);
    assert_eq!(
        refused.error_message(),
        "error: run test has no trace (it ran with --no-debug): there is nothing to record it from"
    );

    // A run still running.
    let test = Test::new();
    let go = test.root().join("go");
    let test = test.file(
        "START.sh",
        &format!("while [ ! -f '{}' ]; do sleep 0.02; done\necho '<result>x</result>'\n", go.display()),
    );
    let mut child = test.spawn(&["run", "wf", "--run-id", "live"]);
    test.wait_for_event("live", |event| event["type"] == "StateStarted");
    let outcome = run_now(test, &["test", "--record", "live"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run live is running: only a run that completed, failed or paused can be recorded (finish it with \
         `baton resume live` first)"
    );
    std::fs::write(&go, "").expect("let the run finish");
    assert!(child.wait().expect("the run ends").success());
}

/// `baton ARGS` now, while another command of the project may still run.
fn run_now(test: Test, args: &[&str]) -> Outcome {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let output = test.command(&args).output().expect("run baton");
    Outcome {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        test,
    }
}

/// Copy sample `name` (its states, not its tests) into a fresh project's `wf/`.
fn sample(name: &str) -> Test {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("states").join(name);
    let mut test = Test::new();
    for entry in std::fs::read_dir(&dir).expect("the sample") {
        let path = entry.expect("an entry").path();
        if path.is_file() {
            let file = path.file_name().expect("a name").to_string_lossy().into_owned();
            test = test.file(&file, &std::fs::read_to_string(&path).expect("a state"));
        }
    }
    test
}

#[test]
fn a_run_of_each_script_sample_is_recorded_and_replays() {
    // The prompt samples need a model to run at all; their recordings are the
    // fake-Claude run above. The inputs are their own tests'.
    for (name, input, result) in [
        ("countdown", "3", "Liftoff!\n"),
        ("factorial", "5", "5! = 120\n"),
        ("fanout", "baton runs workflows", "3 words, 18 letters\n"),
    ] {
        let outcome = sample(name).run_workflow(&["--input", input]);
        outcome.status(0).stdout(result);
        let recorded = outcome.rerun(["test", "--record", "test"]);
        recorded.status(0);
        let replay = recorded.rerun(["test", "wf/tests/recorded-test.yaml"]);
        replay
            .status(0)
            .stdout("PASS wf/tests/recorded-test.yaml: recorded from run test (completed)\n1 passed, 0 failed\n");
    }
}
