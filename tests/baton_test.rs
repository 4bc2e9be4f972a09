//! `baton test`: a workflow's tests run offline against scripted replies and
//! script stubs (`docs/testing.md`). No agent CLI is ever needed: `BATON_CLAUDE_BIN`,
//! `BATON_PI_BIN` and `BATON_CODEX_BIN` point nowhere in every test here.

use serde_json::Value;

use crate::support::Test;

const REVIEW: &str = "---\nallowed_transitions:\n  - { tag: result }\n---\nReview {{input}}.\n";

fn offline() -> Test {
    Test::new()
        .env("BATON_CLAUDE_BIN", "/nonexistent/claude")
        .env("BATON_PI_BIN", "/nonexistent/pi")
        .env("BATON_CODEX_BIN", "/nonexistent/codex")
}

#[test]
fn a_passing_test_prints_pass_with_its_description_and_the_summary() {
    offline()
        .file("START.md", "Plan {{input}}.\n")
        .file("DONE.sh", "echo \"<result>done: $BATON_INPUT</result>\"\n")
        .write(
            "wf/tests/happy.yaml",
            "description: approved on first review\ninput: a flag\n\
             replies:\n  START: [\"<goto input=\\\"planned\\\">DONE</goto>\"]\n\
             expect:\n  outcome: completed\n  result: \"done: planned\"\n  path: [START, DONE]\n  steps: 2\n",
        )
        // With no argument, every workflow under . with a tests/ directory is tested.
        .args(["test"])
        .run()
        .status(0)
        .stdout("PASS wf/tests/happy.yaml: approved on first review\n1 passed, 0 failed\n");
}

#[test]
fn a_failing_test_says_what_was_expected_and_what_happened() {
    offline()
        .file("START.md", "Loop.\n")
        .write(
            "wf/tests/bounded.yaml",
            "max_steps: 2\nreplies:\n  START: [\"<goto>START</goto>\", \"<goto>START</goto>\"]\n",
        )
        .write(
            "wf/tests/result.yaml",
            "replies:\n  START: [\"<result>no</result>\"]\nexpect:\n  result: \"yes\"\n  steps: 2\n  cost_usd: 0.5\n",
        )
        .args(["test", "wf"])
        .run()
        .status(1)
        .stdout(
            "FAIL wf/tests/bounded.yaml: expected outcome completed, got paused (the step limit of 2 was reached)\n\
             FAIL wf/tests/result.yaml: expected result \"yes\", got \"no\"; expected 2 steps, got 1; expected a total \
             cost of $0.5, got $0\n\
             0 passed, 2 failed\n",
        );
}

#[test]
fn a_reply_without_a_tag_gets_a_reminder_answered_by_the_next_reply() {
    offline()
        .file("START.md", REVIEW)
        .write(
            "wf/tests/reminded.yaml",
            "replies:\n  START:\n    - {text: \"Looks good.\", cost_usd: 0.25}\n    - {text: \"<result>APPROVED</result>\", cost_usd: 0.5}\n\
             expect:\n  result: APPROVED\n  visits: {START: 1}\n  steps: 1\n  cost_usd: 0.75\n",
        )
        .write(
            "wf/tests/gives-up.yaml",
            "replies:\n  START: [no tag, still none, never]\nexpect:\n  outcome: failed\n  cost_usd: 0\n",
        )
        .args(["test", "wf"])
        .run()
        .status(0)
        .stdout("PASS wf/tests/gives-up.yaml\nPASS wf/tests/reminded.yaml\n2 passed, 0 failed\n");
}

#[test]
fn forked_workers_read_their_own_replies_whatever_the_order_they_run_in() {
    offline()
        .file("START.md", "Fan out.\n")
        .file("WORKER.md", "Work on {{item}}.\n")
        .file("DONE.md", "Sum up.\n")
        .write(
            "wf/tests/fanout.yaml",
            "replies:\n  START: ['<fork item=\"a\">WORKER</fork> <fork item=\"b\">WORKER</fork> <fork item=\"c\">WORKER</fork> <goto>DONE</goto>']\n\
             \x20 WORKER: [{text: '<result>any</result>', cost_usd: 0.125}]\n  DONE: ['<result>gathered</result>']\n\
             agent_replies:\n  main_worker2:\n    WORKER: [{text: '<result>second</result>', cost_usd: 1}]\n\
             expect:\n  result: gathered\n  path: [START, DONE]\n  visits: {WORKER: 3}\n  visited: [START, WORKER, DONE]\n\
             \x20 steps: 5\n  cost_usd: 1.25\n",
        )
        .args(["test", "wf"])
        .run()
        .status(0)
        .stdout("PASS wf/tests/fanout.yaml\n1 passed, 0 failed\n");
}

