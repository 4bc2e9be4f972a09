//! The command line as a user meets it: the output contract (A8), exit codes (A7),
//! every error message before a run starts (asserted verbatim), `list`, `status`,
//! `.baton` discovery, and Ctrl-C.

use crate::support::Test;

fn countdown() -> Test {
    Test::new().file("START.sh", "echo '<print>go</print>'\necho '<goto input=\"2\">TICK</goto>'\n").file(
        "TICK.sh",
        "if [ \"$BATON_INPUT\" -le 1 ]; then echo '<result>done</result>'; \
             else echo \"<goto input=\\\"$((BATON_INPUT - 1))\\\">TICK</goto>\"; fi\n",
    )
}

#[test]
fn a8_stdout_is_the_result_and_stderr_is_the_show() {
    let outcome = countdown().run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        outcome.stderr_normalized(),
        "run test started: [ROOT]/wf (START.sh)\n\
         [main] > START.sh\n\
         [main] print: go\n\
         [main] < START.sh in N ms: goto -> TICK.sh input=\"2\"\n\
         [main] > TICK.sh\n\
         [main] < TICK.sh in N ms: goto -> TICK.sh input=\"1\"\n\
         [main] > TICK.sh\n\
         [main] < TICK.sh in N ms: terminated with result: done\n\
         done: run test completed: 3 steps, $0.0000, N ms\n"
    );
}

#[test]
fn a8_result_keeps_its_own_trailing_newline() {
    Test::new().file("START.sh", "printf '<result>two\\nlines\\n</result>'\n").run_workflow(&[]).stdout("two\nlines\n");
}

#[test]
fn quiet_keeps_only_the_final_line() {
    let outcome = countdown().run_workflow(&["--quiet"]);
    outcome.status(0).stdout("done\n");
    assert_eq!(outcome.stderr_normalized(), "done: run test completed: 3 steps, $0.0000, N ms\n");
}

#[test]
fn quiet_still_shows_errors() {
    let outcome = Test::new().file("START.sh", "echo oops >&2; exit 4\n").run_workflow(&["-q"]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.stderr_normalized(),
        "error: run test failed: agent main at START.sh: script `START.sh` failed with exit code 4; its stderr:\n    oops\n\
         continue after fixing it with `baton resume test`\n"
    );
}

#[test]
fn json_describes_the_run() {
    let outcome = Test::new()
        .file("START.sh", "echo '<fork next=\"WAIT\">W</fork>'\n")
        .file("W.sh", "echo '<result>worker says hi</result>'\n")
        .file("WAIT.sh", "echo '<result>main done</result>'\n")
        .run_workflow(&["--json"]);
    outcome.status(0);
    let mut report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("one JSON object");
    let metrics = report.as_object_mut().and_then(|object| object.remove("metrics")).expect("metrics");
    for key in
        ["peak_rss_kb", "cpu_user_ms", "cpu_system_ms", "commits", "snapshots", "persistence_us", "persisted_bytes"]
    {
        assert!(metrics[key].is_u64(), "metrics.{key} in {metrics}");
    }
    assert!(metrics["commits"].as_u64() >= Some(3), "one commit per step at least: {metrics}");
    let agents = report["agents"].as_array_mut().expect("agents");
    agents.sort_by_key(|agent| agent["id"].as_str().unwrap_or_default().to_string());
    assert_eq!(
        report,
        serde_json::json!({
            "run_id": "test",
            "status": "completed",
            "result": "main done",
            "agents": [
                {"id": "main", "status": "terminated", "result": "main done"},
                {"id": "main_w1", "status": "terminated", "result": "worker says hi"},
            ],
            "cost_usd": 0.0,
            "steps": 3,
            "error": null,
        })
    );
}

/// Issue 22: on a disk where other programs delete files, creating one costs about
/// a millisecond. A one-state run without its trace creates these and nothing else:
/// its first snapshot is in its journal, whose file the run's lock is on and holds
/// the space of a failure note past its end.
#[test]
fn a_one_state_run_without_its_trace_creates_only_these_files() {
    let outcome = Test::new().file("START.sh", "echo '<result>ok</result>'\n").run_workflow(&["-q", "--no-debug"]);
    outcome.status(0).stdout("ok\n");
    let baton = outcome.root().join(".baton");
    let mut paths = Vec::new();
    let mut pending = vec![baton.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").filter_map(Result::ok) {
            let path = entry.path();
            paths.push(path.strip_prefix(&baton).expect("inside").to_string_lossy().into_owned());
            if path.is_dir() {
                pending.push(path);
            }
        }
    }
    paths.sort();
    assert_eq!(
        paths,
        [".gitignore", "runs", "runs/test", "runs/test/journal.jsonl", "tasks", "tasks/test", "tasks/test/main"]
    );
}

