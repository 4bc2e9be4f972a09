//! Clean shutdown (A7): the first SIGINT/SIGTERM stops launching and gives running
//! steps `--grace` to finish, then their process groups get SIGTERM and later
//! SIGKILL; a second SIGINT stops them at once. The run is saved and resumable, and
//! no child process group outlives Baton — not even when Baton is SIGKILLed.

use std::process::Child;
use std::time::{Duration, Instant};

use crate::support::Test;

fn signal(child: &Child, signal: i32) {
    // SAFETY: plain signal delivery to a child process we own.
    unsafe { libc::kill(child.id() as i32, signal) };
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Wait up to 10 s for `pid` to be gone (it may be a zombie briefly reaped by init).
fn gone(pid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The pid a script wrote to `path`. The shell creates the file before it writes
/// the number, so an empty read means "not yet".
fn pid_in(test: &Test, path: &str) -> i32 {
    assert!(test.wait_for_file(path), "{path} was never written");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(test.root().join(path)).unwrap_or_default();
        match text.trim().parse() {
            Ok(pid) => return pid,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => panic!("{path} holds no pid: {text:?}"),
        }
    }
}

/// Wait (up to 10 s) until run `run_id`'s trace holds an event of type `kind`.
fn trace_has(test: &Test, run_id: &str, kind: &str) -> bool {
    let path = test.root().join(format!(".baton/runs/{run_id}/events.jsonl"));
    let needle = format!("\"type\":\"{kind}\"");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if std::fs::read_to_string(&path).is_ok_and(|trace| trace.contains(&needle)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn exit_code(mut child: Child) -> Option<i32> {
    child.wait().expect("baton exits").code()
}

/// A state that records its shell's pid and a background grandchild's pid, then blocks.
const BLOCKING_STATE: &str =
    "sleep 300 &\necho $! > grandchild.pid\necho $$ > script.pid\nsleep 300\necho '<result>late</result>'\n";

#[test]
fn a7_sigint_with_no_grace_kills_the_step_saves_and_exits_130() {
    let test = Test::new().file("START.sh", BLOCKING_STATE);
    let child = test.spawn(&["run", "wf", "--run-id", "sig", "--grace", "0"]);
    let script = pid_in(&test, "script.pid");
    let grandchild = pid_in(&test, "grandchild.pid");
    signal(&child, libc::SIGINT);
    assert_eq!(exit_code(child), Some(130));
    assert!(gone(script), "the script was stopped");
    assert!(gone(grandchild), "its whole process group was stopped");
    let outcome = test.args(["status", "sig"]).run();
    assert!(outcome.stdout.starts_with("run sig: interrupted\n"), "{}", outcome.stdout);
    assert!(outcome.stdout.contains("  main  at START.sh  [active]\n"), "{}", outcome.stdout);
    std::fs::write(outcome.root().join("wf/START.sh"), "echo '<result>resumed</result>'\n").unwrap();
    outcome.rerun(["resume", "sig"]).status(0).stdout("resumed\n");
}

/// Regression: the daemon's cancel signals the process that holds a run's lock,
/// and `baton run` took the lock before it installed its SIGINT handler, so a
/// cancel right after the start killed it outright and left the run "running"
/// for ever. Found as the flaky `two_resumes_at_once_start_one_child…` in CI.
#[test]
fn sigint_as_soon_as_the_run_lock_is_taken_interrupts_the_run() {
    let test = Test::new().file("START.sh", BLOCKING_STATE);
    let child = test.spawn(&["run", "wf", "--run-id", "early", "--grace", "0"]);
    let run_dir = test.root().join(".baton/runs/early");
    let deadline = Instant::now() + Duration::from_secs(10);
    while crate::support::run_lock::holder(&run_dir) != Some(child.id()) {
        assert!(Instant::now() < deadline, "baton never took the run's lock");
        std::thread::yield_now();
    }
    signal(&child, libc::SIGINT);
    assert_eq!(exit_code(child), Some(130), "killed by the default SIGINT instead of stopping cleanly");
    let outcome = test.args(["status", "early"]).run();
    assert!(outcome.stdout.starts_with("run early: interrupted\n"), "{}", outcome.stdout);
}

#[test]
fn sigterm_exits_143() {
    let test = Test::new().file("START.sh", BLOCKING_STATE);
    let child = test.spawn(&["run", "wf", "--run-id", "term", "--grace", "0"]);
    pid_in(&test, "script.pid");
    signal(&child, libc::SIGTERM);
    assert_eq!(exit_code(child), Some(143));
}

#[test]
fn a_step_finishing_within_the_grace_period_is_recorded() {
    let test = Test::new()
        .file("START.sh", "touch started\nsleep 1\necho '<goto>NEXT</goto>'\n")
        .file("NEXT.sh", "echo ran >> next.log\necho '<result>next done</result>'\n");
    let child = test.spawn(&["run", "wf", "--run-id", "grace"]);
    assert!(test.wait_for_file("started"));
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().expect("baton exits");
    assert_eq!(output.status.code(), Some(130));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("stopping: SIGINT: launching no new steps; waiting up to 30.00 s for 1 running step to finish (press Ctrl-C again to stop it now)"),
        "{stderr}"
    );
    assert!(!test.root().join("next.log").exists(), "no new step was launched");
    let outcome = test.args(["resume", "grace"]).run();
    outcome.status(0).stdout("next done\n");
    let starts: Vec<String> = outcome
        .events_of("grace", "StateStarted")
        .iter()
        .map(|event| event["state"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(starts, ["START.sh", "NEXT.sh"], "START.sh finished in the grace period and did not run again");
}

#[test]
fn a_second_sigint_stops_running_steps_at_once() {
    let test = Test::new().file("START.sh", BLOCKING_STATE);
    let child = test.spawn(&["run", "wf", "--run-id", "twice"]);
    let script = pid_in(&test, "script.pid");
    signal(&child, libc::SIGINT);
    // The second signal must come after the first was handled, not merge with it.
    assert!(trace_has(&test, "twice", "WorkflowStopping"), "the first SIGINT was handled");
    let started = Instant::now();
    signal(&child, libc::SIGINT);
    assert_eq!(exit_code(child), Some(130));
    assert!(started.elapsed() < Duration::from_secs(10), "did not wait for the 30 s grace period");
    assert!(gone(script));
}

#[test]
fn when_grace_runs_out_steps_get_sigterm_before_sigkill() {
    let test = Test::new().file(
        "START.sh",
        "trap 'echo got TERM > term.txt; exit 1' TERM\necho $$ > script.pid\nwhile true; do sleep 0.1; done\n",
    );
    let child = test.spawn(&["run", "wf", "--run-id", "polite", "--grace", "0.3"]);
    pid_in(&test, "script.pid");
    signal(&child, libc::SIGINT);
    assert_eq!(exit_code(child), Some(130));
    assert_eq!(std::fs::read_to_string(test.root().join("term.txt")).unwrap(), "got TERM\n");
}

/// The watchdog kills what Baton registered, not only what its `/proc` sweep finds:
/// a step whose leader dropped `BATON_WORKFLOW_ID` (here by `exec env -u`) is
/// invisible to the sweep, so only its group's registration (a slot of the table
/// Baton shares with the watchdog) can end it once Baton is SIGKILLed.
#[test]
fn a_registered_group_dies_with_a_sigkilled_baton_even_without_the_run_marker() {
    let test = Test::new().file("START.sh", "echo $$ > script.pid\nexec env -u BATON_WORKFLOW_ID sleep 300\n");
    let child = test.spawn(&["run", "wf", "--run-id", "unmarked"]);
    let script = pid_in(&test, "script.pid");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read(format!("/proc/{script}/environ"))
        .is_ok_and(|environ| environ.windows(18).any(|window| window == b"BATON_WORKFLOW_ID="))
    {
        assert!(Instant::now() < deadline, "the script never dropped its marker");
        std::thread::sleep(Duration::from_millis(10));
    }
    signal(&child, libc::SIGKILL);
    assert_eq!(exit_code(child), None, "killed by a signal");
    assert!(gone(script), "the watchdog killed the registered group");
}

#[test]
fn child_process_groups_die_with_a_sigkilled_baton() {
    let test = Test::new().file("START.sh", BLOCKING_STATE);
    let child = test.spawn(&["run", "wf", "--run-id", "orphan"]);
    let script = pid_in(&test, "script.pid");
    let grandchild = pid_in(&test, "grandchild.pid");
    signal(&child, libc::SIGKILL);
    assert_eq!(exit_code(child), None, "killed by a signal");
    assert!(gone(script), "the watchdog killed the script");
    assert!(gone(grandchild), "and its background child");
    let outcome = test.args(["status", "orphan"]).run();
    assert!(
        outcome.stdout.starts_with(
            "run orphan: running (but no baton is driving it: it was killed; continue with `baton resume orphan`)\n"
        ),
        "{}",
        outcome.stdout
    );
}
