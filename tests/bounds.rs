//! Bounds against runaway workflows and one owner per run: each bound pauses the
//! run (exit 3) with its reason, and `baton resume` with a raised bound continues.

use std::time::{Duration, Instant};

use crate::support::Test;

/// A loop of `n` steps that never stops by itself before step 50.
fn endless_loop() -> Test {
    Test::new().file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n").file(
        "STEP.sh",
        "n=$BATON_INPUT\nif [ \"$n\" -ge 50 ]; then echo \"<result>reached $n</result>\"; \
         else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n",
    )
}

#[test]
fn max_steps_pauses_and_a_raised_bound_resumes() {
    let outcome = endless_loop().run_workflow(&["--max-steps", "5"]);
    outcome.status(3).stdout("");
    outcome.stderr_contains(
        "paused: run test: step limit of 5 reached; continue with `baton resume test --max-steps <more>`",
    );
    assert_eq!(outcome.state("test")["steps_completed"], 5);

    let again = outcome.rerun(["resume", "test"]);
    again.status(3);
    again.stderr_contains("paused: run test: step limit of 5 reached");
    assert_eq!(again.state("test")["steps_completed"], 5, "the bound is kept on resume");

    let raised = again.rerun(["resume", "test", "--max-steps", "100"]);
    raised.status(0).stdout("reached 50\n");
}

#[test]
fn time_limit_pauses_and_a_longer_one_resumes() {
    let outcome = Test::new()
        .file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n")
        .file(
            "STEP.sh",
            "sleep 0.2\nn=$BATON_INPUT\nif [ \"$n\" -ge 8 ]; then echo \"<result>slow $n</result>\"; \
             else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n",
        )
        .run_workflow(&["--time-limit", "0.5"]);
    outcome.status(3);
    outcome.stderr_contains(
        "paused: run test: time limit of 500ms reached; continue with `baton resume test --time-limit <longer>`",
    );
    // Regression: a time-limit stop said "press Ctrl-C again" though nobody pressed it.
    outcome.stderr_contains("stopping: the time limit of 500ms was reached: launching no new steps; ");
    assert!(!outcome.stderr.contains("Ctrl-C"), "{}", outcome.stderr);
    let steps = outcome.state("test")["steps_completed"].as_u64().unwrap();
    assert!(steps < 9, "stopped before the end ({steps} steps)");
    let resumed = outcome.rerun(["resume", "test", "--time-limit", "1h"]);
    resumed.status(0).stdout("slow 8\n");
}

#[test]
fn invalid_time_limit_says_what_is_expected() {
    let outcome = endless_loop().run_workflow(&["--time-limit", "soon"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: invalid value `soon` for --time-limit: expected a duration such as 90m, 2h, 1h30m or 45s, found `soon`"
    );
}

#[test]
fn max_agents_queues_workers_and_status_shows_them() {
    let test = Test::new()
        .file("START.sh", "for i in 1 2 3 4 5; do echo \"<fork next=\\\"WAIT\\\">W</fork>\"; done\n")
        .file("W.sh", "touch \"started_$BATON_AGENT_ID\"\nwhile [ ! -e release ]; do sleep 0.05; done\necho '<result>w</result>'\n")
        .file("WAIT.sh", "echo '<result>main</result>'\n");
    let child = test.spawn(&["run", "wf", "--run-id", "cap", "--max-agents", "2", "-q"]);
    let started_workers = || {
        std::fs::read_dir(test.root())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("started_"))
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut status = String::new();
    while Instant::now() < deadline {
        let output = test.command(&["status".into(), "cap".into()]).output().expect("status");
        status = String::from_utf8_lossy(&output.stdout).into_owned();
        if status.matches("[queued]").count() == 3 && started_workers() == 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(status.matches("[queued]").count(), 3, "{status}");
    assert_eq!(started_workers(), 2, "two workers run");
    assert!(status.starts_with("run cap: running (driven by baton pid "), "{status}");
    std::fs::write(test.root().join("release"), "").unwrap();
    let output = child.wait_with_output().expect("baton exits");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "main\n");
    // No third worker ever ran beside two others: replay the trace instead of
    // watching for a while and hoping a violation would show.
    let trace = std::fs::read_to_string(test.root().join(".baton/runs/cap/events.jsonl")).expect("trace");
    let (mut running, mut most) = (0, 0);
    for event in trace.lines().map(|line| serde_json::from_str::<serde_json::Value>(line).expect("event")) {
        match (event["type"].as_str(), event["state"].as_str()) {
            (Some("StateStarted"), Some("W.sh")) => running += 1,
            (Some("StateCompleted"), Some("W.sh")) => running -= 1,
            _ => continue,
        }
        most = most.max(running);
    }
    assert_eq!((most, running), (2, 0), "at most two workers ran at once, and all five finished");
}

#[test]
fn a_second_resume_of_a_live_run_names_the_owner() {
    let test = Test::new()
        .file("START.sh", "touch started\nwhile [ ! -e release ]; do sleep 0.05; done\necho '<result>done</result>'\n");
    let child = test.spawn(&["run", "wf", "--run-id", "live", "-q"]);
    assert!(test.wait_for_file("started"));
    let outcome = test.args(["resume", "live"]).run();
    outcome.status(1);
    let pid = child.id();
    assert_eq!(
        outcome.error_message(),
        format!(
            "error: run `live` is already being driven by another baton (pid {pid}); wait for it to finish, or stop it with `kill -INT {pid}`"
        )
    );
    std::fs::write(outcome.root().join("release"), "").unwrap();
    let output = child.wait_with_output().expect("baton exits");
    assert_eq!(output.status.code(), Some(0), "the owner was not disturbed");
}
