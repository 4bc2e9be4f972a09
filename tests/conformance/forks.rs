//! `<fork>` and multi-fork from scripts (R3.20–R3.23, R3.43–R3.45, A1–A3, A6;
//! §16 items 26–30).

use super::common::{
    RUN, agent, assert_fatal, assert_paused, emit, norm, say, spawned_by, started, state, str_of, terminated_result,
    transitions, with_wait_for,
};
use crate::support::Test;

fn result_state(text: &str) -> String {
    emit(&format!("<result>{text}</result>"))
}

#[test]
fn r3_22_fork_ids_and_persisted_counter() {
    let worker = r#"if [ "$BATON_AGENT_ID" = main_worker1 ]; then
  echo '<fork next="WDONE">ANALYZE</fork>'
else
  echo "<result>$BATON_AGENT_ID</result>"
fi
"#;
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<fork next="S2">WORKER</fork>"#))
        .file("S2.sh", &emit(r#"<fork next="S3">WORKER</fork>"#))
        .file("S3.sh", &emit(r#"<fork next="DONE">ANALYZE</fork>"#))
        .file("DONE.sh", &result_state("main done"))
        .file("WORKER.sh", worker)
        .file("WDONE.sh", &say("<result>$BATON_AGENT_ID done</result>"))
        .file("ANALYZE.sh", &say("<result>$BATON_AGENT_ID</result>"))
        .run_workflow(&[]);
    outcome.status(0).stdout("main done\n");
    assert_eq!(spawned_by(&outcome, "main"), ["main_worker1", "main_worker2", "main_analyz3"]);
    assert_eq!(spawned_by(&outcome, "main_worker1"), ["main_worker1_analyz1"]);
    let saved = state(&outcome);
    assert_eq!(saved["fork_counters"], serde_json::json!({"main": 3, "main_worker1": 1}));
    assert_eq!(terminated_result(&saved, "main_worker2"), "main_worker2");
    assert_eq!(terminated_result(&saved, "main_analyz3"), "main_analyz3");
    assert_eq!(terminated_result(&saved, "main_worker1"), "main_worker1 done");
    assert_eq!(terminated_result(&saved, "main_worker1_analyz1"), "main_worker1_analyz1");
    let spawned = outcome.events_of(RUN, "AgentSpawned");
    let initial: Vec<String> = spawned.iter().map(|event| str_of(&event["initial_state"])).collect();
    assert_eq!(initial.len(), 4);
    assert!(initial.iter().all(|state| state == "WORKER.sh" || state == "ANALYZE.sh"), "{initial:?}");
}

#[test]
fn r3_21_fork_attributes_cd_and_input_reach_the_worker() {
    let worker =
        say("<result>cwd=$(pwd -P) item=${item-unset} input=${BATON_INPUT-unset} cd=${cd-unset} next=${next-unset} \
         task=${task-unset}</result>");
    let outcome = Test::new()
        .write("w/.keep", "")
        .file("START.sh", &emit(r#"<fork next="N" item="a" cd="w" input="i">W</fork>"#))
        .file("W.sh", &worker)
        .file("N.sh", &say("<result>parent input=${BATON_INPUT-unset} item=${item-unset}</result>"))
        .run_workflow(&[]);
    outcome.status(0).stdout("parent input=unset item=unset\n");
    let result = terminated_result(&state(&outcome), "main_w1");
    assert_eq!(norm(&outcome, &result), "cwd=[ROOT]/w item=a input=i cd=unset next=unset task=unset");
}

#[test]
fn r2_2_fork_attributes_only_in_the_workers_first_state() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<fork next="N" item="a">W</fork>"#))
        .file("W.sh", &say("<goto input=\"first:${item-unset}\">W2</goto>"))
        .file("W2.sh", &say("<result>$BATON_INPUT second:${item-unset}</result>"))
        .file("N.sh", &result_state("n"))
        .run_workflow(&[]);
    outcome.status(0).stdout("n\n");
    assert_eq!(terminated_result(&state(&outcome), "main_w1"), "first:a second:unset");
    // The worker's first step recorded the attribute among the variables Baton set.
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outcome.run_dir(RUN).join("main_w1_W_001.meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["env_vars"]["item"], "a");
    assert_eq!(meta["env_vars"]["BATON_AGENT_ID"], "main_w1");
}

#[test]
fn r3_21_task_inherit_shares_the_parents_folder() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork task=\"inherit\">W</fork>\n<fork>W</fork>\n<goto>N</goto>"))
        .file("W.sh", &say("<result>$BATON_TASK_FOLDER</result>"))
        .file("N.sh", &say("<result>$BATON_TASK_FOLDER</result>"))
        .run_workflow(&[]);
    outcome.status(0);
    assert_eq!(norm(&outcome, &outcome.stdout), "[ROOT]/.baton/tasks/test/main\n");
    let saved = state(&outcome);
    assert_eq!(norm(&outcome, &terminated_result(&saved, "main_w1")), "[ROOT]/.baton/tasks/test/main");
    assert_eq!(norm(&outcome, &terminated_result(&saved, "main_w2")), "[ROOT]/.baton/tasks/test/main_w2");
    assert!(outcome.root().join(".baton/tasks/test/main_w2").is_dir());
    assert!(!outcome.root().join(".baton/tasks/test/main_w1").exists());
}

#[test]
fn a3_fork_worker_inherits_the_parents_cwd() {
    let outcome = Test::new()
        .write("sub/.keep", "")
        .file("START.sh", &emit(r#"<reset cd="sub">FORKER</reset>"#))
        .file("FORKER.sh", &emit(r#"<fork next="N">W</fork>"#))
        .file("W.sh", &say("<result>$(pwd -P)</result>"))
        .file("N.sh", &result_state("n"))
        .run_workflow(&[]);
    outcome.status(0);
    assert_eq!(norm(&outcome, &terminated_result(&state(&outcome), "main_w1")), "[ROOT]/sub");
}

#[test]
fn a1_multi_fork_spawns_every_worker_and_continues() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork k=\"1\">A</fork>\n<fork k=\"2\">B</fork>\n<goto>N</goto>"))
        .file("A.sh", &say("<result>A k=$k</result>"))
        .file("B.sh", &say("<result>B k=$k</result>"))
        .file("N.sh", &say("<result>N k=${k-unset}</result>"))
        .run_workflow(&[]);
    outcome.status(0).stdout("N k=unset\n");
    assert_eq!(spawned_by(&outcome, "main"), ["main_a1", "main_b2"]);
    let spawned = outcome.events_of(RUN, "AgentSpawned");
    let initial: Vec<String> = spawned.iter().map(|event| str_of(&event["initial_state"])).collect();
    assert_eq!(initial, ["A.sh", "B.sh"], "multi-fork targets are resolved (A2)");
    let parent = outcome
        .events_of(RUN, "TransitionOccurred")
        .into_iter()
        .find(|event| event["agent_id"] == "main" && event["from_state"] == "START.sh")
        .expect("main's transition");
    assert_eq!(parent["transition_type"], "multi-fork");
    assert_eq!(parent["to_state"], "N.sh");
    assert_eq!(parent["metadata"]["workers"], "main_a1,main_b2");
    let saved = state(&outcome);
    assert_eq!(terminated_result(&saved, "main_a1"), "A k=1");
    assert_eq!(terminated_result(&saved, "main_b2"), "B k=2");
    assert_eq!(saved["fork_counters"], serde_json::json!({"main": 2}));
}

#[test]
fn a2_multi_fork_continuations_are_compared_after_resolution() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork next=\"N\">A</fork>\n<goto>N.sh</goto>"))
        .file("A.sh", &result_state("a"))
        .file("N.sh", &result_state("n"))
        .run_workflow(&[]);
    outcome.status(0).stdout("n\n");
    assert_eq!(spawned_by(&outcome, "main"), ["main_a1"]);
}

#[test]
fn r3_44_multi_fork_disagreeing_next_pauses() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork next=\"N1\">A</fork>\n<fork next=\"N2\">A</fork>"))
        .file("A.sh", "touch ran_a\necho '<result>a</result>'\n")
        .file("N1.sh", &result_state("n1"))
        .file("N2.sh", &result_state("n2"))
        .run_workflow(&[]);
    assert_paused(
        &outcome,
        "main",
        "START.sh",
        "validation_error",
        "script `START.sh` produced an invalid multi-fork: the continuations disagree (N1.sh, N2.sh); every \
         `next` and the <goto> or <join> must name the same state",
    );
    assert!(outcome.events_of(RUN, "AgentSpawned").is_empty());
    assert!(!outcome.root().join("ran_a").exists());
    assert_eq!(state(&outcome)["fork_counters"], serde_json::json!({}));
}

