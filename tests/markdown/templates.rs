//! Rendering a prompt body (R6.1–R6.3, R3.42; §16 items 20–21; `{{result}}` alias).

use super::common::norm;
use super::{calls, fake, trace_file};
use crate::support::Test;
use crate::support::fake_claude::Reply;

const BODY: &str = "[[START]] in=<{{input}}> spaced=<{{ input }}> half=<{{input }}> res=<{{result}}>\n\
                    wf={{workflow_id}} agent={{agent_id}} folder={{task_folder}} other={{item}}\n";

/// Runs START.md (BODY) with `extra` arguments; returns the prompt the fake CLI got, normalised.
fn rendered(extra: &[&str]) -> String {
    let test = Test::new().with_fake_claude().file("START.md", BODY);
    fake(&test).rule("a", "[[START]]", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(extra);
    outcome.status(0).stdout("ok\n");
    let calls = calls(&outcome);
    assert_eq!(calls.len(), 1);
    // The prompt goes to Claude on stdin, and the trace keeps it as sent (A12, A16).
    assert_eq!(trace_file(&outcome, "main_START_001.prompt.md"), calls[0].prompt);
    norm(&outcome, &calls[0].prompt)
}

#[test]
fn r6_3_input_stays_literal_without_input_and_spaced_placeholders_never_render() {
    assert_eq!(
        rendered(&[]),
        "[[START]] in=<{{input}}> spaced=<{{ input }}> half=<{{input }}> res=<{{result}}>\n\
         wf=test agent=main folder=[ROOT]/.baton/tasks/test/main other={{item}}\n"
    );
}

#[test]
fn r16_21_empty_cli_input_renders_as_empty() {
    assert_eq!(
        rendered(&["--input", ""]),
        "[[START]] in=<> spaced=<{{ input }}> half=<{{input }}> res=<>\n\
         wf=test agent=main folder=[ROOT]/.baton/tasks/test/main other={{item}}\n"
    );
}

#[test]
fn baton_result_is_an_alias_of_input() {
    assert_eq!(
        rendered(&["--input", "hello world"]),
        "[[START]] in=<hello world> spaced=<{{ input }}> half=<{{input }}> res=<hello world>\n\
         wf=test agent=main folder=[ROOT]/.baton/tasks/test/main other={{item}}\n"
    );
}

#[test]
fn r3_1_input_lasts_for_exactly_one_state() {
    // START gets the CLI input; NEXT (after a goto without `input`) sees `{{input}}` literally.
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]] {{input}}\n")
        .file("NEXT.md", "[[NEXT]] {{input}} {{result}}\n");
    fake(&test).rule("a", "[[START]]", Reply::text("<goto>NEXT</goto>")).rule(
        "b",
        "[[NEXT]]",
        Reply::text("<result>done</result>"),
    );
    let outcome = test.run_workflow(&["--input", "first"]);
    outcome.status(0).stdout("done\n");
    let prompts: Vec<String> = calls(&outcome).into_iter().map(|call| call.prompt).collect();
    assert_eq!(prompts, ["[[START]] first\n", "[[NEXT]] {{input}} {{result}}\n"]);
    assert_eq!(trace_file(&outcome, "main_NEXT_002.prompt.md"), "[[NEXT]] {{input}} {{result}}\n");
}

#[test]
fn r8_13_pending_input_survives_a_pause_and_resume() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]] {{input}}\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::usage_limit("You've hit your limit · resets 3pm (UTC)", 0).times(1))
        .rule("b", "[[START]]", Reply::text("<result>ok</result>"));
    let first = test.run_workflow(&["--input", "kept", "--no-wait"]);
    first.status(3);
    let resumed = first.rerun(["resume", "test"]);
    resumed.status(0).stdout("ok\n");
    let prompts: Vec<String> = calls(&resumed).into_iter().map(|call| call.prompt).collect();
    assert_eq!(prompts, ["[[START]] kept\n", "[[START]] kept\n"]);
}

#[test]
fn a12_a_prompt_over_the_argv_limit_goes_through_stdin() {
    // Linux refuses a single argv element over 128 KiB; the prompt is 400 KB.
    let body = format!("[[START]]\n{}\n", "0123456789".repeat(40_000));
    let test = Test::new().with_fake_claude().file("START.md", &body);
    fake(&test).rule("a", "[[START]]", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    assert_eq!(calls(&outcome)[0].prompt, body);
}

/// R3.26: the state an answer goes to sees `{{ask_id}}` and the answer as
/// `{{input}}`; the state after it sees neither.
#[test]
fn r3_26_ask_id_is_bound_for_the_answered_state_only() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("GOT.md", "[[GOT]] id={{ask_id}} in={{input}}\n")
        .file("AFTER.md", "[[AFTER]] id={{ask_id}}\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text(r#"<ask next="GOT">Colour?</ask>"#))
        .rule("b", "[[GOT]]", Reply::text("<goto>AFTER</goto>"))
        .rule("c", "[[AFTER]]", Reply::text("<result>done</result>"));
    let outcome = test.run_workflow(&["--on-ask", "pause"]);
    outcome.status(2);
    let ask: serde_json::Value = serde_json::from_str(outcome.stdout.trim()).expect("ask JSON");
    let ask_id = ask["ask_id"].as_str().unwrap_or_default().to_string();
    let outcome = outcome.rerun(["answer", "test", "teal"]);
    outcome.status(0).stdout("done\n");
    let prompts: Vec<String> = calls(&outcome).iter().map(|call| call.prompt.clone()).collect();
    assert!(prompts.contains(&format!("[[GOT]] id={ask_id} in=teal\n")), "{prompts:?}");
    assert!(prompts.contains(&"[[AFTER]] id={{ask_id}}\n".to_string()), "{prompts:?}");
}
