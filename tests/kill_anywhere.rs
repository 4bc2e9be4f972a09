//! Crash safety at every instant (issue: durable runs). Real runs of a loop, a
//! 50-worker fan-out and a deep call stack are SIGKILLed at pseudo-random moments
//! and resumed until they finish. Afterwards the result must be the one a clean run
//! gives, and the trace must show every completed step exactly once (each journal
//! commit's `TransitionOccurred` once, as many as the run's completed steps).
//!
//! The moments come from a seeded generator; the seed is printed on failure and
//! `BATON_KILL_SEED=<seed>` replays it. The failpoint tests hit each persistence
//! window (`src/failpoint.rs`) deliberately instead of by chance.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::test_builder::normalize;
use crate::support::{Outcome, Test};

/// A small xorshift generator: deterministic for a seed, no dependency.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }
}

fn seed() -> u64 {
    std::env::var("BATON_KILL_SEED").ok().and_then(|seed| seed.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |time| time.as_nanos() as u64) | 1
    })
}

fn loop_workflow() -> Test {
    Test::new().file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n").file(
        "STEP.sh",
        "n=$BATON_INPUT\necho \"step $n\" >> effects.log\n\
         if [ \"$n\" -ge 40 ]; then echo \"<result>looped $n</result>\"; \
         else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n",
    )
}

fn fanout_workflow() -> Test {
    Test::new()
        .file("START.sh", "for i in $(seq 50); do echo \"<fork next=\\\"DONE\\\" i=\\\"$i\\\">W</fork>\"; done\n")
        .file("W.sh", "echo \"<goto input=\\\"$i\\\">W2</goto>\"\n")
        .file("W2.sh", "echo \"worker $BATON_INPUT\" >> effects.log\necho \"<result>$BATON_INPUT</result>\"\n")
        .file("DONE.sh", "echo '<result>fanned out</result>'\n")
}

/// Twenty workers of two steps each, finishing in random order, joined by main;
/// AGG lists their results from `$BATON_RESULTS`, which must be in fork order.
fn join_workflow() -> Test {
    Test::new()
        .file("START.sh", "for i in $(seq 20); do echo \"<fork i=\\\"$i\\\">W</fork>\"; done\necho '<join>AGG</join>'\n")
        .file("W.sh", "sleep 0.0$((RANDOM % 5))\necho \"<goto input=\\\"$i\\\">W2</goto>\"\n")
        .file("W2.sh", "echo \"worker $BATON_INPUT\" >> effects.log\necho \"<result>$BATON_INPUT</result>\"\n")
        .file(
            "AGG.sh",
            "[ \"$(grep -c '\"status\": \"terminated\"' \"$BATON_RESULTS\")\" = 20 ] || exit 1\n\
             echo \"<result>joined $(grep -o '\"result\": \"[0-9]*\"' \"$BATON_RESULTS\" | grep -o '[0-9]*' | paste -sd, -)</result>\"\n",
        )
}

/// What `join_workflow` ends with.
const JOINED: &str = "joined 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20";

fn callstack_workflow() -> Test {
    Test::new()
        .file("START.sh", "echo '<function return=\"REPORT\" input=\"25\">DOWN</function>'\n")
        .file(
            "DOWN.sh",
            "n=$BATON_INPUT\nif [ \"$n\" -le 0 ]; then echo '<result>0</result>'; \
             else echo \"<call return=\\\"UP\\\" input=\\\"$((n - 1))\\\">DOWN</call>\"; fi\n",
        )
        .file("UP.sh", "echo \"<result>$((BATON_INPUT + 1))</result>\"\n")
        .file("REPORT.sh", "echo \"<result>depth $BATON_INPUT</result>\"\n")
}

/// Into another workflow and back: a `<call-workflow>` whose callee recurses with
/// plain calls inside its own workflow, then returns into the caller's.
fn cross_workflow_workflow() -> Test {
    Test::new()
        .file("START.sh", "echo '<call-workflow return=\"REPORT\" input=\"20\">../down/</call-workflow>'\n")
        .write(
            "down/START.sh",
            "n=$BATON_INPUT\nif [ \"$n\" -le 0 ]; then echo '<result>0</result>'; \
             else echo \"<call return=\\\"UP\\\" input=\\\"$((n - 1))\\\">START</call>\"; fi\n",
        )
        .write("down/UP.sh", "echo \"<result>$((BATON_INPUT + 1))</result>\"\n")
        .file("REPORT.sh", "echo \"<result>crossed $BATON_INPUT</result>\"\n")
}

