//! `--files shipped` through a real `restate-server` and `baton worker` (issue 21,
//! item 4, `docs/distributed-files.md`): the worker sees none of the coordinator's
//! paths — its own `--dir`, a bare repository as the shared remote — and the
//! step's edits, task folder and result come back.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::claude_e2e::with_real_claude;
use crate::support::Test;
use crate::support::fake_anthropic::{FakeAnthropic, Rule};
use crate::support::restate_min::{Reaped, RestateOptions, RestateServer, exclusive, wait_until};

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim_end().to_string()
}

/// The test's project as a git repository with one commit, its `origin` a bare
/// repository in `remote`.
fn repository(test: &Test, remote: &Path) {
    let root = test.root();
    std::fs::remove_dir_all(root.join(".git")).expect("marker");
    git(remote, &["init", "--quiet", "--bare", "."]);
    std::fs::write(root.join("notes.txt"), "from the coordinator\n").expect("notes");
    git(root, &["init", "--quiet"]);
    git(root, &["add", "-A"]);
    git(root, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "first"]);
    git(root, &["remote", "add", "origin", &remote.to_string_lossy()]);
}

#[test]
fn files_shipped_a_workers_edits_come_back_to_the_coordinators_working_directory() {
    let _one = exclusive();
    let server = RestateServer::start(RestateOptions::default());
    let remote = tempfile::tempdir().expect("remote");
    let worker_dir = tempfile::tempdir().expect("worker dir");
    let test = Test::new()
        .file(
            "START.sh",
            "pwd > where.txt\necho \"$(cat notes.txt), then the worker\" > notes.txt\n\
             echo plan > \"$BATON_TASK_FOLDER/plan.md\"\necho '<goto>TWO.sh</goto>'\n",
        )
        .file("TWO.sh", "echo \"<result>$(cat notes.txt) and $(cat \"$BATON_TASK_FOLDER/plan.md\")</result>\"\n");
    repository(&test, remote.path());
    let head = git(test.root(), &["rev-parse", "HEAD"]);
    let worker_dir_text = worker_dir.path().to_string_lossy().into_owned();
    let _worker = Reaped(server.start_worker(&test, "w1", &["--dir", &worker_dir_text]));

    let outcome = test.run_workflow(&["--engine", &server.engine(), "--files", "shipped"]);
    outcome.status(0).stdout("from the coordinator, then the worker and plan\n");
    let root = outcome.root().to_path_buf();
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).expect("notes"),
        "from the coordinator, then the worker\n"
    );
    let checkout = std::fs::canonicalize(worker_dir.path()).expect("canonical").join("checkouts/test/main");
    assert_eq!(std::fs::read_to_string(root.join("where.txt")).expect("where"), format!("{}\n", checkout.display()));
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "HEAD is the user's");
    assert_eq!(git(&root, &["diff", "--cached", "--name-only"]), "", "the index is the user's");
    assert_eq!(git(remote.path(), &["branch", "--list", "baton/*"]), "  baton/test/main");
    let task_folder = root.join(".baton/tasks/test/main/plan.md");
    assert_eq!(std::fs::read_to_string(task_folder).expect("task folder"), "plan\n");
    assert!(outcome.events_of("test", "StepRanOn").iter().all(|event| event["worker"] == "w1"));
}

// Bad input: refused before a run exists, exit 1.