#[test]
fn no_debug_writes_no_trace_but_keeps_the_state() {
    let outcome = countdown().run_workflow(&["--no-debug"]);
    outcome.status(0);
    assert!(outcome.run_dir("test").join("journal.jsonl").is_file());
    assert!(!outcome.run_dir("test").join("events.jsonl").exists());
    assert!(!outcome.run_dir("test").join("transitions.log").exists());
}

#[test]
fn a16_trace_has_versioned_sequenced_events_and_step_files() {
    let outcome = countdown().run_workflow(&[]);
    let events = outcome.events("test");
    for (index, event) in events.iter().enumerate() {
        assert_eq!(event["v"], 1);
        assert_eq!(event["seq"], index as u64 + 1);
        assert!(event["ts"].as_str().is_some_and(|ts| ts.ends_with('Z')), "{event}");
    }
    let dir = outcome.run_dir("test");
    assert_eq!(
        std::fs::read_to_string(dir.join("main_TICK_002.stdout.txt")).unwrap(),
        "<goto input=\"1\">TICK</goto>\n"
    );
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("main_TICK_002.meta.json")).unwrap()).unwrap();
    assert_eq!(meta["exit_code"], 0);
    assert_eq!(meta["env_vars"]["BATON_INPUT"], "2");
    assert_eq!(meta["env_vars"]["RAYMOND_INPUT"], "2");
    let log = std::fs::read_to_string(dir.join("transitions.log")).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(log.lines().next().unwrap().ends_with(" main START.sh -> TICK.sh [goto] input=\"2\""), "{log}");
}