#[test]
fn r3_44_multi_fork_with_a_goto_disagreeing_with_next_pauses() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork next=\"N1\">A</fork>\n<goto>N2</goto>"))
        .file("A.sh", &result_state("a"))
        .file("N1.sh", &result_state("n1"))
        .file("N2.sh", &result_state("n2"))
        .run_workflow(&[]);
    assert_paused(
        &outcome,
        "main",
        "START.sh",
        "validation_error",
        "script `START.sh` produced an invalid multi-fork: the continuations disagree (N1.sh, N2.sh); every \
         `next` and the <goto> or <join> must name the same state",
    );
}

#[test]
fn r3_44_multi_fork_mixed_with_result_pauses() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork next=\"N\">A</fork>\n<goto>N</goto>\n<result>x</result>"))
        .file("A.sh", &result_state("a"))
        .file("N.sh", &result_state("n"))
        .run_workflow(&[]);
    assert_paused(
        &outcome,
        "main",
        "START.sh",
        "validation_error",
        "script `START.sh` produced an invalid multi-fork: <result> cannot be combined with <fork>; only <fork> \
         tags and one <goto> or <join> may appear together",
    );
    assert!(outcome.events_of(RUN, "AgentSpawned").is_empty());
}

#[test]
fn r3_44_multi_fork_with_two_gotos_pauses() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork>A</fork>\n<goto>N</goto>\n<goto>N</goto>"))
        .file("A.sh", &result_state("a"))
        .file("N.sh", &result_state("n"))
        .run_workflow(&[]);
    assert_paused(
        &outcome,
        "main",
        "START.sh",
        "validation_error",
        "script `START.sh` produced an invalid multi-fork: 2 continuation tags (<goto>, <goto>); at most one \
         <goto> or <join> may give the continuation",
    );
}

