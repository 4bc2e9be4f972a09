//! `baton report` of a real run: the review-loop sample driven by the real Claude
//! Code CLI against the fake Anthropic API, with a tool that fails and a
//! reminder, so every column has something to count.

use serde_json::Value;

use crate::claude_e2e::with_real_claude;
use crate::logs::{golden, with_fixture};
use crate::support::Test;
use crate::support::fake_anthropic::{FakeAnthropic, Reply, Rule, ToolUse};

fn review_loop_run() -> (crate::support::Outcome, FakeAnthropic) {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("You are the planner").on_round(0).reply(Reply::text("Planning.").with_tool_use(
            ToolUse::bash("printf '1. add greeting\\n' > \"$(ls -d \"$PWD\"/.baton/tasks/*/main)/plan.md\""),
        )),
        Rule::when_prompt("You are the planner")
            .on_round(1)
            .usage(1200, 80)
            .reply_text("Plan written.\n<goto>IMPLEMENT</goto>"),
        Rule::when_prompt("Implement the plan")
            .on_round(0)
            .reply(Reply::text("Implementing.").with_tool_use(ToolUse::bash("echo hello > greeting.txt; exit 3"))),
        Rule::when_prompt("Implement the plan").on_round(1).reply_text("Implemented.\n<goto>TEST</goto>"),
        Rule::when_prompt("REMINDER").resumed().reply_text("<result>APPROVED</result>"),
        Rule::when_prompt("You are a strict code reviewer").fresh().reply_text("Looks good to me."),
    ]);
    let sample = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("states/review-loop");
    let test = with_real_claude(Test::new(), &fake).env("TEST_COMMAND", "test -f greeting.txt");
    let outcome =
        test.args(["run", &sample.to_string_lossy(), "--input", "add a greeting", "--run-id", "review"]).run();
    outcome.status(0);
    (outcome, fake)
}

#[test]
fn report_of_the_review_loop_counts_steps_tokens_tools_and_reminders() {
    let (outcome, fake) = review_loop_run();
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    let outcome = outcome.rerun(["report", "review", "--json"]);
    outcome.status(0);
    let report: Value = serde_json::from_str(&outcome.stdout).expect("JSON");
    let state = |name: &str| {
        report["states"].as_array().and_then(|states| states.iter().find(|state| state["state"] == name)).cloned()
    };
    let start = state("START.md").expect("START.md row");
    assert_eq!(start["visits"], 1);
    assert_eq!(start["tools"]["Bash"], serde_json::json!({"calls": 1, "failures": 0}));
    assert!(start["tokens"]["input_tokens"].as_u64().is_some_and(|tokens| tokens >= 1200), "{start}");
    let implement = state("IMPLEMENT.md").expect("IMPLEMENT.md row");
    assert_eq!(implement["tools"]["Bash"], serde_json::json!({"calls": 1, "failures": 1}), "{implement}");
    let review = state("REVIEW.md").expect("REVIEW.md row");
    assert_eq!((review["visits"].clone(), review["reminders"].clone()), (Value::from(1), Value::from(1)));
    assert_eq!(state("TEST.sh").expect("TEST.sh row")["visits"], 1);
    assert_eq!(report["totals"]["steps"], 5);
    assert_eq!(report["totals"]["tool_calls"], 2);
    assert!(report["totals"]["cost_usd"].as_f64().is_some_and(|cost| cost > 0.0), "{report}");
    assert!(
        report["agents"][0]["result"].as_str().is_some_and(|result| result.starts_with("Approved after 1 review")),
        "{report}"
    );
    assert_eq!(report["slowest_steps"].as_array().map(Vec::len), Some(5));
    let text = outcome.rerun(["report", "review"]);
    text.status(0);
    assert!(text.stdout.lines().all(|line| line.chars().count() <= 100), "{}", text.stdout);
    assert!(text.stdout.contains("IMPLEMENT.md         Bash 1 (1 failed)"), "{}", text.stdout);
    if std::env::var_os("BATON_SHOW_REPORT").is_some() {
        eprintln!("{}", text.stdout);
    }
}

#[test]
fn a_live_run_reports_what_it_did_so_far_and_its_trace_is_left_as_it_was() {
    let test = Test::new()
        .file("START.sh", "echo '<goto>WAIT</goto>'\n")
        .file("WAIT.sh", "touch waiting\nwhile [ ! -f gate ]; do sleep 0.02; done\necho '<result>done</result>'\n");
    let mut child = test.spawn(&["run", "wf", "-q", "--run-id", "live"]);
    assert!(test.wait_for_file("waiting"), "the second step started");
    let trace = test.root().join(".baton/runs/live/events.jsonl");
    // Events reach the trace once their step is synced: wait until the trace has
    // caught up with the step that now waits, after which it is quiet until the gate.
    let caught_up = || {
        std::fs::read_to_string(&trace)
            .is_ok_and(|text| text.lines().any(|line| line.contains("StateStarted") && line.contains("WAIT.sh")))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !caught_up() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let before = std::fs::read(&trace).expect("the trace");
    let outcome = test.args(["report", "live", "--json"]).run();
    outcome.status(0);
    let report: Value = serde_json::from_str(&outcome.stdout).expect("JSON");
    assert_eq!(report["status"], "running");
    assert_eq!(report["totals"]["steps"], 1, "one step completed: {report}");
    let wait = report["states"].as_array().and_then(|states| states.iter().find(|state| state["state"] == "WAIT.sh"));
    assert_eq!(wait.map(|state| (state["visits"].clone(), state["completed"].clone())), Some((1.into(), 0.into())));
    assert_eq!(report["agents"][0]["result"], Value::Null);
    assert_eq!(std::fs::read(&trace).expect("the trace"), before, "reading wrote nothing");
    std::fs::write(outcome.root().join("gate"), "").expect("open the gate");
    assert!(child.wait().expect("the run ends").success());
}

fn report_of(fixture: &str, json: bool) -> String {
    let mut args = vec!["report", fixture];
    if json {
        args.push("--json");
    }
    let outcome = with_fixture(fixture).args(args).run();
    outcome.status(0);
    outcome.stdout.clone()
}

#[test]
fn report_of_the_recorded_script_countdown_run() {
    golden("script-countdown", "report.txt", &report_of("script-countdown", false));
    golden("script-countdown", "report.json", &report_of("script-countdown", true));
}

#[test]
fn report_of_the_recorded_claude_tools_run() {
    golden("claude-tools", "report.txt", &report_of("claude-tools", false));
    golden("claude-tools", "report.json", &report_of("claude-tools", true));
}

#[test]
fn a_failed_run_reports_the_step_that_failed_and_no_result() {
    let outcome = Test::new()
        .file("START.sh", "echo '<goto>BREAK</goto>'\n")
        .file("BREAK.sh", "echo 'no luck' >&2\nexit 7\n")
        .args(["run", "wf", "-q", "--run-id", "broken", "--attempts", "2"])
        .run();
    outcome.status(1);
    let outcome = outcome.rerun(["report", "broken", "--json"]);
    outcome.status(0);
    let report: Value = serde_json::from_str(&outcome.stdout).expect("JSON");
    assert_eq!(report["status"], "failed");
    let broke = report["states"].as_array().and_then(|states| states.iter().find(|state| state["state"] == "BREAK.sh"));
    let broke = broke.expect("a BREAK.sh row");
    assert_eq!(
        (broke["visits"].clone(), broke["retries"].clone(), broke["completed"].clone()),
        (1.into(), 0.into(), 0.into())
    );
    assert_eq!(report["totals"]["steps"], 1);
    assert_eq!(report["agents"][0]["result"], Value::Null);
}