#[test]
fn resumed_trace_continues_the_sequence() {
    let outcome = Test::new()
        .file("START.sh", "echo '<fork next=\"B\">W</fork>'\n")
        .file("W.sh", "exit 1\n")
        .file("B.sh", "echo '<result>b</result>'\n")
        .run_workflow(&[]);
    outcome.status(1);
    let before = outcome.events("test").len();
    std::fs::write(outcome.root().join("wf/W.sh"), "echo '<result>w</result>'\n").unwrap();
    let outcome = outcome.rerun(["resume", "test"]);
    outcome.status(0).stdout("b\n");
    let events = outcome.events("test");
    assert!(events.len() > before);
    let seqs: Vec<u64> = events.iter().map(|event| event["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, (1..=events.len() as u64).collect::<Vec<_>>());
    assert_eq!(events[before]["type"], "WorkflowStarted");
    assert_eq!(events[before]["resumed"], true);
}

#[test]
fn run_id_that_exists_is_refused() {
    let outcome = countdown().run_workflow(&[]).rerun(["run", "wf", "--run-id", "test"]);
    outcome.status(1);
    assert_eq!(outcome.error_message(), "error: run `test` already exists; use `baton resume test` to continue it");
}

#[test]
fn invalid_run_id_is_refused() {
    let outcome = countdown().args(["run", "wf", "--run-id", "../x"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: invalid run id `../x`: use only letters, digits, `_` and `-`, at most 128 of them"
    );
}

#[test]
fn missing_workflow_suggests_a_sibling() {
    let outcome = countdown().args(["run", "wff"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: workflow `wff` not found: no such file or directory; did you mean `wf`?"
    );
}

#[test]
fn negative_budget_is_refused_with_what_is_expected() {
    let outcome = countdown().run_workflow(&["--budget", "-1"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: invalid value `-1` for --budget: expected a non-negative amount in US dollars, such as 5 or 0.50 (0 means unlimited)"
    );
}

#[test]
fn unknown_flag_is_a_usage_error_with_exit_1() {
    let outcome = countdown().args(["run", "wf", "--frobnicate"]).run();
    outcome.status(1);
    assert!(outcome.stderr.contains("unexpected argument '--frobnicate'"), "{}", outcome.stderr);
}

/// Regression: `--max-agents -1` was reported as an unexpected argument, with a tip
/// to pass it as `-- -1` (which makes it a workflow), and `--max-steps -5` as
/// "invalid digit found in string". Every flag that takes a count or a step number.
#[test]
fn a_negative_or_malformed_count_says_what_is_expected() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "wf", "--max-agents", "-1"],
            "'-1' for '--max-agents <N>': expected a whole number of at least 1, found `-1`",
        ),
        (
            &["run", "wf", "--max-agents=0"],
            "'0' for '--max-agents <N>': expected a whole number of at least 1, found `0`",
        ),
        (
            &["run", "wf", "--max-agents", "4294967296"],
            "'4294967296' for '--max-agents <N>': expected a whole number of at most 4294967295, found `4294967296`",
        ),
        (
            &["run", "wf", "--max-steps", "-5"],
            "'-5' for '--max-steps <N>': expected a whole number of at least 1, found `-5`",
        ),
        (
            &["resume", "test", "--max-steps", "ten"],
            "'ten' for '--max-steps <N>': expected a whole number of at least 1, found `ten`",
        ),
        (&["run", "wf", "--attempts", "-2"], "'-2' for '--attempts <N>': -2 is not in 1..=100"),
        (&["gc", "--keep", "-1"], "'-1' for '--keep <N>': expected a whole number, found `-1`"),
        (&["logs", "test", "--step", "-1"], "'-1' for '--step <N>': expected a whole number, found `-1`"),
        (&["rerun", "test", "--from", "-3"], "'-3' for '--from <STEP>': expected a whole number, found `-3`"),
        (
            &["worker", "--max-concurrent-steps", "-1"],
            "'-1' for '--max-concurrent-steps <N>': expected a whole number of at least 1, found `-1`",
        ),
    ];
    for (args, expected) in cases {
        let outcome = countdown().args(args.iter().copied()).run();
        outcome.status(1);
        let first = outcome.stderr.lines().next().unwrap_or_default();
        assert_eq!(first, format!("error: invalid value {expected}"), "{args:?}\n{}", outcome.stderr);
    }
}

#[test]
fn resume_of_an_unknown_run_suggests_a_close_one() {
    let outcome = Test::new().file("START.sh", "exit 1\n").run_workflow(&[]).rerun(["resume", "tset"]);
    outcome.status(1);
    assert_eq!(outcome.error_message(), "error: run `tset` not found in [ROOT]/.baton/runs; did you mean `test`?");
}

#[test]
fn resume_of_a_completed_run_is_refused() {
    let outcome = countdown().run_workflow(&[]).rerun(["resume", "test"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run `test` has already completed; `baton status test` shows its result"
    );
}

#[test]
fn resume_input_without_an_asking_agent_is_refused() {
    let outcome = Test::new().file("START.sh", "exit 1\n").run_workflow(&[]).rerun(["resume", "test", "--input", "x"]);
    outcome.status(1);
    assert_eq!(outcome.error_message(), "error: --input was given, but no agent of run `test` is waiting for input");
}

#[test]
fn a7_paused_run_exits_3_and_resumes_after_the_fix() {
    let outcome = Test::new()
        .file("START.sh", "echo '<fork next=\"A\">W</fork><fork next=\"B\">W</fork>'\n")
        .file("W.sh", "echo '<result>w</result>'\n")
        .file("A.sh", "echo '<result>a</result>'\n")
        .file("B.sh", "echo '<result>b</result>'\n")
        .run_workflow(&[]);
    outcome.status(3).stdout("");
    outcome.stderr_contains("paused: run test: 1 agent paused; continue with `baton resume test`");
    assert_eq!(outcome.state("test")["status"], "paused");
    std::fs::write(outcome.root().join("wf/START.sh"), "echo '<result>fixed</result>'\n").unwrap();
    outcome.rerun(["resume", "test"]).status(0).stdout("fixed\n");
}

#[test]
fn list_shows_every_run_with_its_status() {
    let outcome = countdown().run_workflow(&[]).rerun(["run", "wf", "--run-id", "second", "-q"]).rerun(["list"]);
    outcome.status(0);
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", outcome.stdout);
    assert!(lines[0].starts_with("RUN "), "{}", lines[0]);
    for (line, id) in lines[1..].iter().zip(["test", "second"]) {
        let columns: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(columns[0], id);
        assert_eq!(columns[1], "completed");
        assert_eq!(columns[3], "$0.0000");
        assert_eq!(columns[4], "3");
    }
}

#[test]
fn list_without_runs_says_so() {
    let outcome = Test::new().args(["list"]).run();
    outcome.status(0).stdout("");
    assert_eq!(outcome.error_message(), "no runs in [ROOT]/.baton/runs");
}

#[test]
fn status_shows_agents_stack_and_errors() {
    let outcome = Test::new()
        .file("START.sh", "echo '<call return=\"RET\">SUB</call>'\n")
        .file("SUB.sh", "echo '<fork next=\"X\">W</fork><goto>Y</goto>'\n")
        .file("RET.sh", "echo '<result>r</result>'\n")
        .file("W.sh", "echo '<result>w</result>'\n")
        .file("X.sh", "echo '<result>x</result>'\n")
        .file("Y.sh", "echo '<result>y</result>'\n")
        .run_workflow(&[])
        .rerun(["status", "test"]);
    outcome.status(0);
    let stdout = crate::support::test_builder::normalize(&outcome.stdout, outcome.root());
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "run test: paused");
    assert_eq!(lines[1], "workflow: [ROOT]/wf");
    assert_eq!(lines[3], "steps: 1  cost: $0.0000");
    assert_eq!(
        &lines[4..],
        [
            "agents:",
            "  main  at SUB.sh  [paused (validation_error)]",
            "      cwd: [ROOT]",
            "      returns to: RET.sh",
            "      error: script `SUB.sh` produced an invalid multi-fork: the continuations disagree (X.sh, Y.sh); every `next` and the <goto> or <join> must name the same state",
        ]
    );
}

#[test]
fn r8_1_baton_dir_is_found_at_the_git_root_from_a_subdirectory() {
    let test = countdown().write("deep/er/keep", "");
    let outcome = test.args(["run", "../../wf", "--run-id", "nested"]).run_in("deep/er");
    outcome.status(0);
    assert!(outcome.root().join(".baton/runs/nested/journal.jsonl").is_file());
    assert!(!outcome.root().join("deep/er/.baton").exists());
}

/// Issue 19 item 10: `git add -A` in a user's repository committed every run.
#[test]
fn baton_dir_is_ignored_by_git_in_the_users_repository() {
    let test = countdown();
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(test.root())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("run git");
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    std::fs::remove_dir(test.root().join(".git")).expect("remove the .git marker");
    git(&["init", "--quiet"]);
    let outcome = test.run_workflow(&[]);
    outcome.status(0);
    assert_eq!(
        std::fs::read_to_string(outcome.root().join(".baton/.gitignore")).expect(".gitignore"),
        "# Written by Baton: runs, traces and worktrees are not for committing.\n*\n"
    );
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git").args(args).current_dir(outcome.root()).output().expect("git");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    assert_eq!(git(&["status", "--porcelain", "--untracked-files=all"]), "?? wf/START.sh\n?? wf/TICK.sh\n");
}

#[test]
fn an_existing_gitignore_in_the_baton_dir_is_kept() {
    let outcome = countdown().write(".baton/.gitignore", "runs/\n").run_workflow(&[]);
    outcome.status(0);
    assert_eq!(std::fs::read_to_string(outcome.root().join(".baton/.gitignore")).expect(".gitignore"), "runs/\n");
}

#[test]
fn baton_dir_flag_overrides_discovery() {
    let outcome = countdown().run_workflow(&["--baton-dir", "elsewhere"]);
    outcome.status(0);
    assert!(outcome.root().join("elsewhere/runs/test/journal.jsonl").is_file());
    assert!(!outcome.root().join(".baton").exists());
}

#[test]
fn missing_working_directory_is_named_in_the_error() {
    let outcome = Test::new()
        .file("START.sh", "echo '<reset cd=\"nowhere\">NEXT</reset>'\n")
        .file("NEXT.sh", "echo '<result>unreachable</result>'\n")
        .run_workflow(&["-q"]);
    outcome.status(1);
    outcome.stderr_contains(
        "error: run test failed: agent main at NEXT.sh: script `NEXT.sh` cannot run: its working directory [ROOT]/nowhere does not exist (an agent's directory comes from a tag's `cd=`; create it first)",
    );
}

/// `baton completion bash` is a working completion: sourced into a real bash, it
/// completes subcommands and their options.
#[test]
fn completion_scripts_complete_subcommands_and_options() {
    let script = format!(
        "source <('{}' completion bash)\n\
         COMP_WORDS=(baton rep); COMP_CWORD=1; _baton baton rep baton; printf '%s\\n' \"${{COMPREPLY[@]}}\"; echo --\n\
         COMP_WORDS=(baton run --max-a); COMP_CWORD=2; _baton baton --max-a run; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        env!("CARGO_BIN_EXE_baton")
    );
    let output = std::process::Command::new("bash").args(["-c", &script]).output().expect("bash");
    let text = String::from_utf8_lossy(&output.stdout);
    let (subcommands, options) = text.split_once("--\n").expect("two completions");
    let mut subcommands: Vec<&str> = subcommands.lines().collect();
    subcommands.sort_unstable();
    assert_eq!(subcommands, ["repair", "report"], "{text}");
    assert_eq!(options.trim(), "--max-agents", "{text}");
    for shell in ["zsh", "fish"] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
            .args(["completion", shell])
            .output()
            .expect("baton");
        assert!(output.status.success());
        assert!(String::from_utf8_lossy(&output.stdout).contains("resume"), "{shell}");
    }
}