#[test]
fn asks_are_answered_in_order_and_an_unanswered_one_leaves_the_run_asking() {
    offline()
        .file("START.md", "Ask.\n")
        .file("ANSWERED.sh", "echo \"<result>colour: $BATON_INPUT</result>\"\n")
        .write(
            "wf/tests/answered.yaml",
            "replies:\n  START: ['<ask next=\"ANSWERED\">Which colour?</ask>']\nanswers: [blue]\n\
             expect:\n  result: \"colour: blue\"\n  path: [START, ANSWERED]\n",
        )
        .write(
            "wf/tests/asking.yaml",
            "replies:\n  START: ['<ask next=\"ANSWERED\">Which colour?</ask>']\nexpect:\n  outcome: asking\n",
        )
        .write(
            "wf/tests/too-many.yaml",
            "replies:\n  START: ['<ask next=\"ANSWERED\">Which colour?</ask>']\nanswers: [blue, red]\n",
        )
        .write(
            "wf/tests/not-asked.yaml",
            "replies:\n  START: ['<ask next=\"ANSWERED\">Which colour?</ask>']\nexpect:\n  outcome: completed\n",
        )
        .args(["test", "wf"])
        .run()
        .status(1)
        .stdout(
            "PASS wf/tests/answered.yaml\nPASS wf/tests/asking.yaml\n\
             FAIL wf/tests/not-asked.yaml: expected outcome completed, got asking (agent main asks: Which colour?)\n\
             FAIL wf/tests/too-many.yaml: the run asked fewer questions than the test answers: 1 answer(s) left \
             unused\n\
             2 passed, 2 failed\n",
        );
}

#[test]
fn a_missing_reply_or_stub_fails_the_test_naming_the_state_visit_and_agent() {
    offline()
        .file("START.md", "Go.\n")
        .file("REVIEW.md", REVIEW)
        .file("CHECK.sh", "echo '<goto>REVIEW</goto>'\n")
        .write(
            "wf/tests/second-visit.yaml",
            "replies:\n  START: ['<goto>CHECK</goto>', '<goto>CHECK</goto>']\n\
             scripts:\n  CHECK: [{stdout: '<goto>START</goto>'}]\n",
        )
        .write("wf/tests/reminder.yaml", "replies:\n  START: ['<goto>REVIEW</goto>']\n  REVIEW: [no tag]\n")
        .args(["test", "wf"])
        .run()
        .status(1)
        .stdout(
            "FAIL wf/tests/reminder.yaml: no scripted reply for REVIEW.md, visit 1, reminder 1 of agent main (turn 2 \
             there; the test gives 1 reply)\n\
             FAIL wf/tests/second-visit.yaml: no script stub for CHECK.sh, visit 2 of agent main (the test gives 1 \
             stub)\n\
             0 passed, 2 failed\n",
        );
}

#[test]
fn a_missing_reply_fails_even_a_test_that_expects_the_run_to_fail() {
    offline()
        .file("START.md", "Go.\n")
        .write("wf/tests/t.yaml", "expect:\n  outcome: failed\n")
        .args(["test", "wf"])
        .run()
        .status(1)
        .stdout(
            "FAIL wf/tests/t.yaml: no scripted reply for START.md, visit 1 of agent main (turn 1 there; the test \
             gives 0 replies)\n0 passed, 1 failed\n",
        );
}

#[test]
fn mistakes_in_a_test_file_are_reported_with_their_line() {
    let outcome = offline()
        .file("START.md", "Go.\n")
        .write("wf/tests/flow.yaml", "replies:\n  START: ['<result>x</result>'\nexpect: {}\n")
        .write("wf/tests/typo.yaml", "replies:\n  START: ['<result>x</result>']\nexpected:\n  outcome: completed\n")
        .write("wf/tests/state.yaml", "replies:\n  STRAT: ['<result>x</result>']\n")
        .args(["test", "wf"])
        .run();
    outcome.status(1);
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert!(lines[0].starts_with("FAIL wf/tests/flow.yaml:3: invalid YAML: "), "{}", outcome.stdout);
    assert!(
        lines[1].starts_with("FAIL wf/tests/state.yaml:2: `STRAT`: state `STRAT` not found in workflow"),
        "{}",
        outcome.stdout
    );
    assert!(lines[1].ends_with("did you mean `START.md`?"), "{}", outcome.stdout);
    assert_eq!(
        lines[2],
        "FAIL wf/tests/typo.yaml:3: unknown key `expected` (did you mean `expect`?); expected one of description, \
         input, start, max_steps, budget, timeout, env, repository, replies, agent_replies, scripts, agent_scripts, \
         answers, break_before, break_after, step, stops, expect"
    );
    assert_eq!(lines[3], "0 passed, 3 failed");
}