#[test]
fn r3_44_multi_fork_without_continuation_pauses() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork>A</fork>\n<fork>B</fork>"))
        .file("A.sh", &result_state("a"))
        .file("B.sh", &result_state("b"))
        .run_workflow(&["--no-lint"]);
    assert_paused(
        &outcome,
        "main",
        "START.sh",
        "validation_error",
        "script `START.sh` produced an invalid multi-fork: no continuation: give one <fork> a `next` attribute \
         or add a <goto> or a <join>",
    );
}

#[test]
fn a2_multi_fork_unresolvable_worker_target_is_fatal() {
    let outcome = Test::new()
        .file("START.sh", &emit("<fork>A</fork>\n<fork>MISSING</fork>\n<goto>N</goto>"))
        .file("A.sh", "touch ran_a\necho '<result>a</result>'\n")
        .file("N.sh", &result_state("n"))
        .run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TargetResolutionError",
        "script `START.sh`: cannot resolve its transition target: state `MISSING` not found in workflow `[ROOT]/wf` (looked for \
         MISSING.md, MISSING.sh)",
    );
    assert!(!outcome.root().join("ran_a").exists(), "no worker starts");
}

#[test]
fn r3_23_parent_and_workers_run_concurrently() {
    // Each worker's first state waits for `go`, which the parent writes in its next
    // state, and the parent then waits for every worker's `done_*` file: the run can
    // only finish if the parent and both workers run at the same time.
    let worker = with_wait_for(
        "wait_for shared/go\ntouch \"shared/done_$item\"\necho \"<result>worker $item finished</result>\"\n",
    );
    let gather = with_wait_for(
        "touch shared/go\nwait_for shared/done_a\nwait_for shared/done_b\necho '<result>gathered a and b</result>'\n",
    );
    let outcome = Test::new()
        .write("shared/.keep", "")
        .file("START.sh", &emit("<fork next=\"GATHER\" item=\"a\">W</fork>\n<fork next=\"GATHER\" item=\"b\">W</fork>"))
        .file("W.sh", &worker)
        .file("GATHER.sh", &gather)
        .run_workflow(&[]);
    outcome.status(0).stdout("gathered a and b\n");
    let saved = state(&outcome);
    assert_eq!(terminated_result(&saved, "main_w1"), "worker a finished");
    assert_eq!(terminated_result(&saved, "main_w2"), "worker b finished");
    let mut steps = started(&outcome);
    steps.sort();
    assert_eq!(steps, ["main:GATHER.sh", "main:START.sh", "main_w1:W.sh", "main_w2:W.sh"]);
}

