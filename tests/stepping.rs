//! Step-by-step execution (issue 24, `docs/inspecting.md` "Step by step"):
//! breakpoints that stop only the agent reaching them, `--step`, breakpoints kept
//! by the run and changed on resume, and edits of a stopped agent before it goes on.

use serde_json::Value;

use crate::support::Test;

/// START forks a worker W and goes on to A; A ends the run.
fn forking() -> Test {
    Test::new()
        .file("START.sh", "echo '<fork>W</fork><goto>A</goto>'\n")
        .file("W.sh", "echo '<result>worker done</result>'\n")
        .file("A.sh", "echo \"<result>main got: ${BATON_INPUT:-nothing}</result>\"\n")
}

/// START goes to LOOP, which goes to itself until it ran three times.
fn looping() -> Test {
    Test::new().file("START.sh", "echo '<goto>LOOP</goto>'\n").file(
        "LOOP.sh",
        "n=$(( $(cat \"$BATON_TASK_FOLDER/n\" 2>/dev/null || echo 0) + 1 ))\necho $n > \"$BATON_TASK_FOLDER/n\"\n\
         if [ $n -ge 3 ]; then echo \"<result>looped $n</result>\"; else echo '<goto>LOOP</goto>'; fi\n",
    )
}

fn agent<'a>(state: &'a Value, id: &str) -> &'a Value {
    state["agents"].as_array().and_then(|agents| agents.iter().find(|agent| agent["id"] == id)).unwrap_or(&Value::Null)
}

#[test]
fn a_breakpoint_stops_only_the_agent_that_reached_it_and_the_run_exits_paused() {
    let outcome = forking().run_workflow(&["--break-before", "A"]);
    outcome.status(3);
    let state = outcome.state("test");
    let main = agent(&state, "main");
    assert_eq!(
        (&main["current_state"], &main["status"], &main["pause_reason"]),
        (&"A.sh".into(), &"paused".into(), &"breakpoint".into())
    );
    assert_eq!(main["error"], "stopped before A.sh (--break-before)");
    // The worker went on and ended.
    assert_eq!(state["terminated"][0]["id"], "main_w1");
    assert!(
        outcome.stderr.contains("[main] paused at A.sh (breakpoint): stopped before A.sh (--break-before)"),
        "{}",
        outcome.stderr
    );
    let paused = outcome.events_of("test", "AgentPaused");
    assert_eq!(paused.len(), 1, "{paused:?}");
    // A resume runs the stopped agent on, past its breakpoint.
    let outcome = outcome.rerun(["resume", "test"]);
    outcome.status(0).stdout("main got: nothing\n");
}

#[test]
fn breakpoints_are_kept_by_the_run_and_a_resume_sets_or_clears_them() {
    let outcome = looping().run_workflow(&["--break-before", "LOOP"]);
    outcome.status(3);
    assert_eq!(outcome.state("test")["launch_params"]["breakpoints"], serde_json::json!({"before": ["LOOP.sh"]}));
    // Resumed without flags: LOOP runs once, and the agent stops before it again.
    let outcome = outcome.rerun(["resume", "test"]);
    outcome.status(3);
    assert_eq!(outcome.state("test")["steps_completed"], 2);
    // Cleared on resume: the run goes to its end.
    let outcome = outcome.rerun(["resume", "test", "--clear-breakpoints"]);
    outcome.status(0).stdout("looped 3\n");
}

#[test]
fn step_stops_every_agent_after_each_of_its_steps() {
    let outcome = looping().run_workflow(&["--step"]);
    outcome.status(3);
    let state = outcome.state("test");
    assert_eq!(state["steps_completed"], 1);
    assert_eq!(agent(&state, "main")["error"], "stopped after START.sh (--step)");
    let outcome = outcome.rerun(["resume", "test"]);
    outcome.status(3);
    assert_eq!(agent(&outcome.state("test"), "main")["error"], "stopped after LOOP.sh (--step)");
    let outcome = outcome.rerun(["resume", "test", "--clear-breakpoints", "--break-after", "START"]);
    outcome.status(0).stdout("looped 3\n");
}

