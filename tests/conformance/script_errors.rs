//! Every fatal script error, with its full message (R3.10, R3.20, R7.7, R7.8, R7.13;
//! §16 items 15, 16). Messages are compared exactly: on the console line, in the
//! `ErrorOccurred` and `RunFailed` events, and in `state.json`.

use super::common::{RUN, assert_fatal, assert_paused, emit, started};
use crate::support::Test;

#[test]
fn r7_7_nonzero_exit_is_fatal_and_shows_stderr() {
    // The goto on stdout is ignored: the exit code is checked before parsing.
    let script = "echo '<goto>B</goto>'\necho 'something broke' >&2\necho 'second line' >&2\nexit 3\n";
    let outcome =
        Test::new().file("START.sh", script).file("B.sh", "touch ran_b\necho '<result>b</result>'\n").run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "ScriptError",
        "script `START.sh` failed with exit code 3; its stderr:\nsomething broke\nsecond line",
    );
    assert!(!outcome.root().join("ran_b").exists());
    assert_eq!(started(&outcome), ["main:START.sh"]);
}

#[test]
fn r7_7_nonzero_exit_with_empty_stderr() {
    let outcome = Test::new().file("START.sh", "echo '<result>x</result>'\nexit 1\n").run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "ScriptError",
        "script `START.sh` failed with exit code 1 (its stderr was empty)",
    );
}

#[test]
fn r7_7_long_stderr_keeps_its_last_4096_bytes() {
    let script = "head -c 1000 /dev/zero | tr '\\0' A >&2\nhead -c 4096 /dev/zero | tr '\\0' B >&2\necho >&2\nexit 2\n";
    let outcome = Test::new().file("START.sh", script).run_workflow(&[]);
    let expected =
        format!("script `START.sh` failed with exit code 2; the last 4096 bytes of its stderr:\n{}", "B".repeat(4096));
    assert_fatal(&outcome, "main", "START.sh", "ScriptError", &expected);
    // The full stderr is kept in the step's trace file.
    let full = std::fs::read_to_string(outcome.run_dir(RUN).join("main_START_001.stderr.txt")).unwrap();
    assert_eq!(full.len(), 1000 + 4096 + 1);
}

#[test]
fn r7_7_killed_by_signal() {
    let outcome = Test::new().file("START.sh", "echo 'dying' >&2\nkill -KILL $$\n").run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "ScriptError",
        "script `START.sh` was killed by SIGKILL (signal 9); its stderr:\ndying",
    );
}

#[test]
fn r7_8_no_transition_tag() {
    let outcome = Test::new().file("START.sh", "echo 'all done, but no tag'\n").run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "NoTransitionTag",
        "script `START.sh` produced no transition tag in stdout",
    );
}

#[test]
fn r7_8_no_transition_tag_hints_at_stderr() {
    let outcome = Test::new().file("START.sh", "echo '<result>on the wrong stream</result>' >&2\n").run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "NoTransitionTag",
        "script `START.sh` produced no transition tag in stdout (a tag was printed to stderr, but only stdout \
         counts)",
    );
}

#[test]
fn r7_8_two_transition_tags_are_fatal() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>A</goto>\n<reset>B</reset>"))
        .file("A.sh", "touch ran_a\necho '<result>a</result>'\n")
        .file("B.sh", "touch ran_b\necho '<result>b</result>'\n")
        .run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "MultipleTransitions",
        "script `START.sh` produced 2 transition tags (expected 1)",
    );
    assert!(!outcome.root().join("ran_a").exists() && !outcome.root().join("ran_b").exists());
}

#[test]
fn r7_8_unresolved_target_suggests_the_close_name() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>next</goto>"))
        .file("NEXT.sh", "echo '<result>next</result>'\n")
        .run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TargetResolutionError",
        "script `START.sh`: cannot resolve its transition target: state `next` not found in workflow `[ROOT]/wf` (looked for \
         next.md, next.sh); did you mean `NEXT.sh`?",
    );
}

#[test]
fn r7_8_unresolved_target_without_a_close_name() {
    let outcome = Test::new().file("START.sh", &emit("<goto>ELSEWHERE</goto>")).run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TargetResolutionError",
        "script `START.sh`: cannot resolve its transition target: state `ELSEWHERE` not found in workflow `[ROOT]/wf` (looked \
         for ELSEWHERE.md, ELSEWHERE.sh)",
    );
}