#[test]
fn json_output_describes_every_test_and_its_run() {
    let outcome = offline()
        .file("START.md", "Go.\n")
        .write(
            "wf/tests/ok.yaml",
            "description: one turn\nreplies:\n  START: [{text: '<result>fine</result>', cost_usd: 0.5, input_tokens: 9}]\n",
        )
        .write("wf/tests/wrong.yaml", "replies:\n  START: ['<result>fine</result>']\nexpect: {result: other}\n")
        .args(["test", "wf", "--json"])
        .run();
    outcome.status(1);
    let report: Value = serde_json::from_str(&outcome.stdout).expect("one JSON document");
    assert_eq!(report["passed"], 1);
    assert_eq!(report["failed"], 1);
    let ok = &report["tests"][0];
    assert_eq!(ok["file"], "wf/tests/ok.yaml");
    assert_eq!(ok["description"], "one turn");
    assert_eq!(ok["passed"], true);
    assert_eq!(ok["failures"], serde_json::json!([]));
    assert_eq!(ok["run"]["outcome"], "completed");
    assert_eq!(ok["run"]["result"], "fine");
    assert_eq!(ok["run"]["path"], serde_json::json!(["START.md"]));
    assert_eq!(ok["run"]["visits"], serde_json::json!({"START.md": 1}));
    assert_eq!(ok["run"]["steps"], 1);
    assert_eq!(ok["run"]["cost_usd"], 0.5);
    let wrong = &report["tests"][1];
    assert_eq!(wrong["passed"], false);
    assert_eq!(wrong["failures"], serde_json::json!(["expected result \"other\", got \"fine\""]));
}

#[test]
fn a_workflow_that_needs_the_network_fails_clearly() {
    let url = format!("https://example.invalid/review-{}.zip", "a".repeat(64));
    offline().args(["test", url.as_str()]).run().status(1).stdout(&format!(
        "FAIL {url}: a remote workflow needs the network, and `baton test` runs offline; download it and test the \
             local copy\n0 passed, 1 failed\n"
    ));
}

#[test]
fn script_stubs_stand_in_for_scripts_and_env_reaches_real_ones() {
    offline()
        .file("START.sh", "echo \"<goto input=\\\"$LEVEL\\\">CHECK</goto>\"\n")
        .file("CHECK.sh", "[ -n \"$SKIP\" ] || make test\necho \"<result>level $BATON_INPUT</result>\"\n")
        .write(
            "wf/tests/stubbed.yaml",
            "env: {LEVEL: \"7\"}\nscripts:\n  CHECK:\n    - {stdout: 'fails', stderr: 'no Makefile', exit_code: 2}\n\
             expect:\n  outcome: failed\n  path: [START, CHECK]\n",
        )
        .write("wf/tests/real.yaml", "env: {LEVEL: \"7\", SKIP: \"1\"}\nexpect: {result: level 7}\n")
        .args(["test", "wf"])
        .run()
        .status(0)
        .stdout("PASS wf/tests/real.yaml\nPASS wf/tests/stubbed.yaml\n2 passed, 0 failed\n");
}

#[test]
fn a_yaml_workflow_keeps_its_tests_in_a_tests_directory_beside_it() {
    offline()
        .write(
            "flow.yaml",
            "states:\n  START:\n    prompt: Say hi\n    allowed_transitions: [{tag: goto, target: DONE}]\n  \
             DONE:\n    sh: echo \"<result>done $BATON_INPUT</result>\"\n",
        )
        .write(
            "flow.tests/hi.yaml",
            "replies:\n  START: ['<goto input=\"x\">DONE</goto>']\nexpect: {result: done x, path: [START, DONE]}\n",
        )
        .args(["test", "flow.yaml", "flow.tests/hi.yaml"])
        .run()
        .status(0)
        .stdout("PASS flow.tests/hi.yaml\nPASS flow.tests/hi.yaml\n2 passed, 0 failed\n");
}