#[test]
fn r3_23_single_fork_parent_continues_at_next() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<fork next="N">W</fork>"#))
        .file("W.sh", &result_state("w"))
        .file("N.sh", &result_state("n"))
        .run_workflow(&[]);
    outcome.status(0).stdout("n\n");
    let all = transitions(&outcome);
    assert!(all.contains(&"main:START.sh -fork-> N.sh".to_string()), "{all:?}");
    assert!(all.contains(&"main_w1:W.sh -result-> -".to_string()), "{all:?}");
    let saved = state(&outcome);
    assert_eq!(agent_count(&saved), 0);
    assert_eq!(saved["fork_counters"], serde_json::json!({"main": 1}));
    // The trace: transitions.log and per-agent numbered step files.
    let log = std::fs::read_to_string(outcome.run_dir(RUN).join("transitions.log")).unwrap();
    assert!(log.contains(" main START.sh -> N.sh [fork] workers=\"main_w1\"\n"), "{log}");
    assert!(log.contains(" main_w1 W.sh -> (terminated) [result] payload=\"w\"\n"), "{log}");
    let step_file = |name: &str| std::fs::read_to_string(outcome.run_dir(RUN).join(name)).unwrap();
    assert_eq!(step_file("main_START_001.stdout.txt"), "<fork next=\"N\">W</fork>\n");
    assert_eq!(step_file("main_N_002.stdout.txt"), "<result>n</result>\n");
    assert_eq!(step_file("main_w1_W_001.stdout.txt"), "<result>w</result>\n");
    assert_eq!(step_file("main_w1_W_001.stderr.txt"), "");
}

fn agent_count(state: &serde_json::Value) -> usize {
    state["agents"].as_array().map_or(0, Vec::len)
}

#[test]
fn r3_44_paused_agent_keeps_its_state_while_siblings_finish() {
    // A worker's invalid multi-fork pauses only that worker; the parent completes.
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<fork next="N">W</fork>"#))
        .file("W.sh", &emit("<fork next=\"X\">A</fork>\n<fork next=\"Y\">A</fork>"))
        .file("A.sh", &result_state("a"))
        .file("X.sh", &result_state("x"))
        .file("Y.sh", &result_state("y"))
        .file("N.sh", &result_state("n"))
        .run_workflow(&[]);
    assert_paused(
        &outcome,
        "main_w1",
        "W.sh",
        "validation_error",
        "script `W.sh` produced an invalid multi-fork: the continuations disagree (X.sh, Y.sh); every `next` \
         and the <goto> or <join> must name the same state",
    );
    let saved = state(&outcome);
    assert_eq!(terminated_result(&saved, "main"), "n");
    assert_eq!(agent(&saved, "main_w1")["status"], "paused");
}