#[test]
fn break_after_stops_an_agent_before_its_next_state() {
    let outcome = looping().run_workflow(&["--break-after", "START"]);
    outcome.status(3);
    let main = agent(&outcome.state("test"), "main").clone();
    assert_eq!(
        (main["current_state"].as_str(), main["error"].as_str()),
        (Some("LOOP.sh"), Some("stopped after START.sh (--break-after)"))
    );
    outcome.rerun(["resume", "test"]).status(0).stdout("looped 3\n");
}

#[test]
fn a_breakpoint_on_a_state_that_does_not_exist_is_refused_with_a_did_you_mean() {
    let outcome = looping().run_workflow(&["--break-before", "LOOPP"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: invalid value `LOOPP` for --break-before: state `LOOPP` not found in workflow `[ROOT]/wf` (looked \
         for LOOPP.md, LOOPP.sh); did you mean `LOOP.sh`?"
    );
    assert!(!outcome.run_dir("test").exists(), "nothing was created");
}

#[test]
fn resume_agent_input_replaces_the_pending_input_and_the_trace_records_the_edit() {
    let outcome = forking().run_workflow(&["--break-before", "A"]);
    outcome.status(3);
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--input", "edited by hand"]);
    outcome.status(0).stdout("main got: edited by hand\n");
    let edits = outcome.events_of("test", "AgentEdited");
    assert_eq!(edits.len(), 1, "{edits:?}");
    let edit = &edits[0];
    assert_eq!(
        (&edit["agent_id"], &edit["state"], &edit["field"], &edit["before"], &edit["after"], &edit["by"]),
        (&"main".into(), &"A.sh".into(), &"input".into(), &Value::Null, &"edited by hand".into(), &"resume".into())
    );
    assert!(outcome.stderr.contains("[main] edited before A.sh by resume"), "the console says so: {}", outcome.stderr);
    assert!(outcome.stderr.contains(": input (none) -> \"edited by hand\""), "{}", outcome.stderr);
}

#[test]
fn resume_agent_goto_sends_the_agent_elsewhere_checked_against_its_workflow() {
    let test = forking().file("B.sh", "echo \"<result>went to B with ${BATON_INPUT:-nothing}</result>\"\n");
    let outcome = test.run_workflow(&["--break-before", "A"]);
    outcome.status(3);
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--goto", "C"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: --goto C: agent `main` cannot reach it from its workflow: state `C` not found in workflow \
         `[ROOT]/wf` (looked for C.md, C.sh); did you mean `A.sh`?"
    );
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--goto", "B", "--input", "x"]);
    outcome.status(0).stdout("went to B with x\n");
    let fields: Vec<Value> =
        outcome.events_of("test", "AgentEdited").iter().map(|edit| edit["field"].clone()).collect();
    assert_eq!(fields, ["state", "input"]);
}

