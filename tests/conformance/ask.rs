//! `<ask>` and its lifecycle with script states (R3.24–R3.28, R11.1–R11.5; A7, A8, A11).

use serde_json::Value;

use super::common::{RUN, agent, emit, say, state, str_of};
use crate::support::Test;

/// START asks; the answer goes to GOT, which reports it with its ask id.
fn asking_workflow() -> Test {
    Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" timeout="1d">Which colour?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"))
}

fn ask_of(stdout: &str) -> Value {
    serde_json::from_str(stdout.trim()).unwrap_or_else(|error| panic!("ask JSON on stdout ({error}): {stdout:?}"))
}

#[test]
fn r11_4_under_pause_the_run_exits_2_with_the_ask_on_stdout_and_r11_5_resume_answers_it() {
    let outcome = asking_workflow().run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    let ask = ask_of(&outcome.stdout);
    assert_eq!(ask["status"], "asking");
    assert_eq!(ask["agent_id"], "main");
    assert_eq!(ask["prompt"], "Which colour?");
    assert_eq!(ask["next_state"], "GOT.sh");
    assert_eq!(ask["pending_count"], 0);
    assert!(str_of(&ask["ask_id"]).starts_with("ask_main_"));
    outcome.stderr_contains("asks: Which colour?");
    assert_eq!(state(&outcome)["status"], "asking");
    // R11.5: without an answer nothing runs, and the same ask is printed again.
    let again = outcome.rerun(["resume", RUN]);
    again.status(2);
    assert_eq!(ask_of(&again.stdout)["ask_id"], ask["ask_id"]);
    let answered = again.rerun(["resume", RUN, "--input", "teal", "-q"]);
    answered.status(0).stdout("answer=teal\n");
}

