//! Every scope kind lint reads, the workflows it follows, and its output forms.

use serde_json::Value;

use crate::conformance::common::archive;
use crate::support::{Test, normalize};

#[test]
fn a_yaml_workflow_is_reported_at_its_lines_with_unknown_script_keys() {
    let yaml = "states:\n  START:\n    prompt: |\n      Plan the work.\n      Then <goto>CHEK</goto>.\n    model: sonet\n  \
                CHECK:\n    sh: \"echo '<result>ok</result>'\"\n    colour: blue\n";
    Test::new().write("flow.yaml", yaml).args(["lint", "flow.yaml", "--level", "info"]).run().status(1).stdout(
        "flow.yaml:5:12: error[missing-target]: `<goto>` target `CHEK` is not a state of this workflow; did you \
         mean `CHECK.sh`?\n\
         flow.yaml:6:5: error[invalid-model]: model `sonet` is not a Claude Code model (an alias such as opus, \
         sonnet or haiku, or a full name such as `claude-sonnet-4-5`); did you mean `sonnet`?\n\
         flow.yaml:7:3: warning[unreachable-state]: no transition leads to `CHECK.sh` from `START.md`; it never runs\n\
         flow.yaml:9:5: warning[unknown-field]: unknown field `colour`, ignored at run time\n\
         flow.yaml: 2 errors, 2 warnings\n",
    );
}

#[test]
fn a_yaml_workflows_claude_options_are_known_and_a_typo_gets_a_suggestion() {
    let yaml = "states:\n  START:\n    prompt: Review, then <result>ok</result>\n    permission_mode: plan\n    \
                allowed_tools: [Read]\n    max_turns: 2\n    output_schema: {type: object}\n    permision_mode: plan\n";
    Test::new().write("flow.yaml", yaml).args(["lint", "flow.yaml"]).run().status(0).stdout(
        "flow.yaml:8:5: warning[unknown-field]: unknown field `permision_mode`, ignored at run time; did you mean \
         `permission_mode`?\nflow.yaml: 1 warning\n",
    );
}

#[test]
fn a_zip_workflow_is_linted_inside_the_archive() {
    let bytes = archive(&[("START.md", "Go <goto>NEXT</goto>\n"), ("DONE.md", "<result>ok</result>\n")]);
    let test = Test::new();
    std::fs::write(test.root().join("flow.zip"), bytes).expect("write zip");
    test.args(["lint", "flow.zip"]).run().status(1).stdout(
        "flow.zip/DONE.md:1:1: warning[unreachable-state]: no transition leads to `DONE.md` from `START.md`; it never runs\n\
         flow.zip/START.md:1:4: error[missing-target]: `<goto>` target `NEXT` is not a state of this workflow\n\
         flow.zip: 1 error, 1 warning\n",
    );
}

#[test]
fn cross_workflow_tags_are_followed_into_the_workflows_they_name() {
    let outcome = Test::new()
        .file(
            "START.md",
            "Review <call-workflow return=\"DONE\">../other/</call-workflow> then \
             <fork-workflow next=\"DONE\">../missing/</fork-workflow>\n",
        )
        .file("DONE.md", "<result>done</result>\n")
        .write("other/START.md", "<goto>LOOP</goto> <goto>NOPE</goto>\n")
        .write("other/LOOP.md", "<goto>START</goto>\n")
        .args(["lint", "wf/START.md"])
        .run();
    outcome.status(1);
    assert_eq!(
        normalize(&outcome.stdout, outcome.root()),
        "wf/START.md:1:8: warning[call-without-result-path]: `<call-workflow>` to `../other/` never returns: no \
         state the callee reaches from `other/START.md` emits `<result>`\n\
         wf/START.md:1:68: error[missing-target]: `<fork-workflow>` names no workflow: `../missing/`: state \
         `missing` not found in workflow `[ROOT]` (looked for missing.md, missing.sh)\n\
         other/START.md:1:19: error[missing-target]: `<goto>` target `NOPE` is not a state of this workflow\n\
         wf: 2 errors, 1 warning\n"
    );
}

#[test]
fn level_hides_findings_but_errors_still_decide_the_exit_code() {
    let test = Test::new()
        .file("START.md", "<goto>DONE</goto> <goto>GONE</goto>\n")
        .file("DONE.md", "<result>ok</result>\n")
        .file("ORPHAN.md", "<goto>DONE</goto>\n");
    let outcome = test.args(["lint", "wf", "--level", "error"]).run();
    outcome.status(1).stdout(
        "wf/START.md:1:19: error[missing-target]: `<goto>` target `GONE` is not a state of this workflow; did you \
         mean `DONE.md`?\nwf: 1 error, 1 warning (1 not shown; --level info shows all)\n",
    );
}

#[test]
fn json_output_follows_the_documented_schema() {
    let outcome = Test::new()
        .file("START.md", "---\nmodel: sonet\n---\n<goto>REVEIW</goto>\n")
        .file("REVIEW.md", "<result>ok</result>\n")
        .args(["lint", "wf", "--json", "--level", "error"])
        .run();
    outcome.status(1);
    let report: Value = serde_json::from_str(&outcome.stdout).expect("one JSON document");
    assert_eq!(report["schema"], 1);
    assert_eq!(report["workflow"], "wf");
    assert_eq!(report["summary"], serde_json::json!({"errors": 2, "warnings": 1, "info": 0}));
    let diagnostics = report["diagnostics"].as_array().expect("a list");
    assert_eq!(diagnostics.len(), 2, "--level error leaves the warning out: {diagnostics:?}");
    assert_eq!(
        diagnostics[1],
        serde_json::json!({
            "check": "missing-target",
            "severity": "error",
            "file": "wf/START.md",
            "line": 4,
            "column": 1,
            "workflow": "wf",
            "state": "START.md",
            "message": "`<goto>` target `REVEIW` is not a state of this workflow; did you mean `REVIEW.md`?",
            "found": "REVEIW",
            "suggestion": "REVIEW.md"
        })
    );
    assert_eq!(diagnostics[0]["check"], "invalid-model");
    assert_eq!(diagnostics[0]["suggestion"], "sonnet");
}

#[test]
fn a_missing_workflow_is_an_error_with_a_suggestion() {
    let outcome = Test::new().args(["lint", "fw"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: workflow `fw` not found: no such file or directory; did you mean `wf`?"
    );
}

#[test]
fn every_sample_workflow_lints_clean() {
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("states");
    let mut entries: Vec<_> =
        std::fs::read_dir(&samples).expect("states/").flatten().map(|entry| entry.path()).collect();
    entries.sort();
    assert!(entries.len() >= 4, "the samples are there");
    for sample in entries {
        let outcome = Test::new().args(["lint", &sample.display().to_string()]).run();
        let name = sample.display().to_string();
        outcome.status(0);
        assert!(
            !outcome.stdout.contains("error[") && !outcome.stdout.contains("warning["),
            "{name}: {}",
            outcome.stdout
        );
    }
}