/// The trace's committed steps: each commit must appear once, and there must be as
/// many as the run completed.
fn assert_every_step_traced_once(outcome: &Outcome, run_id: &str, context: &str) {
    let mut commits: BTreeMap<u64, usize> = BTreeMap::new();
    for event in outcome.events_of(run_id, "TransitionOccurred") {
        *commits.entry(event["commit"].as_u64().expect("commit")).or_default() += 1;
    }
    let duplicated: Vec<_> = commits.iter().filter(|(_, count)| **count > 1).collect();
    assert!(duplicated.is_empty(), "{context}: steps traced twice: {duplicated:?}");
    let steps = outcome.state(run_id)["steps_completed"].as_u64().expect("steps_completed");
    assert_eq!(commits.len() as u64, steps, "{context}: every completed step is in the trace");
}

/// The run's status as `baton status --json` reports it ("" before it exists).
fn run_status(test: &Test, run_id: &str) -> String {
    let output = test.command(&["status".into(), "--json".into(), run_id.into()]).output().expect("status");
    serde_json::from_slice::<serde_json::Value>(&output.stdout)
        .ok()
        .and_then(|state| state["status"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Run `workflow` to completion, SIGKILLing it up to `kills` times; returns the
/// final outcome and how many kills landed.
fn run_with_kills(workflow: Test, run_id: &str, kills: u32, random: &mut Random, seed: u64) -> (Outcome, u32) {
    let mut landed = 0;
    let mut first = true;
    let test = workflow;
    loop {
        let args: Vec<&str> =
            if first { vec!["run", "wf", "--run-id", run_id, "-q"] } else { vec!["resume", run_id, "-q"] };
        if landed >= kills {
            let outcome = test.args(args).run();
            assert_eq!(outcome.status, 0, "seed {seed}: final run failed\n{}", outcome.stderr);
            return (outcome, landed);
        }
        let mut child = test.spawn(&args);
        let delay = Duration::from_millis(random.between(5, 120));
        let started = Instant::now();
        let finished = loop {
            if child.try_wait().expect("wait").is_some() {
                break true;
            }
            if started.elapsed() >= delay {
                break false;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        match finished {
            true => {
                let output = child.wait_with_output().expect("output");
                let stderr = String::from_utf8_lossy(&output.stderr);
                assert_eq!(output.status.code(), Some(0), "seed {seed}: a run between kills failed\n{stderr}");
                let outcome = test.args(["status", run_id]).run();
                return (outcome, landed);
            }
            false => {
                // SAFETY: signal delivery to our own child.
                unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
                let _ = child.wait();
                first = false;
                landed += 1;
                // The kill may have landed after the run completed, just before exit.
                match run_status(&test, run_id).as_str() {
                    "completed" => return (test.args(["status", run_id]).run(), landed),
                    // Killed before the run was even created: start it again.
                    "" => first = true,
                    _ => {}
                }
            }
        }
    }
}

/// A workflow to crash: its name, how to build it, and its result.
type Case = (&'static str, fn() -> Test, &'static str);

#[test]
fn kill_anywhere_then_resume_gives_the_clean_result_and_an_exact_trace() {
    let seed = seed();
    let mut random = Random(seed);
    let mut total_kills = 0;
    let cases: [Case; 5] = [
        ("loop", loop_workflow, "looped 40"),
        ("fanout", fanout_workflow, "fanned out"),
        ("join", join_workflow, JOINED),
        ("callstack", callstack_workflow, "depth 25"),
        ("crossing", cross_workflow_workflow, "crossed 20"),
    ];
    for (name, workflow, expected) in cases {
        // Keep killing until at least 12 kills landed on this workflow, across attempts.
        let mut kills_here = 0;
        let mut attempt = 0;
        while kills_here < 12 {
            attempt += 1;
            let run_id = format!("{name}{attempt}");
            let (outcome, landed) = run_with_kills(workflow(), &run_id, 12 - kills_here, &mut random, seed);
            kills_here += landed;
            let context = format!("seed {seed}, {run_id} after {landed} kills");
            let state = outcome.state(&run_id);
            assert_eq!(state["status"], "completed", "{context}");
            let main = state["terminated"].as_array().unwrap().iter().find(|agent| agent["id"] == "main").cloned();
            assert_eq!(main.map(|agent| agent["result"].clone()), Some(expected.into()), "{context}");
            assert_every_step_traced_once(&outcome, &run_id, &context);
            assert!(attempt < 20, "{context}: kills keep missing the run");
        }
        total_kills += kills_here;
    }
    assert!(total_kills >= 30, "seed {seed}: only {total_kills} kills");
}

/// The loop workflow, crashed by `failpoint` and then resumed without it.
fn crash_at(failpoint: &str) -> Outcome {
    let crashed =
        loop_workflow().env("BATON_FAILPOINT", failpoint).env("BATON_COMPACT_EVERY", "4").run_workflow(&["-q"]);
    assert_eq!(crashed.status, -1, "{failpoint}: baton crashed itself\n{}", crashed.stderr);
    let outcome = crashed.into_test().env_remove("BATON_FAILPOINT").args(["resume", "test", "-q"]).run();
    outcome.status(0).stdout("looped 40\n");
    outcome
}

/// A crash in every window around the commits of a fan-out and its join (the
/// join's own commit included): the resumed run joins all twenty workers, in
/// fork order, and no committed step runs again.
#[test]
fn failpoints_during_a_join_resume_to_the_clean_result() {
    let windows = ["after_step_exit", "after_journal_append", "before_journal_sync", "after_journal_sync"];
    let mut crashes = 0;
    for (index, failpoint) in windows.iter().enumerate() {
        for hit in [1, 2, 21, 41, 42] {
            let armed = format!("{failpoint}:{hit}");
            let run_id = format!("j{index}_{hit}");
            let crashed = join_workflow()
                .env("BATON_FAILPOINT", &armed)
                .env("BATON_COMPACT_EVERY", "7")
                .args(["run", "wf", "--run-id", &run_id, "-q"])
                .run();
            if crashed.status == 0 {
                // Fewer hits than that in this run (a sync may cover several entries).
                crashed.stdout(&format!("{JOINED}\n"));
                continue;
            }
            assert_eq!(crashed.status, -1, "{armed}: baton crashed itself\n{}", crashed.stderr);
            crashes += 1;
            // A crash at the very end (the run's completion written, its sync not yet
            // done) leaves a completed run: the write reached the page cache, which a
            // killed process does not lose. Resume then rightly refuses; the result stands.
            if crashed.state(&run_id)["status"] == "completed" {
                let state = crashed.state(&run_id);
                let main = state["terminated"].as_array().and_then(|agents| agents.iter().find(|a| a["id"] == "main"));
                assert_eq!(main.map(|main| main["result"].clone()), Some(JOINED.into()), "{armed}: {state}");
                continue;
            }
            let outcome = crashed.into_test().env_remove("BATON_FAILPOINT").args(["resume", &run_id, "-q"]).run();
            outcome.status(0).stdout(&format!("{JOINED}\n"));
            assert_every_step_traced_once(&outcome, &run_id, &armed);
            // Only steps in flight at the crash ran again (each at most once more).
            let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap();
            for worker in 1..=20 {
                let runs = effects.lines().filter(|line| *line == format!("worker {worker}")).count();
                assert!((1..=2).contains(&runs), "{armed}: worker {worker} ran {runs} times:\n{effects}");
            }
            // A crash before its events' sync can keep the join's event out of the trace
            // (only steps are re-published); it is never there twice.
            assert!(outcome.events_of(&run_id, "JoinCompleted").len() <= 1, "{armed}: the join completed once");
        }
    }
    assert!(crashes >= 12, "only {crashes} of the 20 failpoints crashed the run");
}

#[test]
fn failpoint_after_step_exit_reruns_only_that_step() {
    let outcome = crash_at("after_step_exit:5");
    assert_every_step_traced_once(&outcome, "test", "after_step_exit");
    let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap();
    assert_eq!(effects.matches("step 4\n").count(), 2, "the step whose result was not committed ran again");
    assert_eq!(effects.lines().count(), 41);
}

#[test]
fn failpoint_after_journal_append_keeps_the_step_and_restores_its_trace() {
    let outcome = crash_at("after_journal_append:6");
    assert_every_step_traced_once(&outcome, "test", "after_journal_append");
    let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap();
    assert_eq!(effects.lines().count(), 40, "no step ran twice: the committed one was not re-run");
    let recovered =
        outcome.events_of("test", "TransitionOccurred").into_iter().filter(|e| e["recovered"] == true).count();
    // The step just written is kept out of the trace; so is the one before it when its
    // sync was still running (its events wait for it). The resume restores both.
    assert!(
        (1..=2).contains(&recovered),
        "the crash kept {recovered} steps out of the trace; the resume restored them"
    );
}

/// The next step starts before the entry's sync: a crash there keeps the written
/// step (a killed process loses nothing `write` handed to the kernel), restores its
/// trace line (its events waited for the sync), and runs at most the step that had
/// started again.
#[test]
fn failpoint_before_journal_sync_keeps_the_written_step_and_restores_its_trace() {
    let outcome = crash_at("before_journal_sync:6");
    assert_every_step_traced_once(&outcome, "test", "before_journal_sync");
    let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap();
    assert!(effects.lines().count() <= 41, "at most the step in flight ran again:\n{effects}");
    let recovered =
        outcome.events_of("test", "TransitionOccurred").into_iter().filter(|e| e["recovered"] == true).count();
    assert!(recovered >= 1, "the step awaiting its sync was kept out of the trace, and restored");
}

#[test]
fn failpoint_after_journal_sync_loses_nothing() {
    let outcome = crash_at("after_journal_sync:6");
    assert_every_step_traced_once(&outcome, "test", "after_journal_sync");
    let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap();
    assert!(effects.lines().count() <= 41, "at most the step in flight ran again:\n{effects}");
}

#[test]
fn failpoint_before_snapshot_loses_nothing() {
    let outcome = crash_at("before_snapshot:3");
    assert_every_step_traced_once(&outcome, "test", "before_snapshot");
    let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap();
    assert_eq!(effects.lines().count(), 40);
}

#[test]
fn failpoint_after_snapshot_skips_entries_the_snapshot_holds() {
    let outcome = crash_at("after_snapshot:3");
    assert_every_step_traced_once(&outcome, "test", "after_snapshot");
    let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap();
    assert_eq!(effects.lines().count(), 40);
}

#[test]
fn a_torn_journal_tail_is_dropped_on_resume() {
    let crashed = loop_workflow().env("BATON_FAILPOINT", "after_step_exit:10").run_workflow(&["-q"]);
    assert_eq!(crashed.status, -1);
    let journal = crashed.run_dir("test").join("journal.jsonl");
    let mut bytes = std::fs::read(&journal).unwrap();
    bytes.extend_from_slice(b"{\"commit\":999,\"run\":{\"sta");
    std::fs::write(&journal, bytes).unwrap();
    let outcome = crashed.into_test().env_remove("BATON_FAILPOINT").args(["resume", "test", "-q"]).run();
    outcome.status(0).stdout("looped 40\n");
    assert_every_step_traced_once(&outcome, "test", "torn tail");
}

#[test]
fn a_damaged_journal_is_reported_not_replayed() {
    let crashed = loop_workflow().env("BATON_FAILPOINT", "after_step_exit:10").run_workflow(&["-q"]);
    let journal = crashed.run_dir("test").join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    // Line 1 is the run's first snapshot; the first entry is line 2.
    let damaged = text.replacen("\"commit\"", "\"c0mmit\"", 1);
    std::fs::write(&journal, damaged).unwrap();
    let outcome = crashed.into_test().env_remove("BATON_FAILPOINT").args(["resume", "test"]).run();
    outcome.status(1);
    let message = outcome.error_message();
    assert!(
        message.starts_with(
            "error: the journal [ROOT]/.baton/runs/test/journal.jsonl is damaged at line 2: missing field `commit`"
        ),
        "{message}"
    );
    assert!(
        message.ends_with(
            "; the entries before it are intact: `baton repair test` keeps them (with a backup of the whole \
             journal) so the run can resume"
        ),
        "{message}"
    );
}

/// Regression: a damaged journal was reported with no way forward. `baton repair`
/// keeps the intact entries before the damage (after a backup) and the run resumes.
#[test]
fn repair_keeps_the_intact_entries_and_the_run_resumes() {
    let crashed = loop_workflow().env("BATON_FAILPOINT", "after_step_exit:10").run_workflow(&["-q"]);
    let journal = crashed.run_dir("test").join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Line 1 is the run's first snapshot, then entries 1 to 4, then the damage.
    assert!(lines[0].starts_with("{\"snapshot\":"), "{}", lines[0]);
    lines[5] = lines[5].replacen("\"commit\"", "\"c0mmit\"", 1);
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let test = crashed.into_test().env_remove("BATON_FAILPOINT");
    let repaired = test.args(["repair", "test"]).run();
    repaired.status(0);
    let report = normalize(&repaired.stdout, repaired.root());
    assert!(report.starts_with("cut the journal of run test at line 6: missing field `commit`"), "{report}");
    assert!(report.contains("\nkept 4 entries after the snapshot; the run now ends at commit "), "{report}");
    assert!(report.contains("\nthe whole journal was copied to [ROOT]/.baton/runs/test/journal.jsonl.damaged-"));
    assert!(report.ends_with("\ncontinue with `baton resume test`\n"), "{report}");
    let backups: Vec<_> = std::fs::read_dir(repaired.run_dir("test"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("journal.jsonl.damaged-"))
        .collect();
    assert_eq!(backups.len(), 1);
    assert_eq!(std::fs::read_to_string(backups[0].path()).unwrap(), lines.join("\n") + "\n", "the backup is whole");
    let again = repaired.rerun(["repair", "test"]);
    again.status(0).stdout("the journal of run test is intact (4 entries after the snapshot); nothing to repair\n");
    again.rerun(["resume", "test", "-q"]).status(0).stdout("looped 40\n");
}

/// Regression: a journal with an entry missing in the middle was replayed as if
/// whole. Entries are numbered, so the gap is found.
#[test]
fn a_journal_with_a_missing_entry_is_reported() {
    let crashed = loop_workflow().env("BATON_FAILPOINT", "after_step_exit:10").run_workflow(&["-q"]);
    let journal = crashed.run_dir("test").join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let missing: serde_json::Value = serde_json::from_str(lines.remove(4)).unwrap();
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let outcome = crashed.into_test().env_remove("BATON_FAILPOINT").args(["resume", "test"]).run();
    outcome.status(1);
    let commit = missing["commit"].as_u64().unwrap();
    assert!(
        outcome.error_message().starts_with(&format!(
            "error: the journal [ROOT]/.baton/runs/test/journal.jsonl is damaged at line 5: entry {} follows entry {}: \
             entries are missing;",
            commit + 1,
            commit - 1
        )),
        "{}",
        outcome.error_message()
    );
}

/// A new run no longer rewrites the snapshot it has just created before its first
/// commit: a crash at that first commit (the launch plan) resumes from the
/// created snapshot, and a crash right after the first step from its journal entry.
#[test]
fn a_crash_at_the_first_commits_of_a_new_run_resumes() {
    for failpoint in ["after_journal_append:1", "after_journal_append:2", "before_journal_sync:1", "after_step_exit:1"]
    {
        let outcome = crash_at(failpoint);
        assert_every_step_traced_once(&outcome, "test", failpoint);
        let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap();
        assert!(effects.lines().count() <= 41, "{failpoint}: at most the crashed step ran again");
    }
}

/// 1,000 live agents (one multi-fork), SIGKILLed at random moments and resumed:
/// the run reaches the clean result, every committed step is traced once, and
/// every worker did its work (a step in flight at a kill runs again, so a worker's
/// effect may appear twice).
#[test]
fn kill_anywhere_during_a_fan_out_of_1000_live_agents() {
    let seed = seed();
    let mut random = Random(seed);
    let workflow = || {
        Test::new()
            .file("START.sh", "for i in $(seq 1000); do echo \"<fork next=\\\"DONE\\\" i=\\\"$i\\\">W</fork>\"; done\n")
            .file("W.sh", "echo \"worker $i\" >> effects.log\necho \"<result>$i</result>\"\n")
            .file("DONE.sh", "echo '<result>fanned out</result>'\n")
    };
    let (outcome, landed) = run_with_kills(workflow(), "wide", 8, &mut random, seed);
    let context = format!("seed {seed}, after {landed} kills");
    let state = outcome.state("wide");
    assert_eq!(state["status"], "completed", "{context}");
    assert_eq!(state["steps_completed"], 1002, "{context}");
    assert_every_step_traced_once(&outcome, "wide", &context);
    let effects = std::fs::read_to_string(outcome.root().join("effects.log")).unwrap_or_default();
    let workers: std::collections::BTreeSet<&str> = effects.lines().collect();
    assert_eq!(workers.len(), 1000, "{context}: every worker ran");
    assert!(landed > 0, "{context}: no kill landed");
}

/// A loop that stops to ask at step 10, killed at random moments; each time a run
/// stops to ask it is answered. It still reaches the clean result, with every
/// committed step traced once.
#[test]
fn kill_anywhere_around_an_ask_then_answer_gives_the_clean_result() {
    let seed = seed();
    let mut random = Random(seed);
    let test = Test::new()
        .file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n")
        .file(
            "STEP.sh",
            "n=$BATON_INPUT\necho \"step $n\" >> effects.log\nsleep 0.005\n\
             if [ \"$n\" -eq 10 ]; then echo '<ask next=\"AFTER\">go on?</ask>'; \
             elif [ \"$n\" -ge 20 ]; then echo \"<result>done $n</result>\"; \
             else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n",
        )
        .file("AFTER.sh", "echo \"answer $BATON_INPUT\" >> effects.log\necho '<goto input=\"11\">STEP</goto>'\n");
    let mut next: Vec<&str> = vec!["run", "wf", "--run-id", "ask", "-q", "--on-ask", "pause"];
    let mut kills = 0;
    let outcome = loop {
        if kills >= 8 {
            let output = test.spawn(&next).wait_with_output().expect("baton");
            match output.status.code() {
                Some(0) => break test.args(["status", "ask"]).run(),
                Some(2) => next = vec!["resume", "ask", "-q", "--input", "yes"],
                other => panic!("seed {seed}: exit {other:?}\n{}", String::from_utf8_lossy(&output.stderr)),
            }
            continue;
        }
        let mut child = test.spawn(&next);
        let delay = Duration::from_millis(random.between(5, 40));
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break Some(status);
            }
            if started.elapsed() >= delay {
                break None;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        match status.and_then(|status| status.code()) {
            Some(0) => break test.args(["status", "ask"]).run(),
            Some(2) => next = vec!["resume", "ask", "-q", "--input", "yes"],
            Some(other) => panic!("seed {seed}: a run between kills exited {other}"),
            None => {
                // SAFETY: signal delivery to our own child.
                unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
                let _ = child.wait();
                kills += 1;
                next = match run_status(&test, "ask").as_str() {
                    "" => vec!["run", "wf", "--run-id", "ask", "-q", "--on-ask", "pause"],
                    "completed" => break test.args(["status", "ask"]).run(),
                    _ => vec!["resume", "ask", "-q"],
                };
            }
        }
    };
    let state = outcome.state("ask");
    assert_eq!(state["status"], "completed", "seed {seed}");
    let main = state["terminated"].as_array().and_then(|all| all.iter().find(|agent| agent["id"] == "main")).cloned();
    assert_eq!(main.map(|agent| agent["result"].clone()), Some("done 20".into()), "seed {seed}");
    assert_every_step_traced_once(&outcome, "ask", &format!("seed {seed}, {kills} kills"));
    let effects = std::fs::read_to_string(outcome.root().join("effects.log")).expect("effects");
    assert!(effects.contains("answer yes"), "seed {seed}: the answer arrived\n{effects}");
    assert!(kills >= 1, "seed {seed}: no kill landed");
}