#[test]
fn baton_answer_is_resume_with_input_and_can_name_the_ask() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT">Name?</ask>"#))
        .file("GOT.sh", &emit(r#"<goto input="x">AFTER</goto>"#))
        .file("AFTER.sh", &say("<result>done</result>"))
        .run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    let ask_id = str_of(&ask_of(&outcome.stdout)["ask_id"]);
    let wrong = outcome.rerun(["answer", RUN, "--ask", "ask_nope", "ada"]);
    wrong.status(1);
    assert_eq!(
        wrong.error_message(),
        format!("error: run `{RUN}` has no ask `ask_nope` waiting; the asks waiting are: {ask_id}")
    );
    wrong.rerun(["answer", RUN, "--ask", &ask_id, "ada", "-q"]).status(0).stdout("done\n");
}

#[test]
fn r11_3_under_reject_an_ask_pauses_the_agent_with_the_reason() {
    let outcome = asking_workflow().run_workflow(&[]);
    outcome.status(3);
    let main = agent(&state(&outcome), "main").clone();
    assert_eq!(main["status"], "paused");
    assert_eq!(main["pause_reason"], "ask_rejected");
    assert_eq!(
        str_of(&main["error"]),
        format!(
            "state `START.sh` produced <ask> but --on-ask=reject is in effect; resume with `baton resume {RUN} \
             --on-ask pause` to let the workflow ask"
        )
    );
    // Following the advice: the step runs again and asks.
    let outcome = outcome.rerun(["resume", RUN, "--on-ask", "pause"]);
    outcome.status(2);
    assert_eq!(ask_of(&outcome.stdout)["prompt"], "Which colour?");
}

#[test]
fn r11_5_several_askers_are_answered_earliest_ask_first() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork next=\"WAIT\">A</fork>\n<fork>B</fork>"))
        .file("A.sh", &emit(r#"<ask next="SAY">A?</ask>"#))
        .file("B.sh", &emit(r#"<ask next="SAY">B?</ask>"#))
        .file("SAY.sh", &say("<result>$BATON_AGENT_ID heard $BATON_INPUT</result>"))
        .file("WAIT.sh", &emit("<result>parent</result>"))
        .run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    // The two workers ask concurrently; whichever asked first is answered first.
    let asks = state(&outcome)["agents"].as_array().cloned().unwrap_or_default();
    let mut order: Vec<(String, String)> = asks
        .iter()
        .filter(|agent| agent["status"] == "asking")
        .map(|agent| (str_of(&agent["ask"]["asked_at"]), str_of(&agent["id"])))
        .collect();
    order.sort();
    let (first_id, second_id) = (order[0].1.clone(), order[1].1.clone());
    let first = ask_of(&outcome.stdout);
    assert_eq!((str_of(&first["agent_id"]), first["pending_count"].as_u64()), (first_id.clone(), Some(1)));
    let second = outcome.rerun(["resume", RUN, "--input", "one"]);
    second.status(2);
    assert_eq!(str_of(&ask_of(&second.stdout)["agent_id"]), second_id);
    let done = second.rerun(["resume", RUN, "--input", "two", "-q"]);
    done.status(0).stdout("parent\n");
    let state = state(&done);
    let results: Vec<String> = state["terminated"]
        .as_array()
        .map(|all| all.iter().map(|agent| str_of(&agent["result"])).collect())
        .unwrap_or_default();
    assert!(results.contains(&format!("{first_id} heard one")), "{results:?}");
    assert!(results.contains(&format!("{second_id} heard two")), "{results:?}");
}

#[test]
fn a11_an_expired_ask_goes_to_timeout_next_or_pauses_saying_so() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" timeout="1s" timeout_next="LATE">Quick?</ask>"#))
        .file("GOT.sh", &emit("<result>answered</result>"))
        .file("LATE.sh", &say("<result>too late [$BATON_INPUT]</result>"))
        .run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    outcome.rerun(["resume", RUN, "-q"]).status(0).stdout("too late []\n");

    let outcome = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" timeout="1s">Quick?</ask>"#))
        .file("GOT.sh", &emit("<result>answered</result>"))
        .run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    let ask_id = str_of(&ask_of(&outcome.stdout)["ask_id"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let late = outcome.rerun(["resume", RUN]);
    late.status(3);
    let main = agent(&state(&late), "main").clone();
    assert_eq!(main["pause_reason"], "ask_timeout");
    assert_eq!(str_of(&main["error"]), format!("{ask_id} timed out after 1s with no answer, and has no timeout_next"));
}

#[test]
fn r11_2_a_workflow_whose_policy_allows_ask_is_refused_at_launch_under_reject() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "---\nallowed_transitions:\n  - {tag: ask, next: DONE}\n---\n[[START]] ask me\n")
        .file("DONE.sh", &say("<result>$BATON_INPUT</result>"));
    crate::markdown::fake(&test).rule(
        "a",
        "[[START]]",
        crate::support::fake_claude::Reply::text(r#"<ask next="DONE">Why?</ask>"#),
    );
    let outcome = test.run_workflow(&[]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: workflow `wf` asks a person for input (state `START.md` allows <ask>); run it with --on-ask pause"
    );
    assert!(!outcome.root().join(".baton/runs").join(RUN).exists(), "refused before a run exists");
    let outcome = outcome.rerun(["run", "wf", "--run-id", RUN, "--on-ask", "pause"]);
    outcome.status(2);
    outcome.rerun(["answer", RUN, "because", "-q"]).status(0).stdout("because\n");
}

#[test]
fn r3_29_display_files_are_staged_in_the_task_folder_and_the_ask_says_its_mode() {
    let outcome = Test::new()
        .write("report.txt", "the report")
        .file("START.sh", &emit(r#"<ask next="GOT" display_files="report.txt:summary.txt" upload_slots="photo:image/png">Approve?</ask>"#))
        .file("GOT.sh", &say("<result>$BATON_INPUT</result>"))
        .run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    let ask = ask_of(&outcome.stdout);
    assert_eq!(ask["mode"], "slots");
    assert_eq!(ask["files"]["upload_slots"], "photo:image/png");
    let staged = outcome
        .root()
        .join(".baton/tasks")
        .join(RUN)
        .join("main/asks")
        .join(str_of(&ask["ask_id"]))
        .join("summary.txt");
    assert_eq!(std::fs::read_to_string(staged).expect("staged copy"), "the report");
}

#[test]
fn r3_29_a_display_file_that_cannot_be_staged_pauses_the_agent() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" display_files="missing.txt">Look?</ask>"#))
        .file("GOT.sh", &emit("<result>x</result>"))
        .run_workflow(&["--on-ask", "pause"]);
    outcome.status(3);
    let main = agent(&state(&outcome), "main").clone();
    assert_eq!(main["pause_reason"], "ask_stage_error");
    assert!(str_of(&main["error"]).contains("cannot stage its display_files: "), "{main}");
    assert!(str_of(&main["error"]).ends_with("missing.txt: No such file or directory (os error 2)"), "{main}");
}

#[test]
fn r3_24_an_ask_without_next_is_a_parse_error_that_fails_the_run() {
    let outcome = Test::new().file("START.sh", &emit("<ask>Which colour?</ask>")).run_workflow(&[
        "--no-lint",
        "-q",
        "--on-ask",
        "pause",
    ]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: run test failed: agent main at START.sh: script `START.sh` printed an invalid transition tag: <ask> \
         needs a non-empty `next` attribute\ncontinue after fixing it with `baton resume test`"
    );
}

const NOT_A_DURATION: &str = "<ask> `timeout` `banana` is not a duration; expected a number of seconds or a duration such as 90s, 30m, 24h or 7d";

/// Issue 19: `<ask timeout="banana">` passed lint and the run, and never timed out.
/// Lint refuses it (`invalid-ask-timeout`), and a script that prints it fails its step.
#[test]
fn ask_timeout_banana_is_refused_by_lint_and_fails_a_script_step() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" timeout="banana">Quick?</ask>"#))
        .file("GOT.sh", &emit("<result>answered</result>"));
    let linted = test.run_workflow(&["--on-ask", "pause"]);
    linted.status(1);
    assert_eq!(
        linted.error_message(),
        format!(
            "error: workflow `wf` has a lint error that would fail the run; fix it, or run with --no-lint:\n  \
             wf/START.sh:2:1: error[invalid-ask-timeout]: {NOT_A_DURATION}; a run stops if the agent emits this `<ask>`"
        )
    );
    let run = linted.into_test().run_workflow(&["--on-ask", "pause", "--no-lint"]);
    run.status(1);
    run.stderr_contains(&format!(
        "error: run test failed: agent main at START.sh: script `START.sh` printed an invalid transition tag: \
         {NOT_A_DURATION}\n"
    ));
}

/// The same ask from a prompt state is a parse error of its step, as an `<ask>`
/// without `next` is (R3.24): the run stops, naming the value.
#[test]
fn ask_timeout_banana_from_a_prompt_state_is_an_error_of_its_step() {
    let test =
        Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("GOT.sh", &emit("<result>x</result>"));
    crate::markdown::fake(&test).rule(
        "a",
        "[[START]]",
        crate::support::fake_claude::Reply::text(r#"<ask next="GOT" timeout="banana">Quick?</ask>"#),
    );
    let outcome = test.run_workflow(&["--on-ask", "pause"]);
    outcome.status(1);
    outcome.stderr_contains(&format!(
        "error: run test failed: agent main at START.md: transition parse error: {NOT_A_DURATION}\n"
    ));
    assert_eq!(state(&outcome)["status"], "failed");
}

/// A `timeout_next` that names no state is refused when the ask is made, not when
/// it times out: by lint (`missing-target`) and by the step.
#[test]
fn ask_timeout_next_that_names_no_state_fails_the_step_that_asks() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" timeout="1h" timeout_next="LAET">Quick?</ask>"#))
        .file("GOT.sh", &emit("<result>answered</result>"))
        .file("LATE.sh", &emit("<result>late</result>"))
        .run_workflow(&["--on-ask", "pause", "--no-lint"]);
    outcome.status(1);
    outcome.stderr_contains(
        "error: run test failed: agent main at START.sh: script `START.sh`: cannot resolve its transition target: \
         state `LAET` not found in workflow `[ROOT]/wf` (looked for LAET.md, LAET.sh); did you mean `LATE.sh`?\n",
    );
}

/// Issue 19: a resume that paused an agent whose ask timed out with an unusable
/// `timeout_next` printed only "1 agent paused"; it now says which agent, where, and why.
#[test]
fn a_resume_that_pauses_on_an_unusable_timeout_next_says_why() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" timeout="1s" timeout_next="LATE">Quick?</ask>"#))
        .file("GOT.sh", &emit("<result>answered</result>"))
        .file("LATE.sh", &emit("<result>late</result>"))
        .run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    let ask_id = str_of(&ask_of(&outcome.stdout)["ask_id"]);
    std::fs::remove_file(outcome.root().join("wf/LATE.sh")).expect("remove LATE.sh");
    // The ask's deadline has to pass: there is no clock to move instead.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let late = outcome.rerun(["resume", RUN]);
    late.status(3);
    late.stderr_contains(&format!(
        "[main] paused at START.sh (ask_timeout): {ask_id} timed out after 1s, and its timeout_next does not \
         resolve: state `LATE` not found in workflow `[ROOT]/wf` (looked for LATE.md, LATE.sh)\n\
         paused: run test: 1 agent paused; continue with `baton resume test`\n"
    ));
    assert_eq!(late.events_of(RUN, "AgentPaused").len(), 1, "the trace has the pause too");
}

/// The same when other asks still wait: the resume prints the next ask and exits 2
/// without running anything, and says first why the timed-out agent paused.
#[test]
fn a_resume_that_pauses_on_an_unusable_timeout_next_says_why_while_other_asks_wait() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork next=\"WAIT\">A</fork>\n<fork>B</fork>"))
        .file("A.sh", &emit(r#"<ask next="SAY" timeout="1s" timeout_next="LATE">A?</ask>"#))
        .file("B.sh", &emit(r#"<ask next="SAY" timeout="1d">B?</ask>"#))
        .file("SAY.sh", &emit("<result>heard</result>"))
        .file("LATE.sh", &emit("<result>late</result>"))
        .file("WAIT.sh", &emit("<result>parent</result>"))
        .run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    let timed = state(&outcome)["agents"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .find(|agent| agent["ask"]["prompt"] == "A?")
        .expect("the agent asking A?");
    let (agent_id, ask_id) = (str_of(&timed["id"]), str_of(&timed["ask"]["id"]));
    std::fs::remove_file(outcome.root().join("wf/LATE.sh")).expect("remove LATE.sh");
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let late = outcome.rerun(["resume", RUN]);
    late.status(2);
    assert_eq!(ask_of(&late.stdout)["prompt"], "B?");
    late.stderr_contains(&format!(
        "[{agent_id}] paused at A.sh (ask_timeout): {ask_id} timed out after 1s, and its timeout_next does not \
         resolve: state `LATE` not found in workflow `[ROOT]/wf` (looked for LATE.md, LATE.sh)\n"
    ));
}