#[test]
fn r3_10_call_without_return_is_fatal() {
    let outcome = Test::new()
        .file("START.sh", &emit("<call>SUB</call>"))
        .file("SUB.sh", "echo '<result>sub</result>'\n")
        .run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TransitionError",
        "script `START.sh`: <call> needs a `return` attribute (the state to continue at when the callee emits \
         <result>)",
    );
}

#[test]
fn r3_20_fork_without_next_is_fatal() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork>W</fork>"))
        .file("W.sh", "echo '<result>w</result>'\n")
        .run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TransitionError",
        "script `START.sh`: <fork> needs a `next` attribute (the state the parent continues at while the \
         worker runs)",
    );
    assert!(outcome.events_of(RUN, "AgentSpawned").is_empty());
}

#[test]
fn r7_13_silent_script_is_killed_after_the_inactivity_timeout() {
    let outcome = Test::new()
        .file("SLOW.sh", "sleep 3\necho '<result>too late</result>'\n")
        .args(["run", "wf/SLOW.sh", "--run-id", RUN, "--timeout", "1"])
        .run();
    assert_fatal(
        &outcome,
        "main",
        "SLOW.sh",
        "ScriptTimeout",
        "script `SLOW.sh` produced no output for 1 second and was killed (timeout from --timeout flag)",
    );
}

#[test]
fn r7_13_output_resets_the_inactivity_timer() {
    // 6 lines 0.3 s apart: 1.8 s in all, but never 1 s without output.
    let script = "for i in 1 2 3 4 5 6; do echo \"tick $i\"; sleep 0.3; done\necho '<result>survived</result>'\n";
    Test::new()
        .file("SLOW.sh", script)
        .args(["run", "wf/SLOW.sh", "--run-id", RUN, "--timeout", "1"])
        .run()
        .status(0)
        .stdout("survived\n");
}

#[test]
fn r7_13_stderr_output_also_resets_the_timer() {
    let script = "for i in 1 2 3 4 5 6; do echo \"tick $i\" >&2; sleep 0.3; done\necho '<result>survived</result>'\n";
    Test::new()
        .file("SLOW.sh", script)
        .args(["run", "wf/SLOW.sh", "--run-id", RUN, "--timeout", "1"])
        .run()
        .status(0)
        .stdout("survived\n");
}

#[test]
fn a_prompt_state_without_a_claude_cli_pauses_naming_where_it_looked() {
    // A PATH without `claude`, and no --claude-bin, BATON_CLAUDE_BIN or config entry.
    let outcome = Test::new()
        .env("PATH", "/usr/bin:/bin")
        .file("START.sh", &emit("<goto>REVIEW</goto>"))
        .file("REVIEW.md", "Review the code.\n")
        .run_workflow(&[]);
    assert_paused(
        &outcome,
        "main",
        "REVIEW.md",
        "backend_not_available",
        "state `REVIEW.md` runs on Claude Code: cannot find the Claude Code CLI: give --claude-bin, set \
         BATON_CLAUDE_BIN, set claude_bin in .baton/config.toml, or put `claude` on PATH (npm install -g \
         @anthropic-ai/claude-code); once it can run, `baton resume test` goes on",
    );
    assert_eq!(outcome.state(RUN)["steps_completed"], 1);
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn process_ended(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(") ").next().is_some_and(|rest| rest.starts_with('Z')),
    }
}

#[test]
fn r7_4_timeout_kills_the_scripts_whole_process_group() {
    let outcome = Test::new()
        .file("SLOW.sh", "sleep 30 &\necho $! > background.pid\nsleep 30\n")
        .args(["run", "wf/SLOW.sh", "--run-id", RUN, "--timeout", "1"])
        .run();
    outcome.status(1);
    let pid = std::fs::read_to_string(outcome.root().join("background.pid")).unwrap();
    let pid = pid.trim();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !process_ended(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(process_ended(pid), "the script's background child {pid} survived the timeout");
}

#[test]
fn r7_4_background_child_does_not_hold_the_step_open() {
    // The child keeps the output pipes open for 25 s; the step ends a few seconds after the script exits.
    let began = std::time::Instant::now();
    let outcome = Test::new()
        .file("START.sh", "sleep 25 &\necho $! > background.pid\necho '<result>done</result>'\n")
        .run_workflow(&[]);
    let elapsed = began.elapsed();
    if let Ok(pid) = std::fs::read_to_string(outcome.root().join("background.pid")) {
        let _ = std::process::Command::new("kill").arg(pid.trim()).status();
    }
    outcome.status(0).stdout("done\n");
    assert!(elapsed < std::time::Duration::from_secs(20), "the run took {elapsed:?}");
}