#[test]
fn baton_new_writes_a_template_that_runs_and_never_overwrites() {
    let test = Test::new();
    let created = test.args(["new", "demo"]).run();
    created.status(0);
    assert_eq!(
        crate::support::normalize(&created.stdout, created.root()),
        "Created [ROOT]/demo (loop template); run it with `baton run demo`, test it with `baton test demo`\n"
    );
    let ran = created.rerun(["run", "demo", "--input", "2", "-q"]);
    ran.status(0).stdout("Liftoff!\n");
    let fanout = ran.rerun(["new", "fan", "--template", "fanout"]);
    fanout.status(0);
    fanout.rerun(["run", "fan", "--input", "ab cde", "-q"]).status(0).stdout("2 words, 5 letters\n");
    let review = Test::new().args(["new", "rl", "--template", "review"]).run();
    review.status(0);
    for file in ["START.md", "IMPLEMENT.md", "TEST.sh", "REVIEW.md", "DECIDE.sh"] {
        let written = std::fs::read_to_string(review.root().join("rl").join(file)).expect("written");
        let sample = std::fs::read_to_string(format!("{}/states/review-loop/{file}", env!("CARGO_MANIFEST_DIR")))
            .expect("sample");
        assert_eq!(written, sample, "{file}");
    }
    let again = review.rerun(["new", "rl"]);
    again.status(1);
    assert_eq!(again.error_message(), "error: [ROOT]/rl already exists; pick another name");
}

