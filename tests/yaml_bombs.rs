//! Hostile YAML (issue 19, item 2): a "billion laughs" document — nine levels of
//! aliases, each a list of nine aliases of the level before, 400 bytes — once took
//! gigabytes wherever Baton read YAML. Every reader now refuses it before a loader
//! expands anything, naming the file and the line of the alias that crossed the
//! limit (`docs/format.md`, "Limits on YAML").

use serde_json::Value;

use crate::support::Test;
use crate::support::serve::Daemon;

/// Nine levels of nine aliases: 9^9 scalars once expanded. The alias that crosses
/// the limit of 100000 expanded nodes is the first `*a4`, on the sixth line.
fn laughs() -> String {
    let mut text = "a0: &a0 [x,x,x,x,x,x,x,x,x]\n".to_string();
    for level in 1..9 {
        let items = vec![format!("*a{}", level - 1); 9].join(",");
        text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
    }
    text
}

const ALIASES: &str = "`*a4` expands aliases past the limit of 100000 nodes";

/// Three lines before the aliases: the alias is on the file's ninth line.
fn yaml_workflow() -> String {
    format!("states:\n  START:\n    sh: \"echo '<result>ok</result>'\"\n{}", laughs())
}

#[test]
fn billion_laughs_in_a_yaml_workflow_is_refused_by_lint() {
    let outcome = Test::new().write("bomb.yaml", &yaml_workflow()).args(["lint", "bomb.yaml"]).run();
    outcome.status(1);
    assert_eq!(outcome.error_message(), format!("error: YAML workflow `[ROOT]/bomb.yaml`, line 9: {ALIASES}"));
}

#[test]
fn billion_laughs_in_a_prompt_states_frontmatter_is_refused_by_run() {
    let test = Test::new().file("START.md", &format!("---\n{}---\nSay <result>hi</result>\n", laughs()));
    let outcome = test.args(["run", "wf"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        format!(
            "error: workflow `wf` has a lint error that would fail the run; fix it, or run with --no-lint:\n  \
             wf/START.md:7:1: error[frontmatter-parse-error]: Invalid YAML frontmatter: {ALIASES}"
        )
    );
    // Without the lint gate the step itself refuses the frontmatter and the agent pauses.
    let outcome = outcome.into_test().args(["run", "wf", "--no-lint", "--run-id", "r"]).run();
    outcome.status(3);
    outcome.stderr_contains(&format!(
        "[main] paused at START.md (prompt_error): prompt file `[ROOT]/wf/START.md`, line 7: Invalid YAML \
         frontmatter: {ALIASES}"
    ));
}

#[test]
fn billion_laughs_in_a_workflow_manifest_is_refused_by_run() {
    let outcome = Test::new()
        .file("START.sh", "echo '<result>ok</result>'\n")
        .file("workflow.yaml", &format!("id: wf\n{}", laughs()))
        .args(["run", "wf"])
        .run();
    outcome.status(1);
    assert_eq!(outcome.error_message(), format!("error: manifest `[ROOT]/wf/workflow.yaml`: line 7: {ALIASES}"));
}

#[test]
fn billion_laughs_in_a_test_file_fails_that_test() {
    Test::new()
        .file("START.sh", "echo '<result>ok</result>'\n")
        .write("wf/tests/bomb.yaml", &format!("expect: {{outcome: completed}}\n{}", laughs()))
        .env("BATON_CLAUDE_BIN", "/nonexistent/claude")
        .args(["test", "wf"])
        .run()
        .status(1)
        .stdout(&format!("FAIL wf/tests/bomb.yaml:7: {ALIASES}\n0 passed, 1 failed\n"));
}

#[test]
fn billion_laughs_under_serve_root_lists_the_workflow_as_broken() {
    let test = Test::new().file("START.sh", "echo '<result>ok</result>'\n").write("bomb.yaml", &yaml_workflow());
    let daemon = Daemon::start(&test, &[]);
    let listed = daemon.get("/api/v1/workflows").json();
    let workflows = listed["workflows"].as_array().expect("a list of workflows");
    let bomb = workflows.iter().find(|workflow| workflow["id"] == "bomb").expect("bomb.yaml is listed");
    assert_eq!(bomb["lint"]["errors"], 1, "{bomb}");
    let expected = format!("YAML workflow `{}`, line 9: {ALIASES}", test.root().join("bomb.yaml").display());
    assert_eq!(bomb["manifest_error"], Value::from(expected));
    let healthy = workflows.iter().find(|workflow| workflow["id"] == "wf").expect("wf is listed");
    assert_eq!(healthy["lint"]["errors"], 0, "{healthy}");
    assert_eq!(daemon.stop(), 0);
}

#[test]
fn billion_laughs_in_frontmatter_is_refused_by_convert() {
    let outcome = Test::new()
        .file("START.md", &format!("---\n{}---\nSay <result>hi</result>\n", laughs()))
        .args(["convert", "wf", "--to", "yaml", "--output", "wf.yaml"])
        .run();
    outcome.status(1);
    assert_eq!(outcome.error_message(), format!("error: cannot convert [ROOT]/wf: START.md: line 7: {ALIASES}"));
    assert!(!outcome.root().join("wf.yaml").exists());
}

#[test]
fn billion_laughs_in_a_workflow_manifest_is_refused_by_lint_as_by_run() {
    let outcome = Test::new()
        .file("START.sh", "echo '<result>ok</result>'\n")
        .file("workflow.yaml", &format!("id: wf\n{}", laughs()))
        .args(["lint", "wf"])
        .run();
    outcome
        .status(1)
        .stdout(&format!("wf/workflow.yaml: error[invalid-manifest]: manifest: line 7: {ALIASES}\nwf: 1 error\n"));
}