#[test]
fn the_budget_ends_the_run_as_it_would_with_claude() {
    offline()
        .file("START.md", "Loop.\n")
        .write(
            "wf/tests/budget.yaml",
            "budget: 0.5\nreplies:\n  START: [{text: '<goto>START</goto>', cost_usd: 0.375}, \
             {text: '<goto>START</goto>', cost_usd: 0.375}]\n\
             expect:\n  result: \"Workflow terminated: budget exceeded ($0.7500 > $0.5000)\"\n  visits: {START: 2}\n  \
             cost_usd: 0.75\n",
        )
        .args(["test", "wf"])
        .run()
        .status(0)
        .stdout("PASS wf/tests/budget.yaml\n1 passed, 0 failed\n");
}

#[test]
fn repository_true_makes_the_working_directory_a_git_repository() {
    let outcome = Test::new()
        .file("START.sh", "if git rev-parse --verify -q HEAD >/dev/null; then echo '<result>repo</result>'; else echo '<result>none</result>'; fi\n")
        .write("wf/tests/repo.yaml", "repository: true\nexpect:\n  result: repo\n")
        .write("wf/tests/plain.yaml", "expect:\n  result: none\n")
        .args(["test", "wf"])
        .run();
    outcome.status(0);
    assert!(outcome.stdout.ends_with("2 passed, 0 failed\n"), "{}", outcome.stdout);
}

/// Issue 19 item 11: `baton test states/` said "no tests" instead of testing the
/// workflows inside it.
#[test]
fn a_directory_of_workflows_tests_every_workflow_inside_it() {
    let states = format!("{}/states", env!("CARGO_MANIFEST_DIR"));
    let mut expected = Vec::new();
    for workflow in std::fs::read_dir(&states).expect("states/") {
        let tests = workflow.expect("entry").path().join("tests");
        for test in std::fs::read_dir(&tests).into_iter().flatten() {
            expected.push(test.expect("entry").path().display().to_string());
        }
    }
    expected.sort();
    assert!(expected.len() >= 20, "the samples have tests: {expected:?}");
    let outcome = offline().args(["test", &format!("{states}/")]).run();
    outcome.status(0);
    let passed: Vec<String> = outcome
        .stdout
        .lines()
        .filter_map(|line| line.strip_prefix("PASS "))
        .filter_map(|line| line.split(": ").next())
        .map(|shown| shown.replace("states//", "states/"))
        .collect();
    assert_eq!(passed, expected);
    assert!(outcome.stdout.ends_with(&format!("{} passed, 0 failed\n", expected.len())), "{}", outcome.stdout);
}

#[test]
fn a_directory_without_workflows_that_have_tests_says_so() {
    offline().write("docs/README.md", "not a workflow\n").args(["test", "docs"]).run().status(1).stdout(
        "FAIL docs: no tests: no workflow under it has any (a workflow `WF/` keeps them in `WF/tests/*.yaml`, a \
             `FLOW.yaml` in `FLOW.tests/*.yaml`)\n0 passed, 1 failed\n",
    );
}

/// A prompt state on `backend` whose only way out is `<result>`.
fn on(backend: &str) -> String {
    format!("---\nbackend: {backend}\nallowed_transitions:\n  - {{ tag: result }}\n---\nReview {{{{input}}}}.\n")
}

#[test]
fn a_reply_written_for_another_backend_fails_the_test_naming_both() {
    offline()
        .file("START.md", "Plan {{input}}.\n")
        .file("REVIEW.md", &on("codex"))
        .write(
            "wf/tests/swapped.yaml",
            "description: the replies of the two states swapped\n\
             replies:\n  START: [{text: '<goto>REVIEW</goto>', backend: codex}]\n  REVIEW: [{text: '<result>ok</result>', backend: claude}]\n",
        )
        .write(
            "wf/tests/reviewer.yaml",
            "replies:\n  START: [{text: '<goto>REVIEW</goto>', backend: claude}]\n  REVIEW: [{text: '<result>ok</result>', backend: claude}]\n",
        )
        .args(["test", "wf"])
        .run()
        .status(1)
        .stdout(
            "FAIL wf/tests/reviewer.yaml: the scripted reply for REVIEW.md, turn 1 of agent main is for the claude \
             backend, but REVIEW.md runs on codex\n\
             FAIL wf/tests/swapped.yaml: the scripted reply for START.md, turn 1 of agent main is for the codex \
             backend, but START.md runs on claude\n\
             0 passed, 2 failed\n",
        );
}

