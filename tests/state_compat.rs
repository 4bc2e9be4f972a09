//! Runs written by earlier versions of Baton stay readable and resumable.

use std::path::Path;

use crate::support::Test;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/state-v1");

/// A project holding the version-1 fixture run, its paths mapped to the temp root.
fn project_with_v1_run() -> Test {
    let mut test = Test::new();
    for entry in std::fs::read_dir(Path::new(FIXTURE).join("wf")).expect("fixture workflow") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        test = test.file(&name, &std::fs::read_to_string(&path).unwrap());
    }
    let state = std::fs::read_to_string(Path::new(FIXTURE).join("state.json")).expect("fixture state");
    let root = test.root().to_string_lossy().into_owned();
    test.write(".baton/runs/v1-fixture/state.json", &state.replace("/project", &root))
}

#[test]
fn version_1_snapshot_is_listed_and_shown() {
    let outcome = project_with_v1_run().args(["status", "v1-fixture"]).run();
    outcome.status(0);
    let stdout = crate::support::test_builder::normalize(&outcome.stdout, outcome.root());
    assert!(stdout.starts_with("run v1-fixture: failed\n"), "{stdout}");
    assert!(stdout.contains("  main  at NEXT.sh  [active]\n"), "{stdout}");
    assert!(stdout.contains("      returns to: RET.sh\n"), "{stdout}");
    assert!(stdout.contains("  main_w1  at W.sh  [active]\n"), "{stdout}");
}

#[test]
fn version_1_snapshot_resumes_to_the_same_result() {
    let test = project_with_v1_run().file("W.sh", "echo \"<result>$item $BATON_INPUT</result>\"\n");
    let outcome = test.args(["resume", "v1-fixture", "--json"]).run();
    outcome.status(0);
    let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("json");
    assert_eq!(report["result"], "42");
    let worker = report["agents"].as_array().unwrap().iter().find(|agent| agent["id"] == "main_w1").unwrap();
    assert_eq!(worker["result"], "x for the worker", "fork attributes and input survived the restart (A5)");
}
