//! Crash safety: a script kills Baton with SIGKILL mid-run (simulated power loss).
//! `baton resume` must reach the result a clean run reaches, and no step whose
//! transition was recorded before the crash may run again; only the step that was
//! in flight re-runs.

use crate::support::{Outcome, Test};

/// A six-step loop. Every execution appends its step number to `steps.log`;
/// step 4 kills Baton (its parent) the first time it runs when `CRASH_AT` is 4.
fn loop_workflow() -> Test {
    Test::new().file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n").file(
        "STEP.sh",
        r#"n="$BATON_INPUT"
echo "$n" >> steps.log
if [ "$n" = "$CRASH_AT" ] && [ ! -e crashed ]; then
  touch crashed
  kill -9 $PPID
  sleep 1
fi
if [ "$n" -ge 6 ]; then echo "<result>reached $n</result>"; else echo "<goto input=\"$((n + 1))\">STEP</goto>"; fi
"#,
    )
}

fn log_lines(outcome: &Outcome, file: &str) -> Vec<String> {
    std::fs::read_to_string(outcome.root().join(file)).unwrap_or_default().lines().map(str::to_string).collect()
}

#[test]
fn sigkill_mid_run_then_resume_matches_a_clean_run() {
    let clean = loop_workflow().env("CRASH_AT", "none").run_workflow(&[]);
    clean.status(0);

    let crashed = loop_workflow().env("CRASH_AT", "4").run_workflow(&[]);
    assert_eq!(crashed.status, -1, "baton was killed by a signal\n{}", crashed.stderr);
    let snapshot = crashed.state("test");
    assert_eq!(snapshot["status"], "running");
    assert_eq!(snapshot["agents"][0]["current_state"], "STEP.sh");
    assert_eq!(snapshot["agents"][0]["pending_result"], "4", "the snapshot is the one before the in-flight step");

    let resumed = crashed.rerun(["resume", "test"]);
    resumed.status(0).stdout(&clean.stdout);
    assert_eq!(log_lines(&resumed, "steps.log"), ["1", "2", "3", "4", "4", "5", "6"], "only step 4 ran twice");
    assert_eq!(resumed.state("test")["status"], "completed");
    assert_eq!(resumed.state("test")["steps_completed"], clean.state("test")["steps_completed"]);
}

#[test]
fn sigkill_during_a_fan_out_never_reruns_finished_workers() {
    let test = Test::new()
        .file("START.sh", "for i in 1 2 3 4 5; do echo \"<fork next=\\\"WAIT\\\" i=\\\"$i\\\">W</fork>\"; done\n")
        .file(
            "W.sh",
            r#"echo "$BATON_AGENT_ID" >> workers.log
if [ "$i" = 5 ] && [ ! -e crashed ]; then
  # Let the other workers finish first, then pull the plug.
  for _ in $(seq 100); do [ "$(wc -l < done.log 2>/dev/null || echo 0)" -ge 4 ] && break; sleep 0.05; done
  sleep 0.3
  touch crashed
  kill -9 $PPID
  sleep 1
fi
echo "$BATON_AGENT_ID" >> done.log
echo "<result>$i</result>"
"#,
        )
        .file("WAIT.sh", "echo '<result>main finished</result>'\n");
    let crashed = test.run_workflow(&[]);
    assert_eq!(crashed.status, -1, "{}", crashed.stderr);
    let finished_before_crash: Vec<String> = crashed
        .events_of("test", "AgentTerminated")
        .iter()
        .filter_map(|event| event["agent_id"].as_str().map(str::to_string))
        .filter(|id| id.starts_with("main_w"))
        .collect();
    assert!(!finished_before_crash.is_empty(), "some workers finished before the crash");

    let resumed = crashed.rerun(["resume", "test", "--json"]);
    resumed.status(0);
    let report: serde_json::Value = serde_json::from_str(&resumed.stdout).unwrap();
    assert_eq!(report["result"], "main finished");
    let runs = log_lines(&resumed, "workers.log");
    for worker in &finished_before_crash {
        assert_eq!(runs.iter().filter(|id| *id == worker).count(), 1, "{worker} ran again: {runs:?}");
    }
    for n in 1..=5 {
        let id = format!("main_w{n}");
        assert!(runs.contains(&id), "{id} never ran: {runs:?}");
    }
    assert_eq!(runs.iter().filter(|id| *id == "main_w5").count(), 2, "the in-flight worker re-ran once");
}
