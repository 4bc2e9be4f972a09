//! `<join>` (`docs/join.md`) with real scripts: a parent forks workers, waits
//! without polling for them to end, and continues with their outcomes in fork
//! order; `baton status`, the trace, lint and diagram know about it.

use crate::support::Test;

/// Three workers that finish in reverse order (the first sleeps longest); AGG
/// keeps what it was given in `got/`.
fn three_workers_in_reverse() -> Test {
    Test::new()
        .file(
            "START.sh",
            "for i in 1 2 3; do echo \"<fork item=\\\"$i\\\">WORKER</fork>\"; done\necho '<join>AGG</join>'\n",
        )
        .file(
            "WORKER.sh",
            "sleep \"0.$((4 - item))\"\necho \"$item\" >> finished.log\necho \"<result>worker $item done</result>\"\n",
        )
        .file(
            "AGG.sh",
            "mkdir -p got\ncp \"$BATON_RESULTS\" got/results.json\nprintf '%s' \"$BATON_INPUT\" > got/input.txt\n\
             echo '<result>aggregated</result>'\n",
        )
}

const THREE_RESULTS: &str = r#"[
  {
    "agent_id": "main_worker1",
    "status": "terminated",
    "result": "worker 1 done"
  },
  {
    "agent_id": "main_worker2",
    "status": "terminated",
    "result": "worker 2 done"
  },
  {
    "agent_id": "main_worker3",
    "status": "terminated",
    "result": "worker 3 done"
  }
]
"#;

#[test]
fn join_fan_out_of_three_workers_finishing_in_reverse_order_gives_results_in_fork_order() {
    let outcome = three_workers_in_reverse().run_workflow(&[]);
    outcome.status(0).stdout("aggregated\n");
    let root = outcome.root().to_path_buf();
    assert_eq!(std::fs::read_to_string(root.join("finished.log")).unwrap(), "3\n2\n1\n", "they finished in reverse");
    assert_eq!(std::fs::read_to_string(root.join("got/results.json")).unwrap(), THREE_RESULTS);
    assert_eq!(
        std::fs::read_to_string(root.join("got/input.txt")).unwrap(),
        "Joined 3 workers: 3 terminated, 0 paused, 0 still running.\n\n[main_worker1] terminated:\nworker 1 done\n\n\
         [main_worker2] terminated:\nworker 2 done\n\n[main_worker3] terminated:\nworker 3 done\n"
    );
    outcome.stderr_contains("[main] joins main_worker1, main_worker2, main_worker3, then AGG.sh").stderr_contains(
        "[main] joined (main_worker1 terminated, main_worker2 terminated, main_worker3 terminated) -> AGG.sh",
    );
    let waiting = outcome.events_of("test", "JoinWaiting");
    assert_eq!(waiting.len(), 1);
    assert_eq!(waiting[0]["agent_id"], "main");
    assert_eq!(waiting[0]["workers"], serde_json::json!(["main_worker1", "main_worker2", "main_worker3"]));
    assert_eq!(waiting[0]["next_state"], "AGG.sh");
    assert_eq!(waiting[0]["timeout_ms"], serde_json::Value::Null);
    let completed = outcome.events_of("test", "JoinCompleted");
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["timed_out"], false);
    assert_eq!(completed[0]["workers"][0], serde_json::json!({"agent_id": "main_worker1", "status": "terminated"}));
    // The join is no step: START, three workers, AGG.
    assert_eq!(outcome.state("test")["steps_completed"], 5);
}

#[test]
fn a_join_in_its_own_state_after_a_goto_continuation_waits_the_same() {
    Test::new()
        .file("START.sh", "echo '<fork item=\"a\">W</fork><fork item=\"b\">W</fork><goto>WAIT</goto>'\n")
        .file("W.sh", "echo \"<result>$item</result>\"\n")
        .file("WAIT.sh", "echo '<join>AGG</join>'\n")
        .file("AGG.sh", "echo \"<result>$(grep -c terminated \"$BATON_RESULTS\") joined</result>\"\n")
        .run_workflow(&[])
        .status(0)
        .stdout("2 joined\n");
}

#[test]
fn a_paused_worker_is_reported_and_the_run_ends_paused() {
    // The second worker's output breaks the multi-fork rules (two continuations): it pauses.
    let outcome = Test::new()
        .file("START.sh", "echo '<fork item=\"ok\">W</fork><fork item=\"bad\">W</fork><join>AGG</join>'\n")
        .file(
            "W.sh",
            "if [ \"$item\" = bad ]; then echo '<fork>W</fork><goto>AGG</goto><goto>START</goto>'; \
             else echo '<result>fine</result>'; fi\n",
        )
        .file("AGG.sh", "cp \"$BATON_RESULTS\" results.json\necho '<goto>END</goto>'\n")
        .file("END.sh", "echo '<result>went on</result>'\n")
        .run_workflow(&[]);
    outcome.status(3);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outcome.root().join("results.json")).unwrap()).unwrap();
    assert_eq!(results[0], serde_json::json!({"agent_id": "main_w1", "status": "terminated", "result": "fine"}));
    assert_eq!(results[1]["agent_id"], "main_w2");
    assert_eq!(results[1]["status"], "paused");
    assert_eq!(results[1]["result"], serde_json::Value::Null);
    assert!(results[1]["error"].as_str().unwrap().contains("at most one <goto> or <join>"), "{results}");
    let state = outcome.state("test");
    assert_eq!(state["terminated"][0]["result"], "fine");
    assert_eq!(state["terminated"][1]["id"], "main");
}