/// Issue 20, item 6: one workflow on Claude, pi and Codex (a goto across
/// backends, a function into another backend and its result back) passes
/// offline, each reply naming the backend its state runs on; a reply naming
/// none is taken on any.
#[test]
fn a_workflow_mixing_claude_pi_and_codex_states_passes_its_tests() {
    offline()
        .file("START.md", "---\nallowed_transitions:\n  - { tag: goto, target: PLAN }\n---\nStart {{input}}.\n")
        .file(
            "PLAN.md",
            "---\nbackend: pi\nallowed_transitions:\n  - { tag: function, target: REVIEW, return: DONE }\n---\nPlan.\n",
        )
        .file("REVIEW.md", &on("codex"))
        .file("DONE.md", &on("claude"))
        .write(
            "wf/tests/mixed.yaml",
            "description: planned on pi, reviewed on Codex, finished on Claude\ninput: a flag\n\
             replies:\n\
             \x20 START: [{text: '<goto>PLAN</goto>', backend: claude, cost_usd: 0.5}]\n\
             \x20 PLAN: [{text: '<function return=\"DONE\">REVIEW</function>', backend: pi, cost_usd: 0.25}]\n\
             \x20 REVIEW: [{text: '<result>APPROVED</result>', backend: Codex}]\n\
             \x20 DONE: ['<result>reviewed</result>']\n\
             expect:\n  result: reviewed\n  path: [START, PLAN, REVIEW, DONE]\n  cost_usd: 0.75\n",
        )
        .args(["test", "wf"])
        .run()
        .status(0)
        .stdout("PASS wf/tests/mixed.yaml: planned on pi, reviewed on Codex, finished on Claude\n1 passed, 0 failed\n");
}

/// raymond's form: `backend: pi` in `workflow.yaml` puts every prompt state on pi
/// (R13.1) unless the state names its own, in a directory and in a YAML workflow.
#[test]
fn a_manifest_backend_pi_workflow_passes_with_replies_for_pi() {
    offline()
        .file("workflow.yaml", "id: wf\nbackend: pi\n")
        .file("START.md", "---\nallowed_transitions:\n  - { tag: goto, target: CHECK }\n---\nGo.\n")
        .file("CHECK.md", &on("claude"))
        .write(
            "wf/tests/pi.yaml",
            "replies:\n  START: [{text: '<goto>CHECK</goto>', backend: pi}]\n  CHECK: [{text: '<result>ok</result>', backend: claude}]\n\
             expect: {result: ok}\n",
        )
        .write("wf/tests/claude.yaml", "replies:\n  START: [{text: '<goto>CHECK</goto>', backend: claude}]\n")
        .write(
            "flow.yaml",
            "id: flow\nbackend: {name: pi, options: {thinking: low}}\n\
             states:\n  START:\n    prompt: Go\n    allowed_transitions: [{tag: result}]\n",
        )
        .write("flow.tests/pi.yaml", "replies:\n  START: [{text: '<result>ok</result>', backend: pi}]\n")
        .args(["test", "wf", "flow.yaml"])
        .run()
        .status(1)
        .stdout(
            "FAIL wf/tests/claude.yaml: the scripted reply for START.md, turn 1 of agent main is for the claude \
             backend, but START.md runs on pi\n\
             PASS wf/tests/pi.yaml\n\
             PASS flow.tests/pi.yaml\n\
             2 passed, 1 failed\n",
        );
}

/// A reply's `backend` that was no text (`3`) or empty was read as a backend
/// called ``: "unknown backend ``", naming neither the key nor the value.
#[test]
fn a_reply_backend_that_is_no_name_fails_with_its_line_regression() {
    offline()
        .file("START.md", &on("claude"))
        .write("wf/tests/number.yaml", "replies:\n  START:\n    - {text: '<result>ok</result>', backend: 3}\n")
        .write("wf/tests/typo.yaml", "replies:\n  START:\n    - text: '<result>ok</result>'\n      backend: codx\n")
        .args(["test", "wf"])
        .run()
        .status(1)
        .stdout(
            "FAIL wf/tests/number.yaml:3: `replies.START.0.backend` must be a backend's name, one of claude, pi, codex\n\
             FAIL wf/tests/typo.yaml:4: `replies.START.0.backend`: unknown backend `codx`: expected one of claude, pi, \
             codex; did you mean `codex`?\n\
             0 passed, 2 failed\n",
        );
}
