//! `baton rerun RUN --from STEP`: a new run whose history is RUN's up to commit STEP
//! and which runs on from there; RUN itself is only read. Script workflows prove it
//! cheaply (marker lines show what ran); the fake `claude` records the session
//! flags; the real Claude Code CLI against the fake Anthropic API proves that the
//! rerun's first turn continues a fork of the recorded conversation and leaves the
//! original's session as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::support::claude_cli::{CLAUDE_ENV_REMOVE, claude_binary, claude_env};
use crate::support::fake_anthropic::{FakeAnthropic, Rule};
use crate::support::fake_claude::{FakeClaude, Reply};
use crate::support::{Outcome, Test};

/// Every file under `dir` with its bytes, by path relative to `dir`.
fn files_of(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(root, &path, files);
            } else {
                let relative = path.strip_prefix(root).expect("under root").to_path_buf();
                files.insert(relative, std::fs::read(&path).expect("read file"));
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(dir, dir, &mut files);
    files
}

/// Marker lines the scripts appended to `<root>/markers.log`.
fn markers(outcome: &Outcome) -> Vec<String> {
    std::fs::read_to_string(outcome.root().join("markers.log")).unwrap_or_default().lines().map(String::from).collect()
}

/// START → COUNT 3, 2, 1, 0 → `Liftoff!`; every state appends a marker line.
/// Commit 1 launches main, commit 2 is START's step, commit 3 is `COUNT 3`'s
/// (which passes 2 on), and so on to commit 6, `COUNT 0`'s `<result>`.
fn countdown() -> Test {
    Test::new().file("START.sh", "echo START >> markers.log\necho '<goto input=\"3\">COUNT.sh</goto>'\n").file(
        "COUNT.sh",
        "echo \"COUNT $BATON_INPUT\" >> markers.log\n\
             if [ \"$BATON_INPUT\" -le 0 ]; then echo '<result>Liftoff!</result>'; \
             else echo \"<goto input=\\\"$((BATON_INPUT - 1))\\\">COUNT.sh</goto>\"; fi\n",
    )
}

/// The trace's `TransitionOccurred` events of run `run_id` as `commit from -> to input`.
fn transitions(outcome: &Outcome, run_id: &str) -> Vec<String> {
    outcome
        .events_of(run_id, "TransitionOccurred")
        .iter()
        .map(|event| {
            let to = event["to_state"].as_str().unwrap_or("(terminated)");
            let input = event["metadata"]["input"].as_str().or(event["metadata"]["payload"].as_str()).unwrap_or("");
            format!("{} {} -> {to} {input}", event["commit"], event["from_state"].as_str().unwrap_or(""))
        })
        .collect()
}

#[test]
fn rerun_from_the_middle_of_a_countdown_runs_only_the_remaining_steps() {
    let original = countdown().run_workflow(&["-q"]);
    original.status(0).stdout("Liftoff!\n");
    assert_eq!(markers(&original), ["START", "COUNT 3", "COUNT 2", "COUNT 1", "COUNT 0"]);
    assert_eq!(transitions(&original, "test")[1], "3 COUNT.sh -> COUNT.sh 2");
    let before = files_of(&original.run_dir("test"));

    let rerun = original.rerun(["rerun", "test", "--from", "3", "--run-id", "again", "-q"]);
    rerun.status(0).stdout("Liftoff!\n");
    // Only COUNT 2, 1 and 0 ran again: no script of the prefix did.
    assert_eq!(markers(&rerun)[5..], ["COUNT 2", "COUNT 1", "COUNT 0"]);
    // Commit 4 launches the rerun's first step, as commit 1 launched the original's.
    assert_eq!(
        transitions(&rerun, "again"),
        ["5 COUNT.sh -> COUNT.sh 1", "6 COUNT.sh -> COUNT.sh 0", "7 COUNT.sh -> (terminated) Liftoff!"]
    );
    let state = rerun.state("again");
    assert_eq!(state["status"], "completed");
    assert_eq!(state["steps_completed"], 5, "two steps taken over, three run");
    assert_eq!(files_of(&rerun.run_dir("test")), before, "the original run's files are byte-identical");
}