/// The templates `baton new --help` lists.
fn templates() -> Vec<String> {
    let help = Test::new().args(["new", "--help"]).run();
    help.status(0);
    help.stdout
        .lines()
        .skip_while(|line| !line.trim_start().starts_with("Possible values:"))
        .skip(1)
        .map_while(|line| line.trim_start().strip_prefix("- "))
        .filter_map(|line| line.split(':').next())
        .map(str::to_string)
        .collect()
}

/// Issue 19 item 11: `baton test` on a fresh template failed with "no tests".
#[test]
fn every_template_ships_a_test_that_passes() {
    let templates = templates();
    assert_eq!(templates, ["loop", "fanout", "review"]);
    for template in templates {
        let created = Test::new()
            .env("BATON_CLAUDE_BIN", "/nonexistent/claude")
            .args(["new", "fresh", "--template", &template])
            .run();
        created.status(0);
        let tested = created.rerun(["test", "fresh"]);
        tested.status(0);
        assert!(tested.stdout.starts_with("PASS fresh/tests/"), "{template}: {}", tested.stdout);
        assert!(tested.stdout.ends_with("1 passed, 0 failed\n"), "{template}: {}", tested.stdout);
    }
}

#[test]
fn baton_convert_round_trips_a_sample_and_never_overwrites_without_force() {
    let test = Test::new();
    let sample = format!("{}/states/factorial", env!("CARGO_MANIFEST_DIR"));
    let to_yaml = test.args(["convert", &sample, "--to", "yaml", "--output", "fact.yaml"]).run();
    to_yaml.status(0);
    // The YAML workflow runs like the directory.
    to_yaml.rerun(["run", "fact.yaml", "--input", "5", "-q"]).status(0).stdout("5! = 120\n");
    let again = Test::new().args(["convert", &sample, "--to", "yaml", "--output", "fact.yaml"]).run();
    let again = again.rerun(["convert", &sample, "--to", "yaml", "--output", "fact.yaml"]);
    again.status(1);
    assert_eq!(
        again.error_message(),
        "error: [ROOT]/fact.yaml already exists; give --force to replace it, or --output another path"
    );
    let wrong = again.rerun(["convert", "fact.yaml", "--to", "yaml", "--output", "other.yaml"]);
    wrong.status(1);
    assert_eq!(
        wrong.error_message(),
        "error: cannot convert [ROOT]/fact.yaml: is not a workflow directory (use --to dir for a YAML file)"
    );
    let back = wrong.rerun(["convert", "fact.yaml", "--to", "dir"]);
    back.status(0);
    for file in ["START.sh", "FACT.sh", "MULTIPLY.sh", "REPORT.sh"] {
        let converted = std::fs::read_to_string(back.root().join("fact").join(file)).expect("converted");
        let original = std::fs::read_to_string(format!("{sample}/{file}")).expect("sample");
        assert_eq!(converted, original, "{file}");
    }
}