#[test]
fn a_join_timeout_continues_with_the_workers_still_running_reported() {
    let outcome = Test::new()
        .file(
            "START.sh",
            "echo '<fork item=\"quick\">W</fork><fork item=\"slow\">W</fork><join timeout=\"1s\">AGG</join>'\n",
        )
        .file("W.sh", "if [ \"$item\" = slow ]; then sleep 3; fi\necho \"<result>$item</result>\"\n")
        .file("AGG.sh", "cp \"$BATON_RESULTS\" results.json\necho '<result>partial</result>'\n")
        .run_workflow(&[]);
    outcome.status(0).stdout("partial\n");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outcome.root().join("results.json")).unwrap()).unwrap();
    assert_eq!(
        results,
        serde_json::json!([
            {"agent_id": "main_w1", "status": "terminated", "result": "quick"},
            {"agent_id": "main_w2", "status": "running", "result": null},
        ])
    );
    let completed = outcome.events_of("test", "JoinCompleted");
    assert_eq!(completed[0]["timed_out"], true);
    assert_eq!(outcome.events_of("test", "JoinWaiting")[0]["timeout_ms"].as_u64().map(|ms| ms <= 1000), Some(true));
    // The slow worker still ends: its result is the run's, not the join's.
    assert_eq!(outcome.state("test")["terminated"].as_array().unwrap().len(), 3);
}

#[test]
fn a_join_survives_a_stop_and_status_shows_whom_it_waits_for() {
    // --max-steps 1: START forks and joins, then the run pauses with main joining and
    // no worker started; `resume` evaluates the join again and finishes.
    let paused = three_workers_in_reverse().run_workflow(&["--max-steps", "1"]);
    paused.status(3);
    let status = paused.into_test().args(["status", "test"]).run();
    status.status(0);
    assert!(
        status.stdout.contains(
            "main  at START.sh  [joining, then AGG.sh: waits for main_worker1, main_worker2, main_worker3 (0 of 3 ended)]"
        ),
        "{}",
        status.stdout
    );
    let state = status.state("test");
    assert_eq!(state["agents"][0]["status"], "joining");
    assert_eq!(
        state["agents"][0]["join"]["workers"],
        serde_json::json!(["main_worker1", "main_worker2", "main_worker3"])
    );
    let resumed = status.rerun(["resume", "test", "--max-steps", "100"]);
    resumed.status(0).stdout("aggregated\n");
    assert_eq!(std::fs::read_to_string(resumed.root().join("got/results.json")).unwrap(), THREE_RESULTS);
}

#[test]
fn lint_checks_a_join_target_and_counts_a_join_as_a_forks_continuation() {
    let outcome = Test::new()
        .file("START.md", "Fork <fork item=\"a\">WORKER</fork> and then <join>AGG</join>.\n")
        .file("WORKER.md", "Work. <result>done</result>\n")
        .file("AGG.md", "Sum up. <result>ok</result>\n")
        .args(["lint", "wf"])
        .run();
    outcome.status(0).stdout("wf: no issues found\n");
    let outcome = Test::new()
        .file("START.md", "Fork <fork item=\"a\">WORKER</fork> and then <join timeout=\"5m\">AGGREGATE</join>.\n")
        .file("WORKER.md", "Work. <result>done</result>\n")
        .file("AGG.md", "Sum up. <result>ok</result>\n")
        .args(["lint", "wf"])
        .run();
    outcome.status(1);
    assert!(outcome.stdout.contains("error[missing-target]"), "{}", outcome.stdout);
    assert!(outcome.stdout.contains("AGGREGATE"), "{}", outcome.stdout);
    assert!(!outcome.stdout.contains("missing-fork-next"), "{}", outcome.stdout);
    let outcome = Test::new().file("START.md", "<join timeout=\"soon\">START</join>\n").args(["lint", "wf"]).run();
    outcome.status(1);
    assert!(outcome.stdout.contains("<join> `timeout` expected a duration"), "{}", outcome.stdout);
}

#[test]
fn diagram_draws_a_join_as_a_dashed_edge_of_the_same_agent() {
    let outcome = three_workers_in_reverse().args(["diagram", "wf"]).run();
    outcome.status(0);
    assert!(outcome.stdout.contains("START -.->|join| AGG"), "{}", outcome.stdout);
    assert!(outcome.stdout.contains("START -.->|fork| WORKER"), "{}", outcome.stdout);
}