#[test]
fn an_edit_of_an_agent_that_is_not_paused_is_refused_with_exit_5_and_changes_nothing() {
    let outcome = Test::new().file("START.sh", "exit 7\n").run_workflow(&["--attempts", "1"]);
    outcome.status(1);
    let before = std::fs::read_to_string(outcome.run_dir("test").join("state.json")).unwrap_or_default();
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--input", "x"]);
    outcome.status(5);
    assert_eq!(
        outcome.error_message(),
        "error: agent `main` of run `test` is not paused (running), so it cannot be edited: only an agent stopped \
         at a breakpoint or paused can be (another client may have continued it first); `baton status test` shows \
         where it is"
    );
    let after = std::fs::read_to_string(outcome.run_dir("test").join("state.json")).unwrap_or_default();
    assert_eq!(before, after, "nothing was changed");
    let outcome = outcome.rerun(["resume", "test", "--agent", "mian", "--input", "x"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run `test` has no agent `mian` (did you mean `main`?); its agents are: main"
    );
}

/// A worker that ran to its end is not an unknown agent: editing it is the same
/// conflict as editing one that runs (regression: the daemon answered 404 to a
/// second client once the first had let the agent finish).
#[test]
fn an_edit_of_an_agent_that_terminated_is_a_conflict_not_an_unknown_agent() {
    let outcome = forking().run_workflow(&["--break-before", "A"]);
    outcome.status(3);
    assert_eq!(outcome.state("test")["terminated"][0]["id"], "main_w1");
    let outcome = outcome.rerun(["resume", "test", "--agent", "main_w1", "--input", "x"]);
    outcome.status(5);
    assert_eq!(
        outcome.error_message(),
        "error: agent `main_w1` of run `test` is not paused (terminated), so it cannot be edited: only an agent \
         stopped at a breakpoint or paused can be (another client may have continued it first); `baton status test` \
         shows where it is"
    );
}

#[test]
fn prompt_file_replaces_the_next_prompt_once_and_is_refused_for_a_script() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[S]] Say hello to {{input}}.\n")
        .file("S2.sh", "echo '<result>s2</result>'\n");
    crate::support::fake_claude::FakeClaude::at(test.root()).rule(
        "any",
        "",
        crate::support::fake_claude::Reply::text("<result>hi</result>"),
    );
    let outcome = test.run_workflow(&["--input", "Ada", "--break-before", "START"]);
    outcome.status(3);
    let prompt = outcome.root().join("mine.txt");
    std::fs::write(&prompt, "My own prompt, sent as written: {{input}}\n").expect("write");
    let prompt_arg = prompt.to_string_lossy().into_owned();
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--goto", "S2", "--prompt-file", &prompt_arg]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: --prompt-file replaces a prompt, but agent `main` runs script `S2.sh` next; edit its input instead \
         (or --goto a prompt state)"
    );
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--prompt-file", &prompt_arg]);
    outcome.status(0).stdout("hi\n");
    let calls = crate::support::fake_claude::FakeClaude::at(outcome.root()).calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].prompt, "My own prompt, sent as written: {{input}}\n");
    let state = outcome.state("test");
    assert!(state["agents"].as_array().is_some_and(Vec::is_empty), "{state}");
    let edits = outcome.events_of("test", "AgentEdited");
    assert_eq!((edits.len(), &edits[0]["field"]), (1, &"prompt".into()));
}

#[test]
fn report_and_logs_say_that_the_history_was_edited() {
    let outcome = forking().run_workflow(&["--break-before", "A"]);
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--input", "by hand"]);
    outcome.status(0);
    let outcome = outcome.rerun(["report", "test"]);
    outcome.status(0);
    assert!(
        outcome.stdout.ends_with(
            "\nedited by hand (this history is not the workflow's alone):\n  main before A.sh: input (by resume)\n"
        ),
        "{}",
        outcome.stdout
    );
    let outcome = outcome.rerun(["report", "test", "--json"]);
    let report: Value = serde_json::from_str(&outcome.stdout).expect("json");
    assert_eq!(
        report["edits"],
        serde_json::json!([{"agent": "main", "state": "A.sh", "field": "input", "by": "resume"}])
    );
    let outcome = outcome.rerun(["logs", "test"]);
    outcome.status(0);
    assert!(outcome.stdout.contains("[main] edited before A.sh by resume"), "{}", outcome.stdout);
}

fn send(child: &mut std::process::Child, line: &str) {
    use std::io::Write;
    let stdin = child.stdin.as_mut().expect("stdin is open");
    writeln!(stdin, "{line}").and_then(|()| stdin.flush()).expect("write a control line");
}

/// `forking()` run under `--on-ask json` (as `baton serve` drives it), once its first
/// agent has stopped before `A`.
fn supervised_run_stopped_before_a() -> (Test, std::process::Child) {
    let test = forking();
    let child = test.spawn_piped(&["run", "wf", "--run-id", "test", "--on-ask", "json", "-q", "--break-before", "A"]);
    test.wait_for_event("test", |event| event["type"] == "AgentPaused" && event["reason"] == "breakpoint");
    (test, child)
}

