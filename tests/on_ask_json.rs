//! `--on-ask json`: a supervisor (as `baton serve` does) drives a run as its child,
//! answering asks by their id and cancelling agents with JSON lines on stdin while the
//! rest of the run goes on. The tests play the supervisor: they write control lines
//! and wait on the trace (`events.jsonl`) and on files the scripts write.

use std::io::Write;
use std::process::Child;

use serde_json::{Value, json};

use crate::conformance::common::{emit, say, with_wait_for};
use crate::support::Test;

const RUN: &str = "t";

/// `baton run wf --run-id t --on-ask json -q`, its stdin a pipe.
fn start(test: &Test) -> Child {
    test.spawn_piped(&["run", "wf", "--run-id", RUN, "--on-ask", "json", "-q"])
}

fn send(child: &mut Child, line: &str) {
    let stdin = child.stdin.as_mut().expect("stdin is open");
    writeln!(stdin, "{line}").and_then(|()| stdin.flush()).expect("write a control line");
}

fn answer(child: &mut Child, ask_id: &str, text: &str) {
    send(child, &json!({"answer": {"ask_id": ask_id, "text": text}}).to_string());
}

/// Main asks `First?` while the worker it forked asks `Second?`; each answer is
/// its agent's result.
fn two_asks() -> Test {
    Test::new()
        .file("START.sh", &emit(r#"<fork next="ASK1">ASK2</fork>"#))
        .file("ASK1.sh", &emit(r#"<ask next="GOT1">First?</ask>"#))
        .file("ASK2.sh", &emit(r#"<ask next="GOT2">Second?</ask>"#))
        .file("GOT1.sh", &say("<result>first=$BATON_INPUT</result>"))
        .file("GOT2.sh", &say("<result>second=$BATON_INPUT</result>"))
}

/// Main forks a worker running `worker` (W.sh), then asks `Q?` (ASK.sh); the
/// answer is its result (GOT.sh).
fn worker_beside_an_ask(worker: &str) -> Test {
    Test::new()
        .file("START.sh", &emit(r#"<fork next="ASK">W</fork>"#))
        .file("W.sh", worker)
        .file("ASK.sh", &emit(r#"<ask next="GOT">Q?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"))
}

/// Main's ask still waits after all that happened: answer it with `text`, and the
/// run completes with `result` on stdout.
#[track_caller]
fn answer_main_last(test: &Test, mut child: Child, ask: &Value, text: &str, result: &str) -> Finished {
    assert_eq!(agent_state(test, "main")["status"], "asking", "main's ask still waits");
    answer(&mut child, ask_id(ask), text);
    let finished = finish(child);
    finished.completed_with(result);
    finished
}

fn cancel(child: &mut Child, agent_id: &str) {
    send(child, &json!({"cancel_agent": agent_id}).to_string());
}

/// Close stdin: the supervisor is gone.
fn close(child: &mut Child) {
    drop(child.stdin.take());
}

struct Finished {
    status: i32,
    stdout: String,
    stderr: String,
}

/// Wait for the run to end (stdin left as it is).
fn finish(child: Child) -> Finished {
    let output = child.wait_with_output().expect("wait for baton");
    Finished {
        status: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

impl Finished {
    /// Exit code 0, and exactly `stdout` (the result).
    #[track_caller]
    fn completed_with(&self, stdout: &str) {
        self.status(0);
        assert_eq!(self.stdout, stdout);
    }

    #[track_caller]
    fn status(&self, expected: i32) -> &Finished {
        assert_eq!(self.status, expected, "exit code\n--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr);
        self
    }
}

/// Wait for the ask whose prompt is `prompt`: its `AgentAsking` event.
#[track_caller]
fn asked(test: &Test, prompt: &str) -> Value {
    test.wait_for_event(RUN, |event| event["type"] == "AgentAsking" && event["prompt"] == prompt)
}

fn ask_id(event: &Value) -> &str {
    event["ask_id"].as_str().expect("an ask id")
}

fn agent_id(event: &Value) -> &str {
    event["agent_id"].as_str().expect("an agent id")
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> impl Iterator<Item = &'a Value> {
    events.iter().filter(move |event| event["type"] == kind)
}

/// The agent `id` of run `t` as `baton status --json` reads it.
fn agent_state(test: &Test, id: &str) -> Value {
    let output = test.command(&["status".into(), "--json".into(), RUN.into()]).output().expect("baton status");
    let state: Value = serde_json::from_slice(&output.stdout).expect("status --json prints JSON");
    state["agents"].as_array().into_iter().flatten().find(|agent| agent["id"] == id).cloned().unwrap_or(Value::Null)
}

/// `baton run wf --run-id t --on-ask pause -q`: the run stops at its asks (exit 2).
fn stop_to_ask(test: &Test) {
    let args = ["run", "wf", "--run-id", RUN, "--on-ask", "pause", "-q"].map(String::from);
    let output = test.command(&args).output().expect("baton run");
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
}

/// A worker that loops `steps` times once `go.flag` exists, then writes `worker.done`.
fn looping_worker(steps: u32) -> String {
    with_wait_for(&format!(
        "wait_for go.flag\nn=${{BATON_INPUT:-0}}\nif [ \"$n\" -lt {steps} ]; then\n  echo \"<goto input=\\\"$((n+1))\\\">W</goto>\"\n\
         else\n  touch worker.done\n  echo '<result>worker</result>'\nfi\n"
    ))
}

#[test]
fn an_ask_is_answered_by_its_id_while_another_agent_keeps_running() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<fork next="ASK">W</fork>"#))
        .file("W.sh", &looping_worker(3))
        .file("ASK.sh", &emit(r#"<ask next="GOT">Which colour?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    let mut child = start(&test);
    let ask = asked(&test, "Which colour?");
    // The worker takes its steps only now, while the question waits.
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    assert!(test.wait_for_file("worker.done"), "the worker did not run while the question waited");
    answer(&mut child, ask_id(&ask), "teal");
    finish(child).completed_with("answer=teal\n");
    let events = test.events_so_far(RUN);
    let worker_steps = of_type(&events, "TransitionOccurred").filter(|event| event["agent_id"] == "main_w1").count();
    assert_eq!(worker_steps, 4, "three gotos and a result");
    assert_eq!(of_type(&events, "ControlIgnored").count(), 0);
}

#[test]
fn two_asks_are_answered_in_the_reverse_order() {
    let test = two_asks();
    let mut child = start(&test);
    let first = asked(&test, "First?");
    let second = asked(&test, "Second?");
    answer(&mut child, ask_id(&second), "two");
    let worker = agent_id(&second).to_string();
    let terminated =
        test.wait_for_event(RUN, |event| event["type"] == "AgentTerminated" && event["agent_id"] == worker.as_str());
    assert_eq!(terminated["result"], "second=two");
    answer_main_last(&test, child, &first, "one", "first=one\n");
}

/// A cancelled worker finishes the step it is running — its outcome is committed —
/// and pauses instead of going on; `baton resume` continues it.
#[test]
fn a_cancelled_worker_finishes_its_step_pauses_and_resume_completes_it() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<fork next="MAIN">W</fork>"#))
        .file("MAIN.sh", &emit("<result>main</result>"))
        .file("W.sh", &with_wait_for("touch started.flag\nwait_for release.flag\necho '<goto>W2</goto>'\n"))
        .file("W2.sh", &emit("<result>w2 ran</result>"));
    let mut child = start(&test);
    assert!(test.wait_for_file("started.flag"), "the worker's step never started");
    cancel(&mut child, "main_w1");
    // Lines are obeyed in order: once this one is ignored, the cancel was taken.
    send(&mut child, "marker");
    test.wait_for_event(RUN, |event| event["type"] == "ControlIgnored" && event["line"] == "marker");
    std::fs::write(test.root().join("release.flag"), "").expect("flag");
    let finished = finish(child);
    finished.status(3);

    let events = test.events_so_far(RUN);
    let step = of_type(&events, "TransitionOccurred").find(|event| event["agent_id"] == "main_w1");
    assert_eq!(step.map(|step| &step["to_state"]), Some(&json!("W2.sh")), "the running step was committed");
    let paused: Vec<&Value> = of_type(&events, "AgentPaused").collect();
    assert_eq!(paused.len(), 1, "{paused:?}");
    assert_eq!(
        (&paused[0]["agent_id"], &paused[0]["state"], &paused[0]["reason"], &paused[0]["message"]),
        (&json!("main_w1"), &json!("W2.sh"), &json!("cancelled"), &json!("cancelled by request"))
    );
    let worker = agent_state(&test, "main_w1");
    assert_eq!((&worker["status"], &worker["pause_reason"]), (&json!("paused"), &json!("cancelled")));
    assert!(!of_type(&events, "StateStarted").any(|event| event["state"] == "W2.sh"), "W2 never started");

    let resumed = test.args(["resume", RUN, "-q"]).run();
    resumed.status(0).stdout("main\n");
    let terminated = resumed.events_of(RUN, "AgentTerminated");
    assert!(terminated.iter().any(|event| event["agent_id"] == "main_w1" && event["result"] == "w2 ran"));
}

/// An asking agent is paused at once; its ask no longer waits, and a resume runs the
/// state that asked again.
#[test]
fn a_cancelled_asking_agent_pauses_at_once_and_its_ask_is_dropped() {
    let test = worker_beside_an_ask(&with_wait_for("wait_for go.flag\necho '<result>w</result>'\n"));
    let mut child = start(&test);
    let ask = asked(&test, "Q?");
    cancel(&mut child, "main");
    let paused = test.wait_for_event(RUN, |event| event["type"] == "AgentPaused");
    assert_eq!((&paused["agent_id"], &paused["reason"]), (&json!("main"), &json!("cancelled")));
    answer(&mut child, ask_id(&ask), "too late");
    let ignored = test.wait_for_event(RUN, |event| event["type"] == "ControlIgnored");
    assert_eq!(ignored["reason"], format!("no ask `{}` waits for an answer", ask_id(&ask)));
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    finish(child).status(3);
    let main = agent_state(&test, "main");
    assert_eq!(
        (&main["status"], &main["pause_reason"], &main["current_state"]),
        (&json!("paused"), &json!("cancelled"), &json!("ASK.sh"))
    );
    assert!(main.get("ask").is_none(), "{main}");
    // The run keeps `json`; a resume with no supervisor (stdin closed) asks again and
    // stops as under `pause`.
    let resumed = test.args(["resume", RUN, "-q"]).run();
    resumed.status(2);
    let again: Value = serde_json::from_str(&resumed.stdout).expect("the ask as JSON");
    assert_eq!(again["prompt"], "Q?");
    assert_ne!(again["ask_id"], ask_id(&ask), "a new ask");
}

#[test]
fn lines_that_do_nothing_are_traced_with_the_reason_and_change_nothing() {
    let test = worker_beside_an_ask(&emit("<result>w</result>"));
    let mut child = start(&test);
    let ask = asked(&test, "Q?");
    test.wait_for_event(RUN, |event| event["type"] == "AgentTerminated" && event["agent_id"] == "main_w1");
    let long = format!(r#"{{"cancel_agent": "{}"}}"#, "x".repeat(300));
    let lines = [
        "garbage",
        "",
        r#"{"answer": {"ask_id": "ask_nobody", "text": "x"}}"#,
        r#"{"answer": {"ask_id": "ask_main_1"}}"#,
        r#"{"cancel_agent": "main_w9"}"#,
        r#"{"cancel_agent": "main_w1"}"#,
        r#"{"cancel": "main"}"#,
        &long,
    ];
    for line in lines {
        send(&mut child, line);
    }
    send(&mut child, "last");
    test.wait_for_event(RUN, |event| event["type"] == "ControlIgnored" && event["line"] == "last");
    let events = test.events_so_far(RUN);
    let ignored: Vec<(&str, &str)> = of_type(&events, "ControlIgnored")
        .map(|event| (event["line"].as_str().unwrap_or_default(), event["reason"].as_str().unwrap_or_default()))
        .collect();
    let cut: String = long.chars().take(200).collect();
    assert_eq!(
        ignored,
        [
            ("garbage", "not JSON: expected value at line 1 column 1"),
            (lines[2], "no ask `ask_nobody` waits for an answer"),
            (lines[3], "not a control line: missing field `text`"),
            (lines[4], "no agent `main_w9` in this run"),
            (lines[5], "agent `main_w1` has terminated"),
            (
                lines[6],
                "not a control line: unknown variant `cancel`, expected one of `answer`, `cancel_agent`, \
                 `continue_agent`, `breakpoints`",
            ),
            (cut.as_str(), format!("no agent `{}` in this run", "x".repeat(300)).as_str()),
            ("last", "not JSON: expected value at line 1 column 1"),
        ]
    );
    assert_eq!(of_type(&events, "AgentPaused").count(), 0);
    answer_main_last(&test, child, &ask, "ok", "answer=ok\n");
}

/// A supervisor that goes away leaves no run waiting for it: the asks that wait stop
/// the run as under `--on-ask pause` (exit 2, the ask on stdout).
#[test]
fn the_end_of_stdin_with_an_ask_waiting_stops_the_run_as_asking() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT">Anyone?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    let mut child = start(&test);
    let ask = asked(&test, "Anyone?");
    close(&mut child);
    let finished = finish(child);
    finished.status(2);
    let printed: Value = serde_json::from_str(&finished.stdout).expect("the ask as JSON");
    assert_eq!((&printed["status"], &printed["ask_id"]), (&json!("asking"), &ask["ask_id"]));
    let status = test.command(&["status".into(), "--json".into(), RUN.into()]).output().expect("status");
    let state: Value = serde_json::from_slice(&status.stdout).expect("JSON");
    assert_eq!(state["status"], "asking");
    test.args(["answer", RUN, "yes", "-q"]).run().status(0).stdout("answer=yes\n");
}

/// With no ask waiting, the end of stdin does not stop the run: it goes on, and a
/// later ask stops it as under `--on-ask pause`.
#[test]
fn the_end_of_stdin_with_no_ask_waiting_lets_the_run_go_on_until_it_asks() {
    let test = Test::new()
        .file("START.sh", &with_wait_for("wait_for go.flag\necho '<goto>MID</goto>'\n"))
        .file("MID.sh", &emit("<goto>ASK</goto>"))
        .file("ASK.sh", &emit(r#"<ask next="GOT">Later?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    let mut child = start(&test);
    close(&mut child);
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    let finished = finish(child);
    finished.status(2);
    let printed: Value = serde_json::from_str(&finished.stdout).expect("the ask as JSON");
    assert_eq!(printed["prompt"], "Later?");
    let events = test.events_so_far(RUN);
    assert!(of_type(&events, "TransitionOccurred").any(|event| event["from_state"] == "MID.sh"), "MID ran");
}

/// Every waiting ask's timeout runs, not only the first one's (A11).
#[test]
fn the_second_waiting_ask_times_out_while_the_first_still_waits() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<fork next="ASK1">W</fork>"#))
        .file("W.sh", &with_wait_for("wait_for go.flag\necho '<goto>ASK2</goto>'\n"))
        .file("ASK1.sh", &emit(r#"<ask next="GOT1" timeout="1h">First?</ask>"#))
        .file("ASK2.sh", &emit(r#"<ask next="GOT2" timeout="1s" timeout_next="LATE">Second?</ask>"#))
        .file("GOT1.sh", &say("<result>first=$BATON_INPUT</result>"))
        .file("GOT2.sh", &say("<result>second=$BATON_INPUT</result>"))
        .file("LATE.sh", &say("<result>late [$BATON_INPUT]</result>"));
    let child = start(&test);
    let first = asked(&test, "First?");
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    asked(&test, "Second?");
    let terminated =
        test.wait_for_event(RUN, |event| event["type"] == "AgentTerminated" && event["agent_id"] == "main_w1");
    assert_eq!(terminated["result"], "late []");
    let finished = answer_main_last(&test, child, &first, "one", "first=one\n");
    assert!(!finished.stderr.contains("still waiting"), "no countdown: {}", finished.stderr);
}

/// `baton resume RUN --on-ask json` asks the waiting asks again (their events are
/// published anew) and takes the answer on stdin, instead of printing the ask.
#[test]
fn a_resume_in_json_mode_asks_again_and_takes_the_answer_on_stdin() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT">Colour?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    stop_to_ask(&test);
    let mut child = test.spawn_piped(&["resume", RUN, "--on-ask", "json", "-q"]);
    let started = test.wait_for_event(RUN, |event| event["type"] == "WorkflowStarted" && event["resumed"] == true);
    let seq = started["seq"].as_u64().unwrap_or_default();
    let again = test
        .wait_for_event(RUN, |event| event["type"] == "AgentAsking" && event["seq"].as_u64().unwrap_or_default() > seq);
    assert_eq!(again["prompt"], "Colour?");
    answer(&mut child, ask_id(&again), "teal");
    finish(child).completed_with("answer=teal\n");
}

/// `--ask ID --input TEXT` answers one ask first; the others wait on stdin.
#[test]
fn a_resume_answers_its_input_first_then_waits_on_stdin_for_the_others() {
    let test = two_asks();
    stop_to_ask(&test);
    let first = asked(&test, "First?");
    let second = asked(&test, "Second?");
    let mut child =
        test.spawn_piped(&["resume", RUN, "--ask", ask_id(&second), "--input", "two", "--on-ask", "json", "-q"]);
    let worker = agent_id(&second).to_string();
    test.wait_for_event(RUN, |event| event["type"] == "AgentTerminated" && event["agent_id"] == worker.as_str());
    let asked_again: Vec<Value> =
        test.events_so_far(RUN).into_iter().filter(|event| event["type"] == "AgentAsking").collect();
    assert_eq!(asked_again.len(), 3, "the first ask is asked again, not the answered one: {asked_again:?}");
    assert_eq!(asked_again[2]["ask_id"], first["ask_id"]);
    answer(&mut child, ask_id(&first), "one");
    finish(child).completed_with("first=one\n");
    let events = test.events_so_far(RUN);
    assert!(of_type(&events, "AgentTerminated").any(|event| event["result"] == "second=two"));
}