#[test]
fn files_shipped_without_the_restate_engine_is_refused() {
    let outcome = Test::new().file("START.sh", "echo '<result>x</result>'\n").run_workflow(&["--files", "shipped"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: invalid value `shipped` for --files: shipped files travel to `baton worker`s; add `--engine restate=INGRESS_URL`"
    );
}

#[test]
fn an_unknown_files_mode_gets_a_did_you_mean() {
    let outcome = Test::new().file("START.sh", "echo '<result>x</result>'\n").run_workflow(&[
        "--engine",
        "restate=http://127.0.0.1:9",
        "--files",
        "shiped",
    ]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: invalid value `shiped` for --files: unknown files mode `shiped`: the modes are `shared` and `shipped` (did you \
         mean `shipped`?)"
    );
}

/// Step 1 (a Claude turn) runs on worker 1; the run pauses at `--max-steps 1`;
/// worker 1 goes away and worker 2 — its own `CLAUDE_CONFIG_DIR`, its own `--dir`
/// — runs step 2, whose `goto` continues step 1's conversation: the session
/// came back to the coordinator with step 1's reply and went out with step 2.
#[test]
fn files_shipped_a_goto_continues_the_conversation_on_another_worker_with_its_own_claude_home() {
    let _one = exclusive();
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("STATE ONE").fresh().reply_text("Noted the number 8472.\n<goto>TWO</goto>"),
        Rule::when_prompt("STATE TWO").resumed().history_contains("8472").reply_text("<result>recalled 8472</result>"),
    ]);
    let server = RestateServer::start(RestateOptions::default());
    let remote = tempfile::tempdir().expect("remote");
    let homes = tempfile::tempdir().expect("homes");
    let home = |name: &str| homes.path().join(name).to_string_lossy().into_owned();
    let test =
        Test::new().file("START.md", "STATE ONE: remember the number 8472.").file("TWO.md", "STATE TWO: which number?");
    repository(&test, remote.path());
    // The coordinator has no Claude (only workers run prompts) and a config dir of its own.
    let test = with_real_claude(test, &fake)
        .env_remove("BATON_CLAUDE_BIN")
        .env("PATH", "/usr/bin:/bin")
        .env("CLAUDE_CONFIG_DIR", &home("coordinator"));
    let worker = |name: &str| with_real_claude(Test::new(), &fake).env("CLAUDE_CONFIG_DIR", &home(name));
    let first_worker = worker("w1");
    let w1 = Reaped(server.start_worker(&first_worker, "w1", &["--dir", &home("w1-dir")]));

    let first = test.run_workflow(&["--engine", &server.engine(), "--files", "shipped", "--max-steps", "1"]);
    first.status(3);
    drop(w1);
    let second_worker = worker("w2");
    let _w2 = Reaped(server.start_worker(&second_worker, "w2", &["--dir", &home("w2-dir")]));
    let second = first.rerun(["resume", "test", "--max-steps", "10"]);
    second.status(0).stdout("recalled 8472\n");

    let sessions: Vec<_> = fake.requests().iter().map(|request| request.view.session_id.clone()).collect();
    assert_eq!(sessions.len(), 2, "{}", fake.summary());
    assert_eq!(sessions[0], sessions[1], "one conversation over two workers");
    let workers: Vec<_> = second
        .events_of("test", "StepRanOn")
        .iter()
        .map(|event| event["worker"].as_str().map(str::to_string))
        .collect();
    assert_eq!(workers, [Some("w1".to_string()), Some("w2".to_string())]);
    let session = sessions[0].clone().expect("session id");
    let on = |name: &str| {
        let projects = homes.path().join(name).join("projects");
        std::fs::read_dir(&projects)
            .map(|folders| folders.flatten().any(|folder| folder.path().join(format!("{session}.jsonl")).is_file()))
            .unwrap_or(false)
    };
    assert!(on("coordinator") && on("w1") && on("w2"), "the session is on every machine that had the agent");
}

