//! `baton list --json` with its filters, and `baton gc` (A9: runs are kept until
//! pruned; only finished ones are, never a run that can go on).

use serde_json::Value;

use crate::support::Test;

/// A project with runs `done1`, `done2`, `done3` (completed), `broke` (failed)
/// and `held` (paused), created in that order.
fn project() -> Test {
    let mut test = Test::new()
        .file("START.sh", "echo '<result>ok</result>'\n")
        .write("bad/START.sh", "exit 3\n")
        .write("pause/START.sh", "echo '<goto>START</goto>'\n");
    for id in ["done1", "done2", "done3"] {
        let outcome = test.args(["run", "wf", "-q", "--run-id", id]).run();
        outcome.status(0);
        test = outcome.into_test();
    }
    let outcome = test.args(["run", "bad", "-q", "--run-id", "broke", "--attempts", "1"]).run();
    outcome.status(1);
    let outcome = outcome.rerun(["run", "pause", "-q", "--run-id", "held", "--max-steps", "1"]);
    outcome.status(3);
    outcome.into_test()
}

fn listed(test: Test, args: &[&str]) -> (Vec<Value>, Test) {
    let mut full = vec!["list", "--json"];
    full.extend_from_slice(args);
    let outcome = test.args(full).run();
    outcome.status(0);
    let runs: Value = serde_json::from_str(&outcome.stdout).expect("a JSON array");
    (runs.as_array().cloned().unwrap_or_default(), outcome.into_test())
}

fn ids(runs: &[Value]) -> Vec<&str> {
    runs.iter().filter_map(|run| run["run_id"].as_str()).collect()
}

#[test]
fn list_json_describes_every_run_and_filters_by_status_and_age() {
    let (runs, test) = listed(project(), &[]);
    assert_eq!(ids(&runs), ["done1", "done2", "done3", "broke", "held"]);
    let first = &runs[0];
    assert_eq!(first["status"], "completed");
    assert_eq!(first["live"], false);
    assert_eq!(first["steps"], 1);
    assert!(first["workflow"].as_str().is_some_and(|path| path.ends_with("/wf")), "{first}");
    assert_eq!(runs[3]["status"], "failed");
    assert!(runs[3]["error"].as_str().is_some_and(|error| error.contains("exit")), "{}", runs[3]);
    let (failed, test) = listed(test, &["--status", "failed"]);
    assert_eq!(ids(&failed), ["broke"]);
    let (recent, test) = listed(test, &["--since", "1h"]);
    assert_eq!(recent.len(), 5);
    let outcome = test.args(["list", "--since", "soon"]).run();
    outcome.status(1);
    assert!(outcome.error_message().starts_with("error: invalid value `soon` for --since:"), "{}", outcome.stderr);
}

#[test]
fn gc_keeps_the_newest_finished_runs_deletes_task_folders_and_never_touches_a_run_that_can_go_on() {
    let test = project();
    let outcome = test.args(["gc", "--keep", "1", "--dry-run"]).run();
    outcome.status(0).stdout("would delete done3\nwould delete done2\nwould delete done1\n");
    let test = outcome.into_test();
    assert!(test.root().join(".baton/runs/done1").exists(), "a dry run deletes nothing");
    let outcome = test.args(["gc", "--keep", "1"]).run();
    outcome.status(0).stdout("deleted done3\ndeleted done2\ndeleted done1\n");
    assert!(outcome.stderr.contains("deleted 3 of 4 finished runs"), "{}", outcome.stderr);
    let (left, test) = listed(outcome.into_test(), &[]);
    assert_eq!(ids(&left), ["broke", "held"]);
    assert!(!test.root().join(".baton/tasks/done1").exists(), "its task folders went with it");
    assert!(test.root().join(".baton/tasks/held").exists(), "a kept run keeps them");
}

#[test]
fn gc_by_default_deletes_only_runs_older_than_thirty_days() {
    let test = project();
    // Age run done1: its snapshot (the journal's first line, for a run this short)
    // and its journal's entries both say when it was last updated.
    let updated = regex::Regex::new(r#""updated_at":"[^"]*""#).expect("pattern");
    for file in ["state.json", "journal.jsonl"] {
        let path = test.root().join(".baton/runs/done1").join(file);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        std::fs::write(&path, updated.replace_all(&text, r#""updated_at":"2020-01-01T00:00:00Z""#).as_ref())
            .expect("write");
    }
    let outcome = test.args(["gc"]).run();
    outcome.status(0).stdout("deleted done1\n");
    let outcome = outcome.rerun(["gc", "--older-than", "banana"]);
    outcome.status(1);
    assert!(
        outcome.error_message().starts_with("error: invalid value `banana` for --older-than:"),
        "{}",
        outcome.stderr
    );
}