#[test]
fn rerun_input_replaces_what_the_step_passed_on() {
    let original = countdown().run_workflow(&["-q"]);
    original.status(0);
    let rerun = original.rerun(["rerun", "test", "--from", "3", "--input", "1", "--run-id", "again", "-q"]);
    rerun.status(0).stdout("Liftoff!\n");
    assert_eq!(markers(&rerun)[5..], ["COUNT 1", "COUNT 0"]);
}

#[test]
fn rerun_of_is_recorded_in_the_state_status_and_trace() {
    let original = countdown().run_workflow(&["-q"]);
    original.status(0);
    let rerun = original.rerun(["rerun", "test", "--from", "4", "--run-id", "again"]);
    rerun.status(0).stderr_contains("run again started: [ROOT]/wf (COUNT.sh), a rerun of test from step 4\n");
    let file = rerun.state("again");
    assert_eq!(file["rerun_of"], serde_json::json!({"run_id": "test", "commit": 4}));
    assert_eq!(file["version"], 6);
    let first = &rerun.events("again")[0];
    assert_eq!(first["type"], "WorkflowStarted");
    assert_eq!(first["rerun_of"], serde_json::json!({"run_id": "test", "commit": 4}));
    assert!(rerun.events("test")[0].get("rerun_of").is_none(), "a plain run's trace has no rerun_of");
    let status = rerun.rerun(["status", "again"]);
    status.status(0);
    assert!(status.stdout.contains("\nrerun of: test from step 4\n"), "{}", status.stdout);
}

#[test]
fn status_steps_lists_the_steps_a_rerun_can_start_from() {
    let original = countdown().run_workflow(&["-q"]);
    original.status(0);
    let status = original.rerun(["status", "test", "--steps"]);
    status.status(0).stdout(
        "steps of run test a rerun can start from (`baton rerun test --from STEP`):\n\
         \x20    2  main START.sh -> COUNT.sh [goto] input=\"3\"\n\
         \x20    3  main COUNT.sh -> COUNT.sh [goto] input=\"2\"\n\
         \x20    4  main COUNT.sh -> COUNT.sh [goto] input=\"1\"\n\
         \x20    5  main COUNT.sh -> COUNT.sh [goto] input=\"0\"\n\
         \x20    6  main COUNT.sh -> (terminated) [result] payload=\"Liftoff!\"\n",
    );
}

