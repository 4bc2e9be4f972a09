//! A daemon that stops or dies while its runs are live: the next daemon resumes
//! them and they complete with no completed step run again (`docs/serve.md`,
//! "Lifecycle").

use std::collections::BTreeMap;

use serde_json::json;

use crate::conformance::common::with_wait_for;
use crate::support::Test;
use crate::support::serve::Daemon;

/// Ten steps that each log their number; step 4 waits for `go.flag`.
fn logged_loop() -> Test {
    Test::new().file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n").file(
        "STEP.sh",
        &with_wait_for(
            "n=$BATON_INPUT\n[ \"$n\" -eq 4 ] && { echo $$ > step4.pid; wait_for go.flag; }\necho \"step $n\" >> effects.log\n\
             if [ \"$n\" -ge 10 ]; then echo '<result>done</result>'; else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n",
        ),
    )
}

/// A daemon driving run `run_id` of [`logged_loop`], stopped at step 4 (three steps
/// of the loop done, the fourth waiting for `go.flag`).
fn daemon_at_step_4(test: &Test, run_id: &str) -> Daemon {
    let daemon = Daemon::start(test, &[]);
    daemon.start_run("wf", json!({"run_id": run_id}));
    daemon.wait_for_run(run_id, "step 3 done", |run| run["run"]["steps_completed"] == 4);
    daemon
}

/// Let step 4 go on, and check run `run_id` completes with every step run once.
fn completes_once(test: &Test, daemon: &Daemon, run_id: &str) {
    let done = daemon.wait_for_status(run_id, "completed");
    assert_eq!(done["run"]["steps_completed"], 11);
    assert_eq!(effects(test), (1..=10).map(|n| format!("step {n}")).collect::<Vec<_>>(), "no step ran twice");
    assert_each_commit_once(test, run_id, 11);
}

fn effects(test: &Test) -> Vec<String> {
    std::fs::read_to_string(test.root().join("effects.log")).unwrap_or_default().lines().map(str::to_string).collect()
}

/// Each committed step is in the trace once, and every completed step is there.
fn assert_each_commit_once(test: &Test, run_id: &str, steps: u64) {
    let trace = std::fs::read_to_string(test.root().join(format!(".baton/runs/{run_id}/events.jsonl"))).expect("trace");
    let mut commits: BTreeMap<u64, usize> = BTreeMap::new();
    for line in trace.lines() {
        let event: serde_json::Value = serde_json::from_str(line).expect("every trace line is JSON");
        if event["type"] == "TransitionOccurred" {
            *commits.entry(event["commit"].as_u64().expect("commit")).or_default() += 1;
        }
    }
    assert!(commits.values().all(|count| *count == 1), "{commits:?}");
    assert_eq!(commits.len() as u64, steps, "{commits:?}");
}

#[test]
fn a_daemon_stopped_with_a_live_run_lets_it_drain_and_the_next_one_resumes_it() {
    let test = logged_loop();
    let daemon = daemon_at_step_4(&test, "live");
    assert_eq!(daemon.stop(), 0);
    let stopped = test.command(&["status".into(), "--json".into(), "live".into()]).output().expect("status");
    let state: serde_json::Value = serde_json::from_slice(&stopped.stdout).expect("JSON");
    assert_eq!(state["status"], "interrupted", "the daemon's stop drained the run and saved it");
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    let daemon = Daemon::start(&test, &[]);
    completes_once(&test, &daemon, "live");
}

#[test]
fn a_daemon_killed_with_its_run_is_replaced_and_the_run_resumed_without_rerunning_completed_steps() {
    let test = logged_loop();
    let daemon = daemon_at_step_4(&test, "crashed");
    let child =
        crate::support::run_lock::holder(&test.root().join(".baton/runs/crashed")).expect("the driving pid") as i32;
    daemon.kill();
    // SAFETY: kill(2) on the run's process, as a machine crash would.
    unsafe { libc::kill(child, libc::SIGKILL) };
    // The watchdog ends the killed run's step; until it has, that step would see
    // the flag and log "step 4" itself (a race of the test, not of the resume).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let step: i32 = loop {
        // The shell creates the file before it writes the number.
        match std::fs::read_to_string(test.root().join("step4.pid")).unwrap_or_default().trim().parse() {
            Ok(pid) => break pid,
            Err(_) if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(_) => panic!("step 4 never wrote its pid"),
        }
    };
    // SAFETY: signal 0 only checks that the process exists.
    while unsafe { libc::kill(step, 0) } == 0 {
        assert!(std::time::Instant::now() < deadline, "the killed run's step outlived it");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    let daemon = Daemon::start(&test, &[]);
    // Step 4 was in flight at the kill (waiting for the flag, before its effect):
    // it ran again; no completed step did.
    completes_once(&test, &daemon, "crashed");
}

#[test]
fn a_run_whose_daemon_was_killed_goes_on_by_itself_and_the_next_daemon_follows_it() {
    let test = logged_loop();
    let daemon = daemon_at_step_4(&test, "orphan");
    daemon.kill();
    let daemon = Daemon::start(&test, &[]);
    let live = daemon.get("/api/v1/runs/orphan").json();
    assert_eq!(live["live"], true, "the old daemon's child still drives it");
    assert_eq!(live["driven_here"], false);
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    completes_once(&test, &daemon, "orphan");
}

/// A run cancelled through the API was resumed by the next daemon on its own; now it
/// stays cancelled until someone resumes it.
#[test]
fn a_run_cancelled_through_the_api_was_resumed_at_the_next_start_now_it_stays_stopped() {
    let test = logged_loop();
    let daemon = daemon_at_step_4(&test, "stopped");
    let cancelled = daemon.post("/api/v1/runs/stopped/cancel", &json!({}));
    assert_eq!(cancelled.status, 202, "{}", cancelled.body);
    daemon.wait_for_status("stopped", "interrupted");
    assert_eq!(daemon.stop(), 0);
    let daemon = Daemon::start(&test, &[]);
    let said = std::fs::read_to_string(test.root().join("serve.stderr")).expect("daemon stderr");
    assert!(!said.contains("resuming"), "{said}");
    let run = daemon.get("/api/v1/runs/stopped").json();
    assert_eq!((run["run"]["status"].as_str(), run["live"].as_bool()), (Some("interrupted"), Some(false)));
    // Resumed by a person: it goes on, and is no longer a cancelled run.
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    assert_eq!(daemon.post("/api/v1/runs/stopped/resume", &json!({})).status, 202);
    completes_once(&test, &daemon, "stopped");
    let record = std::fs::read_to_string(test.root().join(".baton/serve/runs/stopped.json")).expect("record");
    assert!(!record.contains("cancelled"), "{record}");
}