/// While the step runs on the worker, the user edits the file the step edits:
/// the agent pauses with the file named, and the user's edit stays.
#[test]
fn files_shipped_a_file_edited_on_both_sides_pauses_the_agent_naming_it_and_nothing_is_overwritten() {
    let _one = exclusive();
    let server = RestateServer::start(RestateOptions::default());
    let remote = tempfile::tempdir().expect("remote");
    let worker_dir = tempfile::tempdir().expect("worker dir");
    // The step waits for the test's `go` (in its own checkout) before it ends.
    let test = Test::new().file(
        "START.sh",
        "echo 'the worker' > notes.txt\ntouch ready\nwhile [ ! -e go ]; do sleep 0.05; done\nrm ready go\n\
         echo '<result>done</result>'\n",
    );
    repository(&test, remote.path());
    let worker_dir_text = worker_dir.path().to_string_lossy().into_owned();
    let _worker = Reaped(server.start_worker(&test, "w1", &["--dir", &worker_dir_text]));
    let engine = server.engine();
    let run = test.spawn(&["run", "wf", "--run-id", "test", "--engine", &engine, "--files", "shipped"]);
    let checkout = worker_dir.path().join("checkouts/test/main");
    let ready = checkout.join("ready");
    wait_until(Duration::from_secs(60), "the step to start on the worker", || ready.exists());
    std::fs::write(test.root().join("notes.txt"), "the user\n").expect("the user's edit");
    std::fs::write(checkout.join("go"), "").expect("go");
    let output = run.wait_with_output().expect("baton run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let root = std::fs::canonicalize(test.root()).expect("canonical");
    let expected = format!(
        "[main] paused at START.sh (worker_refused): state `START.sh`: the step's result cannot be written into {}: this \
         file changed there while the step ran on the worker, and the step changed it too: `notes.txt`. Nothing was \
         overwritten; the step's result is commit ",
        root.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    assert!(stderr.contains(&format!(" on branch `baton/test/main` of {}\n", remote.path().display())), "{stderr}");
    assert_eq!(std::fs::read_to_string(test.root().join("notes.txt")).expect("notes"), "the user\n");
}

/// SIGKILL of the coordinator while a shipped step runs; the resumed run attaches
/// to the step with the files it was sent with (shipping again would move the
/// branch under the worker's result): the step runs once and its edit comes back.
#[test]
fn files_shipped_sigkill_of_the_coordinator_mid_step_then_resume_takes_the_steps_files_once() {
    let _one = exclusive();
    let server = RestateServer::start(RestateOptions::default());
    let remote = tempfile::tempdir().expect("remote");
    let worker_dir = tempfile::tempdir().expect("worker dir");
    // Counted outside every checkout: a second run of the step would add a line.
    let counter = tempfile::tempdir().expect("counter");
    let count = counter.path().join("count");
    let test = Test::new()
        .file(
            "START.sh",
            &format!(
                "echo run >> runs.txt\necho run >> '{}'\n\
                 for i in $(seq 1 1000); do [ -e go ] && break; sleep 0.02; done\nrm -f go\n\
                 echo '<goto>END.sh</goto>'\n",
                count.display()
            ),
        )
        .file("END.sh", "echo \"<result>$(cat runs.txt)</result>\"\n");
    repository(&test, remote.path());
    let worker_dir_text = worker_dir.path().to_string_lossy().into_owned();
    let _worker = Reaped(server.start_worker(&test, "w1", &["--dir", &worker_dir_text]));
    let engine = server.engine();
    let mut coordinator = test.spawn(&["run", "wf", "--run-id", "test", "--engine", &engine, "--files", "shipped"]);
    let checkout = worker_dir.path().join("checkouts/test/main");
    let runs = checkout.join("runs.txt");
    wait_until(Duration::from_secs(20), "the step to start on the worker", || runs.exists());
    coordinator.kill().expect("SIGKILL the coordinator");
    coordinator.wait().expect("reap");
    std::fs::write(checkout.join("go"), "").expect("let the step finish");
    let resumed = test.args(["resume", "test"]).run();
    resumed.status(0).stdout("run\n");
    assert_eq!(std::fs::read_to_string(&count).expect("count"), "run\n", "the step ran once");
    assert_eq!(std::fs::read_to_string(resumed.root().join("runs.txt")).expect("runs"), "run\n", "its edit is back");
    let log = std::fs::read_to_string(resumed.run_dir("test").join("transitions.log")).expect("log");
    assert_eq!(log.matches("START.sh -> END.sh").count(), 1, "{log}");
    assert!(resumed.events_of("test", "ErrorOccurred").is_empty(), "{:?}", resumed.events_of("test", "ErrorOccurred"));
}