#[test]
fn bad_steps_are_refused_with_the_commits_that_can_be_used() {
    let original = countdown().run_workflow(&["-q"]);
    original.status(0);
    let before = files_of(&original.run_dir("test"));
    let mut test = original.into_test();
    let cases: [(&[&str], &str); 5] = [
        (
            &["--from", "0"],
            "error: `--from 0` names no step: a step is named by its journal commit, from 1 (the `commit` of its \
             `TransitionOccurred` event); run `test` can be rerun from commits 1 to 7 (`baton status test --steps` \
             lists its steps)",
        ),
        (
            &["--from", "8"],
            "error: run `test` has no step 8: its journal ends at commit 7; it can be rerun from commits 1 to 7 \
             (`baton status test --steps` lists its steps)",
        ),
        (
            &["--from", "6"],
            "error: every agent of run `test` had terminated by step 6: a rerun from there has nothing to run; rerun \
             from an earlier step (`baton status test --steps` lists them)",
        ),
        (
            &["--from", "1", "--input", "x"],
            "error: commit 1 of run `test` recorded no step (a retry, a pause or the run's end), so --input has no \
             agent to go to; rerun from a step (`baton status test --steps` lists them)",
        ),
        (
            &["--from", "2", "--run-id", "test"],
            "error: run `test` already exists; use `baton resume test` to continue it",
        ),
    ];
    for (extra, expected) in cases {
        let mut args = vec!["rerun", "test"];
        args.extend(extra);
        let outcome = test.args(args).run();
        outcome.status(1);
        assert_eq!(outcome.error_message(), expected);
        test = outcome.into_test();
    }
    let outcome = test.args(["rerun", "nope", "--from", "2"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run `nope` not found in [ROOT]/.baton/runs; `baton list` shows the runs there are"
    );
    assert_eq!(files_of(&outcome.run_dir("test")), before, "refusals leave the run as it was");
    assert_eq!(outcome.test.root().join(".baton/runs").read_dir().unwrap().count(), 1, "no run was created");
}

#[test]
fn a_step_compacted_into_the_snapshot_is_refused() {
    // A bound pauses the run after two steps; the resume folds the journal into state.json.
    let original = countdown().run_workflow(&["-q", "--max-steps", "2"]);
    original.status(3);
    let resumed = original.rerun(["resume", "test", "-q", "--max-steps", "10"]);
    resumed.status(0);
    let state: serde_json::Value =
        serde_json::from_slice(&std::fs::read(resumed.run_dir("test").join("state.json")).unwrap()).unwrap();
    let folded = state["journal_commit"].as_u64().expect("journal_commit");
    assert!(folded > 2, "{state}");
    let refused = resumed.rerun(["rerun", "test", "--from", "2"]);
    refused.status(1);
    assert_eq!(
        refused.error_message(),
        format!(
            "error: run `test` can no longer be rerun from step 2: its journal up to commit {folded} was compacted into \
             its state.json (a resume, an invocation of more than 100 steps and every 1,000 commits do that), so the \
             state after step 2 is not on disk any more; it can be rerun from commits {folded} to {} (`baton status \
             test --steps` lists its steps)",
            folded + 5
        )
    );
    // The steps after the fold still can.
    let rerun = refused.rerun(["rerun", "test", "--from", &(folded + 1).to_string(), "-q"]);
    rerun.status(0).stdout("Liftoff!\n");
}

#[test]
fn a_rerun_of_a_run_with_forks_continues_every_agent() {
    let original = Test::new()
        .file(
            "START.sh",
            "echo START >> markers.log\n\
             echo '<fork next=\"PARENT.sh\" input=\"a\">W.sh</fork>'\necho '<fork input=\"b\">W.sh</fork>'\n",
        )
        .file("W.sh", "echo \"W $BATON_INPUT\" >> markers.log\necho \"<result>w$BATON_INPUT</result>\"\n")
        .file("PARENT.sh", "echo PARENT >> markers.log\necho '<result>parent done</result>'\n")
        .run_workflow(&["-q"]);
    original.status(0).stdout("parent done\n");
    assert_eq!(markers(&original).len(), 4);
    // Commit 2 is START's multi-fork: main at PARENT.sh and two workers at W.sh.
    let rerun = original.rerun(["rerun", "test", "--from", "2", "--run-id", "again", "-q"]);
    rerun.status(0).stdout("parent done\n");
    let mut again = markers(&rerun)[4..].to_vec();
    again.sort();
    assert_eq!(again, ["PARENT", "W a", "W b"], "all three agents ran on; START did not run again");
    let terminated = rerun.state("again")["terminated"].as_array().unwrap().len();
    assert_eq!(terminated, 3);
}

#[test]
fn a_rerun_has_its_own_copy_of_the_task_folders_as_they_are_now() {
    let original = Test::new()
        .file("START.sh", "echo one > \"$BATON_TASK_FOLDER/notes\"\necho '<goto>NEXT.sh</goto>'\n")
        .file(
            "NEXT.sh",
            "echo \"$BATON_TASK_FOLDER\" >> markers.log\necho two >> \"$BATON_TASK_FOLDER/notes\"\n\
             echo \"<result>$(cat \"$BATON_TASK_FOLDER/notes\" | tr '\\n' ' ')</result>\"\n",
        )
        .run_workflow(&["-q"]);
    original.status(0).stdout("one two \n");
    let rerun = original.rerun(["rerun", "test", "--from", "2", "--run-id", "again", "-q"]);
    // The copy holds the folder as it is now (after NEXT ran), not as it was at step 2.
    rerun.status(0).stdout("one two two \n");
    let root = rerun.root().to_path_buf();
    assert_eq!(markers(&rerun)[1], root.join(".baton/tasks/again/main").to_string_lossy());
    let original_notes = std::fs::read_to_string(root.join(".baton/tasks/test/main/notes")).unwrap();
    assert_eq!(original_notes, "one\ntwo\n", "the original's task folder is untouched");
}

/// A successful turn answering `text` whose assistant message has the `uuid` `id`,
/// as Claude Code's stream has it.
fn reply_with_id(text: &str, id: &str) -> Reply {
    let usage = serde_json::json!({"input_tokens": 100, "output_tokens": 20});
    Reply::raw(
        vec![
            serde_json::json!({"type": "system", "subtype": "init", "session_id": "{{SESSION}}"}),
            serde_json::json!({"type": "assistant", "session_id": "{{SESSION}}", "uuid": id,
                               "message": {"content": [{"type": "text", "text": text}]}}),
            serde_json::json!({"type": "result", "subtype": "success", "is_error": false, "result": text,
                               "session_id": "{{SESSION}}", "total_cost_usd": 0.0, "usage": usage}),
        ],
        0,
    )
}

#[test]
fn a_rerun_forks_the_session_it_takes_over_and_sends_only_the_remaining_turns() {
    let test = Test::new().with_fake_claude();
    let fake = FakeClaude::at(test.root());
    fake.rule("a", "STATE ONE", reply_with_id("<goto>TWO.md</goto>", "msg_1"))
        .rule("b", "STATE TWO", reply_with_id("<goto>THREE.md</goto>", "msg_2"))
        .rule("c", "STATE THREE", reply_with_id("<goto>FOUR.md</goto>", "msg_3"))
        .rule("d", "STATE FOUR", reply_with_id("<goto>FIVE.md</goto>", "msg_4"))
        .rule("e", "STATE FIVE", reply_with_id("<result>five</result>", "msg_5"));
    let original = test
        .file("START.md", "STATE ONE")
        .file("TWO.md", "STATE TWO")
        .file("THREE.md", "STATE THREE")
        .file("FOUR.md", "STATE FOUR")
        .file("FIVE.md", "STATE FIVE")
        .run_workflow(&["-q"]);
    original.status(0).stdout("five\n");
    let calls = FakeClaude::at(original.root()).calls();
    assert_eq!(calls.len(), 5);
    // Commit 4 is THREE's step, the third.
    assert_eq!(transitions(&original, "test")[2], "4 THREE.md -> FOUR.md ");
    let before = files_of(&original.run_dir("test"));

    let rerun = original.rerun(["rerun", "test", "--from", "4", "--run-id", "again", "-q"]);
    rerun.status(0).stdout("five\n");
    let calls = FakeClaude::at(rerun.root()).calls();
    assert_eq!(calls.len(), 7, "exactly the two remaining turns");
    assert_eq!(crate::markdown::session_of(&calls[0]), "fresh");
    assert_eq!(crate::markdown::session_of(&calls[4]), "resume fake-session-1");
    // The first turn of the rerun continues a fork of the session as it was at step 3:
    // cut back after THREE's answer, since the original went on with the session.
    assert_eq!(crate::markdown::session_of(&calls[5]), "resume fake-session-1 fork", "{:?}", calls[5].argv);
    assert_eq!(calls[5].flag("--resume-session-at"), Some("msg_3"), "{:?}", calls[5].argv);
    assert_eq!(calls[6].flag("--resume-session-at"), None);
    assert!(calls[5].prompt.contains("STATE FOUR"));
    // The next turn continues the fork, which is the rerun's own session.
    assert_eq!(crate::markdown::session_of(&calls[6]), "resume fake-session-6");
    assert_eq!(files_of(&rerun.run_dir("test")), before);
    assert_eq!(rerun.state("again")["borrowed_sessions"], serde_json::json!(["fake-session-1"]));
}

#[test]
fn a_borrowed_session_is_forked_even_after_a_script_state() {
    let test = Test::new().with_fake_claude();
    FakeClaude::at(test.root()).rule("a", "STATE ONE", Reply::text("<goto>MID.sh</goto>")).rule(
        "b",
        "STATE TWO",
        Reply::text("<result>two</result>"),
    );
    let original = test
        .file("START.md", "STATE ONE")
        .file("MID.sh", "echo '<goto>TWO.md</goto>'\n")
        .file("TWO.md", "STATE TWO")
        .run_workflow(&["-q"]);
    original.status(0).stdout("two\n");
    // Commit 2 is ONE's step: the rerun runs the script first, then TWO in the borrowed session.
    let rerun = original.rerun(["rerun", "test", "--from", "2", "--run-id", "again", "-q"]);
    rerun.status(0).stdout("two\n");
    let calls = FakeClaude::at(rerun.root()).calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(crate::markdown::session_of(&calls[1]), "resume fake-session-1");
    assert_eq!(crate::markdown::session_of(&calls[2]), "resume fake-session-1 fork");
}

/// A project whose prompt states run the real `claude` against `fake`.
fn with_real_claude(mut test: Test, fake: &FakeAnthropic) -> Test {
    for key in CLAUDE_ENV_REMOVE {
        test = test.env_remove(key);
    }
    for (key, value) in claude_env(&fake.url()) {
        test = test.env(&key, &value);
    }
    test.env("BATON_CLAUDE_BIN", &claude_binary().to_string_lossy())
}

/// Claude Code's files of session `session` under the fake's config dir, with their bytes.
fn session_files(fake: &FakeAnthropic, session: &str) -> BTreeMap<PathBuf, Vec<u8>> {
    files_of(fake.config_dir()).into_iter().filter(|(path, _)| path.to_string_lossy().contains(session)).collect()
}

#[test]
fn a_five_step_claude_run_rerun_from_step_3_continues_a_fork_of_its_conversation() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("STATE ONE").fresh().reply_text("Noted alpha-1.\n<goto>TWO</goto>"),
        Rule::when_prompt("STATE TWO").resumed().reply_text("Noted bravo-2.\n<goto>THREE</goto>"),
        Rule::when_prompt("STATE THREE").resumed().reply_text("Noted charlie-3.\n<goto>FOUR</goto>"),
        Rule::when_prompt("STATE FOUR")
            .resumed()
            .history_contains("charlie-3")
            .reply_text("Noted delta-4.\n<goto>FIVE</goto>"),
        Rule::when_prompt("STATE FIVE").resumed().history_contains("delta-4").reply_text("<result>five</result>"),
    ]);
    let test = Test::new()
        .file("START.md", "STATE ONE: remember alpha.")
        .file("TWO.md", "STATE TWO: remember bravo.")
        .file("THREE.md", "STATE THREE: remember charlie.")
        .file("FOUR.md", "STATE FOUR: remember delta.")
        .file("FIVE.md", "STATE FIVE: what do you remember?");
    let original = with_real_claude(test, &fake).run_workflow(&["-q"]);
    original.status(0).stdout("five\n");
    assert_eq!(fake.requests().len(), 5, "{}", fake.summary());
    // Commit 1 launches main; the third step (THREE's) is commit 4.
    assert_eq!(transitions(&original, "test")[2], "4 THREE.md -> FOUR.md ");
    let session = fake.requests()[0].view.session_id.clone().expect("a session id");
    let run_before = files_of(&original.run_dir("test"));
    let session_before = session_files(&fake, &session);
    assert!(!session_before.is_empty(), "Claude Code keeps the session under its config dir");

    let rerun = original.rerun(["rerun", "test", "--from", "4", "--run-id", "again", "-q"]);
    rerun.status(0).stdout("five\n");
    let requests = fake.requests();
    assert_eq!(requests.len(), 7, "exactly the two remaining model calls:\n{}", fake.summary());
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    let (four, five) = (&requests[5].view, &requests[6].view);
    assert!(four.prompt.contains("STATE FOUR"), "{}", four.prompt);
    for earlier in ["alpha-1", "bravo-2", "charlie-3"] {
        assert!(four.history_contains(earlier), "the rerun continues the conversation up to step 3");
    }
    assert!(!four.history_contains("delta-4"), "nothing after step 3 is in it");
    assert_ne!(four.session_id.as_deref(), Some(session.as_str()), "a fork of the session, not the session");
    assert_eq!(five.session_id, four.session_id, "the rerun goes on in its fork");
    let started = rerun.events_of("again", "ClaudeInvocationStarted");
    assert_eq!(started[0]["session_id"], session.as_str());
    assert_eq!(started[0]["is_fork"], true);
    assert_eq!(started[1]["is_fork"], false);
    assert_eq!(files_of(&rerun.run_dir("test")), run_before, "the original run's files are byte-identical");
    assert_eq!(session_files(&fake, &session), session_before, "the original's Claude session is unchanged");
}
