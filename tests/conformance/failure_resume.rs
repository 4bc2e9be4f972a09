//! A fatal error in one agent lets running siblings finish their step, and a resume
//! re-runs only the failed step (A14, R8.4, §16 item 51 for scripts).

use super::common::{
    RUN, agent, assert_fatal, emit, fatal_line, started, state, terminated_result, transitions, with_wait_for,
};
use crate::support::Test;

/// How many times `agent:state` started, over every run of the project.
fn starts(all: &[String], step: &str) -> usize {
    all.iter().filter(|started| *started == step).count()
}

#[test]
fn a14_fatal_error_lets_a_running_sibling_finish_and_resume_reruns_only_the_failed_step() {
    // FAIL fails only once the worker is mid-step; the worker finishes its step only
    // after the failure is in the trace, so its transition is applied after the fatal error.
    let fail = with_wait_for("wait_for worker_started\necho 'boom' >&2\nexit 1\n");
    let worker = with_wait_for(
        r#"touch worker_started
for _ in $(seq 1 150); do
  grep -q '"type":"ErrorOccurred"' .baton/runs/test/events.jsonl && break
  sleep 0.1
done
echo '<goto>W2</goto>'
"#,
    );
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<fork next="FAIL">W</fork>"#))
        .file("FAIL.sh", &fail)
        .file("W.sh", &worker)
        .file("W2.sh", &emit("<result>worker done</result>"))
        .run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "FAIL.sh",
        "ScriptError",
        "script `FAIL.sh` failed with exit code 1; its stderr:\nboom",
    );
    // The sibling's step completed and was recorded; nothing new was launched.
    assert!(transitions(&outcome).contains(&"main_w1:W.sh -goto-> W2.sh".to_string()));
    assert_eq!(starts(&started(&outcome), "main_w1:W2.sh"), 0, "no step starts after a fatal error");
    let saved = state(&outcome);
    assert_eq!(agent(&saved, "main")["current_state"], "FAIL.sh");
    assert_eq!(agent(&saved, "main_w1")["current_state"], "W2.sh");
    assert_eq!(saved["steps_completed"], 2);

    // Fix the failing script and resume.
    std::fs::write(outcome.root().join("wf/FAIL.sh"), "echo '<result>fixed</result>'\n").unwrap();
    let resumed = outcome.rerun(["resume", RUN]);
    resumed.status(0).stdout("fixed\n");
    let all = started(&resumed);
    assert_eq!(starts(&all, "main:START.sh"), 1);
    assert_eq!(starts(&all, "main_w1:W.sh"), 1);
    assert_eq!(starts(&all, "main:FAIL.sh"), 2);
    assert_eq!(starts(&all, "main_w1:W2.sh"), 1);
    let saved = state(&resumed);
    assert_eq!(saved["status"], "completed");
    assert_eq!(saved["terminated"].as_array().map(Vec::len), Some(2));
    assert_eq!(resumed.events_of(RUN, "WorkflowCompleted").len(), 1);
}

#[test]
fn r8_4_resume_after_a_failed_step_reruns_it_with_the_same_input() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<goto input="payload">B</goto>"#))
        .file("B.sh", "echo \"B got [$BATON_INPUT]\" >&2\nexit 5\n")
        .run_workflow(&[]);
    assert_fatal(
        &outcome,
        "main",
        "B.sh",
        "ScriptError",
        "script `B.sh` failed with exit code 5; its stderr:\nB got [payload]",
    );
    assert_eq!(agent(&state(&outcome), "main")["pending_result"], "payload");
    std::fs::write(outcome.root().join("wf/B.sh"), "echo \"<result>B got [$BATON_INPUT]</result>\"\n").unwrap();
    let resumed = outcome.rerun(["resume", RUN]);
    resumed.status(0).stdout("B got [payload]\n");
    let all = started(&resumed);
    assert_eq!(all, ["main:START.sh", "main:B.sh", "main:B.sh"]);
}

#[test]
fn a5_fork_attributes_and_input_survive_a_failed_first_step() {
    // The worker's first step fails; on resume it runs again and still sees its
    // fork attribute and input, which were persisted with the agent.
    let worker = "[ -e fixed ] || { echo 'not yet' >&2; exit 1; }\n\
                  echo \"<result>item=${item-unset} input=${BATON_INPUT-unset}</result>\"\n";
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<fork next="N" item="a" input="i">W</fork>"#))
        .file("W.sh", worker)
        .file("N.sh", &emit("<result>n</result>"))
        .run_workflow(&[]);
    outcome.status(1);
    outcome.stderr_contains(&fatal_line(
        "main_w1",
        "W.sh",
        "script `W.sh` failed with exit code 1; its stderr:\nnot yet",
    ));
    let saved = state(&outcome);
    assert_eq!(agent(&saved, "main_w1")["fork_attributes"], serde_json::json!({"item": "a"}));
    assert_eq!(agent(&saved, "main_w1")["pending_result"], "i");
    std::fs::write(outcome.root().join("fixed"), "").unwrap();
    let resumed = outcome.rerun(["resume", RUN]);
    resumed.status(0);
    assert_eq!(terminated_result(&state(&resumed), "main_w1"), "item=a input=i");
}

#[test]
fn a10_resume_keeps_the_launch_timeout() {
    let outcome = Test::new()
        .file("SLOW.sh", "sleep 3\necho '<result>too late</result>'\n")
        .args(["run", "wf/SLOW.sh", "--run-id", RUN, "--timeout", "1"])
        .run();
    let message = "script `SLOW.sh` produced no output for 1 second and was killed (timeout from --timeout flag)";
    assert_fatal(&outcome, "main", "SLOW.sh", "ScriptTimeout", message);
    let resumed = outcome.rerun(["resume", RUN]);
    resumed.status(1);
    let on_resume = "script `SLOW.sh` produced no output for 1 second and was killed \
                     (timeout from --timeout of the original `baton run`)";
    resumed.stderr_contains(&fatal_line("main", "SLOW.sh", on_resume));
}

#[test]
fn r8_13_resume_unpauses_and_reruns_the_paused_state() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork next=\"N1\">A</fork>\n<fork next=\"N2\">A</fork>"))
        .file("A.sh", &emit("<result>a</result>"))
        .file("N1.sh", &emit("<result>n1</result>"))
        .file("N2.sh", &emit("<result>n2</result>"))
        .run_workflow(&[]);
    outcome.status(3);
    std::fs::write(outcome.root().join("wf/START.sh"), emit("<fork next=\"N1\">A</fork>\n<fork next=\"N1\">A</fork>"))
        .unwrap();
    let resumed = outcome.rerun(["resume", RUN]);
    resumed.status(0).stdout("n1\n");
    let saved = state(&resumed);
    assert_eq!(saved["status"], "completed");
    assert_eq!(terminated_result(&saved, "main_a1"), "a");
    assert_eq!(terminated_result(&saved, "main_a2"), "a");
    assert_eq!(starts(&started(&resumed), "main:START.sh"), 2);
}