#[test]
fn under_on_ask_json_a_stopped_agent_keeps_the_run_live_until_its_supervisor_continues_it() {
    let (test, mut child) = supervised_run_stopped_before_a();
    // Live: `status` shows the agent stopped while its run is driven.
    let status = test.command(&["status".to_string(), "test".to_string()]).output().expect("status");
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(status.starts_with("run test: running (driven by baton pid"), "{status}");
    assert!(status.contains("main  at A.sh  [paused (breakpoint)]"), "{status}");
    send(&mut child, r#"{"continue_agent": {"agent_id": "main", "input": "from the supervisor", "by": "serve"}}"#);
    // A second editor of the same agent loses: it is no longer paused.
    send(&mut child, r#"{"continue_agent": {"agent_id": "main", "input": "too late"}}"#);
    let ignored = test.wait_for_event("test", |event| event["type"] == "ControlIgnored");
    let reason = ignored["reason"].as_str().unwrap_or_default();
    assert!(
        reason == "agent `main` is not paused (running)" || reason == "agent `main` is not paused (terminated)",
        "{reason}"
    );
    let output = child.wait_with_output().expect("the run ends");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "main got: from the supervisor\n");
    let edits = test.events_so_far("test").into_iter().filter(|event| event["type"] == "AgentEdited").count();
    assert_eq!(edits, 1);
}

#[test]
fn a_supervisor_sets_breakpoints_on_a_live_run_and_the_run_pauses_when_its_input_ends() {
    let test = Test::new()
        .file(
            "START.sh",
            "while [ ! -f \"$BATON_TASK_FOLDER/../go\" ]; do sleep 0.02; done\necho '<goto>LOOP</goto>'\n",
        )
        .file("LOOP.sh", "echo '<goto>LOOP</goto>'\n");
    let mut child = test.spawn_piped(&["run", "wf", "--run-id", "test", "--on-ask", "json", "-q"]);
    test.wait_for_event("test", |event| event["type"] == "StateStarted");
    send(&mut child, r#"{"breakpoints": {"before": ["LOPP"]}}"#);
    let refused = test.wait_for_event("test", |event| event["type"] == "ControlIgnored");
    assert!(refused["reason"].as_str().is_some_and(|reason| reason.ends_with("did you mean `LOOP.sh`?")), "{refused}");
    send(&mut child, r#"{"breakpoints": {"before": ["LOOP"]}}"#);
    send(&mut child, "marker");
    test.wait_for_event("test", |event| event["type"] == "ControlIgnored" && event["line"] == "marker");
    // Saved before any agent reaches it.
    let saved = std::fs::read_to_string(test.root().join(".baton/runs/test/state.json")).unwrap_or_default();
    let saved: Value = serde_json::from_str(&saved).expect("a snapshot");
    assert_eq!(saved["launch_params"]["breakpoints"], serde_json::json!({"before": ["LOOP.sh"]}));
    std::fs::write(test.root().join(".baton/tasks/test/go"), "").expect("open the gate");
    test.wait_for_event("test", |event| event["type"] == "AgentPaused" && event["state"] == "LOOP.sh");
    send(&mut child, r#"{"continue_agent": {"agent_id": "main"}}"#);
    let first = test.wait_for_event("test", |event| event["type"] == "AgentPaused")["seq"].as_u64();
    test.wait_for_event("test", |event| event["type"] == "AgentPaused" && event["seq"].as_u64() > first);
    // Its input ends: nothing else can run, so the run ends paused.
    drop(child.stdin.take());
    let output = child.wait_with_output().expect("the run ends");
    assert_eq!(output.status.code(), Some(3), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn logs_next_shows_a_stopped_scripts_command_line_and_environment() {
    let outcome = looping().run_workflow(&["--break-before", "LOOP"]);
    outcome.status(3);
    let outcome = outcome.rerun(["logs", "test", "--next", "main"]);
    outcome.status(0);
    assert_eq!(
        crate::support::normalize(&outcome.stdout, outcome.root()),
        "agent main runs LOOP.sh next\n\
         command: bash [ROOT]/wf/LOOP.sh\n\
         cwd: [ROOT]\n\
         environment (besides baton's own):\n\
         \x20 BATON_AGENT_ID=\"main\"\n\
         \x20 BATON_TASK_FOLDER=\"[ROOT]/.baton/tasks/test/main\"\n\
         \x20 BATON_WORKFLOW_ID=\"test\"\n\
         \x20 RAYMOND_AGENT_ID=\"main\"\n\
         \x20 RAYMOND_TASK_FOLDER=\"[ROOT]/.baton/tasks/test/main\"\n\
         \x20 RAYMOND_WORKFLOW_ID=\"test\"\n"
    );
    let outcome = outcome.rerun(["logs", "test", "--next", "mian"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run `test` has no agent `mian` (did you mean `main`?); its agents are: main"
    );
}

#[test]
fn status_and_logs_next_show_a_stopped_prompts_session_and_rendered_prompt() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[S]] Say hello to {{input}}.\nTask folder: {{task_folder}}.\n");
    let outcome = test.run_workflow(&["--input", "Ada", "--break-before", "START"]);
    outcome.status(3);
    let next = outcome.rerun(["logs", "test", "--next", "main"]);
    next.status(0);
    assert_eq!(
        crate::support::normalize(&next.stdout, next.root()),
        "agent main runs START.md next\n\
         input: \"Ada\"\n\
         backend: Claude Code (model sonnet)\n\
         session: a fresh conversation\n\
         prompt:\n\
         \x20 [[S]] Say hello to Ada.\n\
         \x20 Task folder: [ROOT]/.baton/tasks/test/main.\n"
    );
    let status = next.rerun(["status", "test"]);
    let shown = crate::support::normalize(&status.stdout, status.root());
    assert!(
        shown.ends_with(
            "  main  at START.md  [paused (breakpoint)]\n\
             \x20     cwd: [ROOT]\n\
             \x20     breakpoint: stopped before START.md (--break-before)\n\
             \x20     input: \"Ada\"\n\
             \x20     backend: Claude Code (model sonnet)\n\
             \x20     session: a fresh conversation\n\
             \x20     prompt:\n\
             \x20       [[S]] Say hello to Ada.\n\
             \x20       Task folder: [ROOT]/.baton/tasks/test/main.\n"
        ),
        "{shown}"
    );
    assert!(shown.contains("\nbreakpoints: --break-before START.md\n"), "{shown}");
}

/// `baton test` (docs/testing.md "Stops"): a workflow's tests cover its debugging paths.
fn offline_stepping() -> Test {
    Test::new()
        .env("BATON_CLAUDE_BIN", "/nonexistent/claude")
        .file("START.md", "Plan {{input}}.\n")
        .file("REVIEW.md", "Review {{input}}.\n")
        .file("DONE.sh", "echo \"<result>done: $BATON_INPUT</result>\"\n")
}

#[test]
fn baton_test_asserts_a_stop_at_a_breakpoint_reads_the_next_prompt_and_continues_with_an_edit() {
    offline_stepping()
        .write(
            "wf/tests/debug.yaml",
            "description: stopped before the review, its input changed\ninput: a flag\nbreak_before: [REVIEW]\n\
             replies:\n  START: [\"<goto input=\\\"draft 1\\\">REVIEW</goto>\"]\n  REVIEW: [\"<goto input=\\\"ok\\\">DONE</goto>\"]\n\
             stops:\n  - at: REVIEW\n    prompt_contains: Review draft 1.\n    input: draft 2\n\
             expect:\n  outcome: completed\n  result: \"done: ok\"\n  path: [START, REVIEW, DONE]\n",
        )
        .args(["test", "wf"])
        .run()
        .status(0)
        .stdout("PASS wf/tests/debug.yaml: stopped before the review, its input changed\n1 passed, 0 failed\n");
}

#[test]
fn baton_test_fails_a_stop_that_is_not_the_expected_one_and_says_where_the_run_stopped() {
    let outcome = offline_stepping()
        .write(
            "wf/tests/wrong.yaml",
            "input: a flag\nbreak_before: [REVIEW]\n\
             replies:\n  START: [\"<goto input=\\\"draft 1\\\">REVIEW</goto>\"]\n  REVIEW: [\"<goto input=\\\"ok\\\">DONE</goto>\"]\n\
             stops:\n  - at: DONE\n",
        )
        .write(
            "wf/tests/prompt.yaml",
            "input: a flag\nbreak_before: [REVIEW]\n\
             replies:\n  START: [\"<goto input=\\\"draft 1\\\">REVIEW</goto>\"]\n  REVIEW: [\"<goto input=\\\"ok\\\">DONE</goto>\"]\n\
             stops:\n  - {at: REVIEW, prompt_contains: draft 2}\n  - at: DONE\n",
        )
        .write(
            "wf/tests/unused.yaml",
            "input: a flag\nreplies:\n  START: [\"<goto input=\\\"x\\\">REVIEW</goto>\"]\n  REVIEW: [\"<goto>DONE</goto>\"]\n\
             stops:\n  - at: REVIEW\nexpect:\n  outcome: completed\n",
        )
        .write("wf/tests/typo.yaml", "break_before: [REVEIW]\n")
        .args(["test", "wf"])
        .run();
    outcome.status(1);
    let stdout = crate::support::normalize(&outcome.stdout, outcome.root());
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "FAIL wf/tests/prompt.yaml: stop 1: expected main's next prompt before REVIEW.md to contain \"draft 2\", got \
             \"Review draft 1.\\n\"",
            "FAIL wf/tests/typo.yaml:1: `REVEIW`: state `REVEIW` not found in workflow `[ROOT]/wf` (looked for \
             REVEIW.md, REVEIW.sh); did you mean `REVIEW.md`?",
            "FAIL wf/tests/unused.yaml: the run stopped at fewer breakpoints than the test continues: 1 stop(s) left \
             unused",
            "FAIL wf/tests/wrong.yaml: stop 1: expected agent main stopped before DONE.sh, but it stopped before REVIEW.md",
            "0 passed, 4 failed",
        ]
    );
}

#[test]
fn a_rerun_of_an_edited_history_says_so_and_its_trace_keeps_the_edit() {
    let outcome = looping().run_workflow(&["--break-before", "LOOP"]);
    outcome.status(3);
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--input", "by hand", "--clear-breakpoints"]);
    outcome.status(0).stdout("looped 3\n");
    let commits: Vec<u64> =
        outcome.events_of("test", "TransitionOccurred").iter().filter_map(|event| event["commit"].as_u64()).collect();
    // The resume folded the journal up to the edit: the first step after it is the
    // earliest a rerun starts from, and its history holds the edit.
    let last = commits[1];
    let after = outcome.rerun(["rerun", "test", "--from", &last.to_string(), "--run-id", "late", "-q"]);
    after.status(0);
    assert!(
        after.stderr.contains(&format!(
            "note: the history of run test up to step {last} was edited by hand: main before LOOP.sh: input (by resume)"
        )),
        "{}",
        after.stderr
    );
    assert_eq!(after.events_of("late", "AgentEdited").len(), 1);
}

#[test]
fn a_sigkill_while_an_agent_is_stopped_leaves_a_run_that_resume_continues_past_the_breakpoint() {
    // The stop is published only once it is journalled: kill the run right after.
    let (test, mut child) = supervised_run_stopped_before_a();
    child.kill().expect("SIGKILL");
    let _ = child.wait();
    let outcome = test.args(["status", "test", "--json"]).run();
    let state: Value = serde_json::from_str(&outcome.stdout).expect("state");
    assert_eq!(agent(&state, "main")["pause_reason"], "breakpoint");
    assert_eq!(state["launch_params"]["breakpoints"], serde_json::json!({"before": ["A.sh"]}));
    let outcome = outcome.rerun(["resume", "test", "--agent", "main", "--input", "after the crash"]);
    outcome.status(0).stdout("main got: after the crash\n");
}

/// `baton serve` (docs/serve.md "Step by step"): a run it starts with breakpoints stays
/// live with its agent stopped; a client continues it with an edit; a second client
/// continuing the same stop gets 409.
#[test]
fn the_daemon_starts_a_run_with_breakpoints_and_one_of_two_clients_continues_the_stopped_agent() {
    use crate::support::serve::Daemon;
    let test = forking();
    let daemon = Daemon::start(&test, &[]);
    let refused = daemon.post("/api/v1/runs", &serde_json::json!({"workflow": "wf", "break_before": ["AA"]}));
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(
        refused.json()["error"].as_str().is_some_and(|error| error.ends_with("did you mean `A.sh`?")),
        "{}",
        refused.body
    );
    daemon.start_run("wf", serde_json::json!({"run_id": "s", "break_before": ["A"]}));
    let stopped = daemon.wait_for_run("s", "main stopped", |run| {
        run["run"]["agents"].as_array().into_iter().flatten().any(|agent| agent["pause_reason"] == "breakpoint")
    });
    assert_eq!(stopped["live"], true, "a stopped agent keeps a served run live");
    let nobody = daemon.post("/api/v1/runs/s/agents/mian/continue", &serde_json::json!({}));
    assert_eq!(
        (nobody.status, nobody.json()["error"].as_str()),
        (404, Some("run `s` has no agent `mian` (did you mean `main`?)"))
    );
    let far = daemon.post("/api/v1/runs/s/agents/main/continue", &serde_json::json!({"goto": "C"}));
    assert_eq!(far.status, 400, "{}", far.body);
    let first = daemon.post("/api/v1/runs/s/agents/main/continue", &serde_json::json!({"input": "from the page"}));
    assert_eq!(first.status, 202, "{}", first.body);
    assert_eq!(first.json()["command"], "baton resume s --agent main --input 'from the page'");
    let second = daemon.post("/api/v1/runs/s/agents/main/continue", &serde_json::json!({"input": "too late"}));
    assert_eq!(second.status, 409, "{}", second.body);
    let done = daemon.wait_for_status("s", "completed");
    let results: Vec<&str> = done["run"]["terminated"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|agent| agent["result"].as_str())
        .collect();
    assert!(results.contains(&"main got: from the page"), "{results:?}");
    let edits = test.events_so_far("s").into_iter().filter(|event| event["type"] == "AgentEdited").collect::<Vec<_>>();
    assert_eq!((edits.len(), &edits[0]["by"]), (1, &Value::from("serve")));
    // A client that comes after the agent ran to its end is refused the same way as
    // one that comes while it runs: whichever the second client above met.
    let late = daemon.post("/api/v1/runs/s/agents/main/continue", &serde_json::json!({"input": "much too late"}));
    assert_eq!(
        (late.status, late.json()["error"].as_str()),
        (409, Some("agent `main` is not paused (terminated)")),
        "{}",
        late.body
    );
}

#[test]
fn a_join_waits_for_a_worker_stopped_at_a_breakpoint() {
    let test = Test::new()
        .file("START.sh", "echo '<fork item=\"a\">W</fork><fork item=\"b\">V</fork><join>AGG</join>'\n")
        .file("W.sh", "echo \"<result>w $item</result>\"\n")
        .file("V.sh", "echo \"<result>v $item</result>\"\n")
        .file("AGG.sh", "echo \"<result>$(cat \"$BATON_RESULTS\" | tr -d ' \\n')</result>\"\n");
    let outcome = test.run_workflow(&["--break-before", "V"]);
    outcome.status(3);
    let state = outcome.state("test");
    assert_eq!(agent(&state, "main")["status"], "joining", "{state}");
    assert_eq!(agent(&state, "main_v2")["pause_reason"], "breakpoint", "{state}");
    let outcome = outcome.rerun(["resume", "test"]);
    outcome.status(0);
    assert!(outcome.stdout.contains(r#""result":"vb""#), "{}", outcome.stdout);
}
