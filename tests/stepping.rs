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
