//! Regression tests, each named after the defect it pins down.

use std::os::unix::process::CommandExt;

use crate::support::Test;

/// A counting loop of `steps` steps.
fn loop_of(steps: u32) -> Test {
    Test::new().file(
        "START.sh",
        &format!(
            "n=${{BATON_INPUT:-{steps}}}\nif [ \"$n\" -le 0 ]; then echo '<result>done</result>'; else echo \"<goto input=\\\"$((n - 1))\\\">START.sh</goto>\"; fi\n"
        ),
    )
}

/// Before: a store failure printed `run r failed: agent  at : …`, an empty agent and
/// state, because the fatal error had no agent to name. The run's own failures now
/// read naturally without one.
#[test]
fn store_failure_message_has_no_empty_agent_or_state() {
    let test = loop_of(400);
    let mut command = test.command(&["run".into(), "wf".into(), "--run-id".into(), "full".into(), "--no-debug".into()]);
    // The journal outgrows a 16 KiB file-size limit after a few dozen steps; with
    // SIGXFSZ ignored the write fails with EFBIG, as it would on a full disk.
    // SAFETY: setrlimit and signal are async-signal-safe and touch only the child.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: 16 * 1024, rlim_max: 16 * 1024 };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            Ok(())
        });
    }
    let output = command.output().expect("run baton");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let failed = stderr.lines().find(|line| line.starts_with("error: run full failed:")).expect(&stderr);
    assert!(!failed.contains("agent  at"), "{failed}");
    assert!(failed.starts_with("error: run full failed: cannot write the journal "), "{failed}");
}

/// Before: a step whose journal append failed (a full disk) was still published, so
/// its transition reached `transitions.log`; the resume ran the unsaved step again
/// and the trace held it twice (CI once saw 302 lines for 301 steps in
/// `a_full_disk_is_reported_once_and_the_run_resumes_without_gaps`). A step's
/// transition is now published only with the commit that saves it.
#[test]
fn a_step_whose_journal_append_failed_is_traced_once_after_the_resume() {
    let run = loop_of(20)
        .env("BATON_FAILPOINT", "journal_append_fails:5")
        .args(["run", "wf", "--run-id", "unsaved", "-q"])
        .run();
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(run.stderr.contains("error: run unsaved failed: cannot write the journal "), "{}", run.stderr);
    let transitions_of = |outcome: &crate::support::test_builder::Outcome| {
        std::fs::read_to_string(outcome.run_dir("unsaved").join("transitions.log")).expect("transitions.log")
    };
    let before = transitions_of(&run);
    assert_eq!(before.lines().count(), 3, "only the saved steps are traced: {before}");

    let resume = run.into_test().env_remove("BATON_FAILPOINT").args(["resume", "unsaved", "-q"]).run();
    assert_eq!(resume.status, 0, "{}", resume.stderr);
    let transitions = transitions_of(&resume);
    assert_eq!(transitions.lines().count(), 21, "one line per step, none twice: {transitions}");
    let mut commits: Vec<u64> =
        resume.events_of("unsaved", "TransitionOccurred").iter().filter_map(|event| event["commit"].as_u64()).collect();
    let traced = commits.len();
    commits.dedup();
    assert_eq!((traced, commits.len()), (21, 21), "every committed step traced once");
}

/// Before: `--timeout 1e300` (and `2e19`, `--grace 1e20`) panicked converting to a
/// `Duration`, `--timeout 1e19` panicked in a worker thread and left a run that
/// panicked again on resume, and `--timeout -5` was taken as "disabled". Every
/// duration is now checked where it enters, before a run is created.
#[test]
fn huge_or_negative_durations_are_refused_before_a_run_exists() {
    let year = "expected at most 31536000 seconds (1 year)";
    let cases = [
        (vec!["--timeout", "1e300"], format!("invalid value `1e300` for --timeout: {year} (0 disables the timeout)")),
        (vec!["--timeout", "2e19"], format!("invalid value `2e19` for --timeout: {year} (0 disables the timeout)")),
        (vec!["--timeout", "1e19"], format!("invalid value `1e19` for --timeout: {year} (0 disables the timeout)")),
        (
            vec!["--timeout", "-5"],
            "invalid value `-5` for --timeout: expected a number of seconds that is not negative (0 disables the \
             timeout)"
                .to_string(),
        ),
        (vec!["--grace", "1e20"], format!("invalid value `1e20` for --grace: {year}")),
        (
            vec!["--grace", "-1"],
            "invalid value `-1` for --grace: expected a number of seconds that is not negative".to_string(),
        ),
        (
            vec!["--time-limit", "400d"],
            "invalid value `400d` for --time-limit: expected at most 1 year (365d), found `400d`".to_string(),
        ),
    ];
    for (flags, message) in cases {
        let outcome = loop_of(1).run_workflow(&flags);
        outcome.status(1);
        assert_eq!(outcome.error_message(), format!("error: {message}"), "{flags:?}");
        assert!(!outcome.root().join(".baton/runs").exists(), "no run was created for {flags:?}");
    }
}

#[test]
fn huge_timeout_in_config_is_refused_with_the_file_named() {
    let outcome = loop_of(1).write(".baton/config.toml", "timeout = 1e300\n").run_workflow(&[]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: [ROOT]/.baton/config.toml: invalid timeout `1e300`: expected at most 31536000 seconds (1 year) (0 \
         disables it)"
    );
}

/// A state file written before the checks existed may hold a timeout no clock can
/// reach; resuming holds it to a year instead of panicking.
#[test]
fn huge_timeout_persisted_in_an_old_state_file_resumes() {
    let first = loop_of(3).run_workflow(&["--max-steps", "1"]);
    first.status(3);
    first.edit_snapshot("test", |state| {
        state["launch_params"]["timeout_seconds"] = serde_json::json!(1e300);
        state["launch_params"]["time_limit_ms"] = serde_json::json!(u64::MAX);
    });
    first.rerun(["resume", "test", "--max-steps", "100"]).status(0).stdout("done\n");
}

/// Before: `baton list` panicked (exit 101, nothing printed) when one of ~20 runs
/// had an unreadable `state.json`: the sort treated it as equal to everything,
/// which is not a total order. Unreadable runs are now listed after the others.
#[test]
fn list_with_an_unreadable_run_among_many_lists_it_last() {
    let mut test = Test::new().file("START.sh", "echo '<result>ok</result>'\n");
    // Ids in the reverse of creation order, so id order and age order disagree.
    for index in (1..=20).rev() {
        let outcome = test.args(["run", "wf", "--run-id", &format!("r{index:02}"), "-q", "--no-debug"]).run();
        outcome.status(0);
        test = outcome.into_test();
    }
    std::fs::write(test.root().join(".baton/runs/r07/state.json"), "{not json").unwrap();
    let outcome = test.args(["list"]).run();
    outcome.status(0);
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert_eq!(lines.len(), 21, "{}", outcome.stdout);
    let ids: Vec<&str> = lines[1..].iter().map(|line| line.split_whitespace().next().unwrap_or_default()).collect();
    let mut expected: Vec<String> =
        (1..=20).rev().filter(|index| *index != 7).map(|index| format!("r{index:02}")).collect();
    expected.push("r07".into());
    assert_eq!(ids, expected, "oldest first, the unreadable run last");
    let last = lines[20];
    assert!(last.starts_with("r07  unreadable  ?"), "{last}");
    assert!(last.contains("/.baton/runs/r07/state.json"), "the reason names the file: {last}");
}

/// Before: `baton status RUN | head` printed "error: cannot write to stdout: Broken
/// pipe". A reader that went away ends Baton quietly, as it would end `cat`.
#[test]
fn stdout_closed_by_its_reader_exits_quietly() {
    let outcome = Test::new().file("START.sh", "echo '<result>ok</result>'\n").run_workflow(&["-q"]);
    outcome.status(0);
    let test = outcome.into_test();
    for args in [vec!["status", "test"], vec!["list"]] {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        let output = test.command(&args).stdout(writer).output().expect("run baton");
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
        assert_eq!(output.status.code(), Some(141), "{args:?}");
    }
}

/// Whether `pid` is still running (a zombie waiting for init to reap it is not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(')').map(|(_, rest)| rest.trim_start().to_string()))
        .is_some_and(|rest| !rest.starts_with('Z'))
}

fn pid_from(outcome: &crate::support::Outcome, file: &str) -> i32 {
    std::fs::read_to_string(outcome.root().join(file)).expect("pid file").trim().parse().expect("a pid")
}

/// Before: `( exec sleep 31 ) & echo "<result>x</result>"` finished its step after
/// the output drain, but the `sleep` (same process group) was still alive after
/// Baton exited. What a script leaves running in its group now ends with it.
#[test]
fn script_background_child_does_not_outlive_the_step() {
    let outcome = Test::new()
        .file("START.sh", "( exec sleep 31 ) &\necho $! > background.pid\necho '<result>x</result>'\n")
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("x\n");
    let background = pid_from(&outcome, "background.pid");
    assert!(!running(background), "the background sleep was ended with its step");
}

/// The documented way out: `# baton: keep-background` in a script keeps what it
/// starts in the background (a server for later states) running after its step.
#[test]
fn keep_background_directive_lets_a_daemon_outlive_its_step() {
    let outcome = Test::new()
        .file(
            "START.sh",
            "# baton: keep-background\nsleep 31 > /dev/null 2>&1 < /dev/null &\necho $! > daemon.pid\n\
             echo '<goto>CHECK</goto>'\n",
        )
        .file("CHECK.sh", "kill -0 \"$(cat daemon.pid)\" && echo '<result>still running</result>'\n")
        .run_workflow(&["-q"]);
    let daemon = pid_from(&outcome, "daemon.pid");
    let alive = running(daemon);
    // SAFETY: ending the test's own daemon.
    unsafe { libc::kill(daemon, libc::SIGKILL) };
    outcome.status(0).stdout("still running\n");
    assert!(alive, "the daemon kept running after baton exited");
}

/// Before: an input over ~128 KiB made the next script fail with "Argument list too
/// long" (one environment string is capped by the kernel), and `resume` replayed
/// the same failure; a 5 MB input also made a 10 MB state file. Large inputs now
/// reach scripts through `BATON_INPUT_FILE`, and are stored once.
#[test]
fn input_larger_than_an_environment_variable_reaches_the_script() {
    let outcome = Test::new()
        .file(
            "START.sh",
            "big=$(head -c 300000 /dev/zero | tr '\\0' a)\necho \"<goto input=\\\"$big\\\">NEXT</goto>\"\n",
        )
        .file(
            "NEXT.sh",
            "echo \"<result>${BATON_INPUT-unset} ${RAYMOND_INPUT-unset} $(wc -c < \"$BATON_INPUT_FILE\")</result>\"\n",
        )
        .run_workflow(&["-q"]);
    outcome.status(0).stdout("unset unset 300000\n");
    let state_bytes = outcome.state("test").to_string().len();
    assert!(state_bytes < 100_000, "the consumed input is not kept in the run's state: {state_bytes} bytes");
}

#[test]
fn a_small_input_is_in_the_variables_and_the_file() {
    let outcome = Test::new()
        .file("START.sh", "echo \"<result>$BATON_INPUT $RAYMOND_INPUT $(cat \"$BATON_INPUT_FILE\")</result>\"\n")
        .run_workflow(&["-q", "--input", "hi"]);
    outcome.status(0).stdout("hi hi hi\n");
}

/// A large input waiting for the next state is kept once in the run's files (the
/// step summary keeps only its first 4 KiB), and a resume delivers it whole.
#[test]
fn a_pending_large_input_is_stored_once_and_survives_resume() {
    let outcome = Test::new()
        .file(
            "START.sh",
            "big=$(head -c 300000 /dev/zero | tr '\\0' b)\necho \"<goto input=\\\"$big\\\">NEXT</goto>\"\n",
        )
        .file("NEXT.sh", "echo \"<result>$(wc -c < \"$BATON_INPUT_FILE\")</result>\"\n")
        .run_workflow(&["-q", "--max-steps", "1"]);
    outcome.status(3);
    let size = |file: &str| std::fs::metadata(outcome.run_dir("test").join(file)).map_or(0, |meta| meta.len());
    let state_bytes = size("state.json") + size("journal.jsonl");
    assert!((300_000..400_000).contains(&state_bytes), "one copy of the input: {state_bytes} bytes");
    outcome.rerun(["resume", "test", "--max-steps", "10"]).status(0).stdout("300000\n");
}

/// Before: `baton run wf/run.py` (or `.txt`) sent the file to Claude as a prompt,
/// and `wf/START.bat` created a run that then failed. Only prompts and this
/// platform's scripts are states; anything else is refused before a run exists.
#[test]
fn a_file_of_no_state_kind_is_refused_before_a_run_exists() {
    for (file, message) in [
        (
            "run.py",
            "error: `run.py` in workflow `[ROOT]/wf` is not a state file: a state is a prompt (`.md`) or a script \
             (`.sh`), not `.py`",
        ),
        (
            "notes.txt",
            "error: `notes.txt` in workflow `[ROOT]/wf` is not a state file: a state is a prompt (`.md`) or a script \
             (`.sh`), not `.txt`",
        ),
        ("START.bat", "error: state `START.bat` cannot run on Unix: `.bat` and `.ps1` scripts run only on Windows"),
    ] {
        let outcome = Test::new().file(file, "print(1)\n").args(["run", &format!("wf/{file}")]).run();
        outcome.status(1);
        assert_eq!(outcome.error_message(), message);
        assert!(!outcome.root().join(".baton/runs").exists(), "no run was created for {file}");
    }
}

#[test]
fn a_transition_to_a_file_of_no_state_kind_fails_with_the_kinds() {
    let outcome = Test::new()
        .file("START.sh", "echo '<goto>notes.txt</goto>'\n")
        .file("notes.txt", "hi\n")
        .run_workflow(&["--no-lint", "-q"]);
    outcome.status(1);
    outcome.stderr_contains(
        "script `START.sh`: cannot resolve its transition target: `notes.txt` in workflow `[ROOT]/wf` is not a state \
         file: a state is a prompt (`.md`) or a script (`.sh`), not `.txt`",
    );
}

/// Before: a fork-doubling workflow with `--max-steps 3000` ended at 5,995 steps,
/// because every ready worker was launched before the bound was checked. A step
/// now starts only while completed plus running steps are under the bound.
#[test]
fn max_steps_is_never_overshot_by_forks() {
    let outcome = Test::new().file("START.sh", "echo '<fork next=\"START\">START</fork>'\n").run_workflow(&[
        "-q",
        "--max-steps",
        "60",
        "--no-debug",
    ]);
    outcome.status(3);
    assert_eq!(outcome.state("test")["steps_completed"], 60);
    outcome.stderr_contains("step limit of 60 reached");
}

/// Before: `"version": 99` in `state.json` was accepted and read as if it were this
/// build's format. A newer format is refused, naming the Baton that wrote it.
/// Both places a snapshot lives: the first line of a new run's journal, and
/// `state.json` once a resume (or a long run) compacted the journal.
#[test]
fn a_state_file_from_a_newer_baton_is_refused_with_the_version_needed() {
    let outcome = Test::new()
        .file("START.sh", "echo '<goto>MID</goto>'\n")
        .file("MID.sh", "echo '<goto>END</goto>'\n")
        .file("END.sh", "echo '<result>ok</result>'\n")
        .run_workflow(&["-q", "--max-steps", "1"]);
    outcome.status(3);
    // A second run, resumed once: the resume compacted its journal into state.json.
    let other = outcome.rerun(["run", "wf", "-q", "--run-id", "other", "--max-steps", "1"]);
    other.status(3);
    let mut outcome = other.rerun(["resume", "other", "-q", "--max-steps", "1"]);
    outcome.status(3);
    for (run, file) in [("test", "journal.jsonl"), ("other", "state.json")] {
        let path = outcome.edit_snapshot(run, |state| {
            state["version"] = serde_json::json!(99);
            state["written_by"] = serde_json::json!("7.3.0");
        });
        assert!(path.ends_with(file), "{}", path.display());
        outcome = outcome.rerun(["resume", run]);
        outcome.status(1);
        assert_eq!(
            outcome.error_message(),
            format!(
                "error: [ROOT]/.baton/runs/{run}/{file} is in state format 99, newer than this Baton {} reads \
                 (formats 1 to 6); it was written by Baton 7.3.0: resume it with that version or newer",
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}

/// `<goto input=foo>` drops the unquoted input, as raymond does (R4.6), but no
/// longer silently: the trace and the console record what was ignored.
#[test]
fn an_unquoted_attribute_is_ignored_but_reported() {
    let outcome = Test::new()
        .file("START.sh", "echo '<goto input=foo>NEXT</goto>'\n")
        .file("NEXT.sh", "echo \"<result>${BATON_INPUT-no input}</result>\"\n")
        .run_workflow(&[]);
    outcome.status(0).stdout("no input\n");
    let message = "state `START.sh`: ignored `input=foo` in <goto>: an attribute is written name=\"value\" or \
                   name='value', quoted and with no spaces around `=`";
    outcome.stderr_contains(&format!("[main] warning: {message}"));
    let warnings = outcome.events_of("test", "ErrorOccurred");
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0]["error_type"], "IgnoredAttribute");
    assert_eq!(warnings[0]["message"], message);
}

/// Before: on a full disk the trace flooded stderr with dozens of ERROR lines,
/// the failure read `run full1 failed: agent  at : cannot write the journal …`,
/// the failed status could not be saved (so `status` later said "running … it was
/// killed"), and transitions were missing from `transitions.log` after a
/// successful resume. Now: one warning, one precise error, a status that says
/// what happened, and a trace without gaps after `resume`.
///
/// The disk is a 200 KiB tmpfs mounted in a private mount namespace, which needs
/// root (as CI has); elsewhere the test says so and does nothing.
#[test]
fn a_full_disk_is_reported_once_and_the_run_resumes_without_gaps() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    }
    let test = loop_of(300);
    let script = r#"set -u
mount -t tmpfs -o size=200k tmpfs .baton || exit 90
"$BATON_BIN" run wf --run-id full -q > out/run.stdout 2> out/run.stderr; echo $? > out/run.code
"$BATON_BIN" status full > out/status.stdout 2>&1
mount -o remount,size=16m .baton
"$BATON_BIN" resume full -q > out/resume.stdout 2> out/resume.stderr; echo $? > out/resume.code
cp .baton/runs/full/transitions.log .baton/runs/full/events.jsonl .baton/runs/full/state.json out/
"#;
    std::fs::create_dir_all(test.root().join(".baton")).unwrap();
    std::fs::create_dir_all(test.root().join("out")).unwrap();
    let status = std::process::Command::new("unshare")
        .args(["-m", "--propagation", "private", "bash", "-c", script])
        .current_dir(test.root())
        .env("BATON_BIN", env!("CARGO_BIN_EXE_baton"))
        .env("NO_COLOR", "1")
        .env_remove("BATON_DIR")
        .status()
        .expect("run unshare");
    assert_eq!(status.code(), Some(0), "the namespace script ran");
    let read = |name: &str| std::fs::read_to_string(test.root().join("out").join(name)).expect(name);
    let normalized = |name: &str| crate::support::test_builder::normalize(&read(name), test.root());

    assert_eq!(read("run.code").trim(), "1");
    let stderr = normalized("run.stderr");
    // The trace or the journal meets the full disk first, as their sizes fall; a
    // trace that cannot be written is said once at most.
    assert!(stderr.matches("warning: the trace in").count() <= 1, "{stderr}");
    assert!(!stderr.contains("ERROR"), "{stderr}");
    let failure = regex::Regex::new(concat!(
        r"(?m)^error: run full failed: cannot write (the journal )?\[ROOT\]/\.baton/runs/full/\S+: the disk is full: ",
        r"the write needed \d+ bytes and its file system has \d+ free\n",
        r"continue after fixing it with `baton resume full`$",
    ))
    .unwrap();
    assert!(failure.is_match(&stderr), "{stderr}");

    let status = normalized("status.stdout");
    assert!(status.starts_with("run full: failed\n"), "{status}");
    assert!(status.contains("\nerror: cannot write "), "{status}");

    assert_eq!(read("resume.code").trim(), "0", "{}", read("resume.stderr"));
    assert_eq!(read("resume.stdout"), "done\n");
    let state: serde_json::Value = serde_json::from_str(&read("state.json")).unwrap();
    let steps = state["steps_completed"].as_u64().unwrap();
    assert_eq!(steps, 301);
    let transitions = read("transitions.log");
    let tail: Vec<&str> = transitions.lines().rev().take(4).collect();
    assert_eq!(
        transitions.lines().count() as u64,
        steps,
        "one line per step, none missing, none twice; the last lines, newest first: {tail:#?}\n{}",
        read("resume.stderr")
    );
    let mut commits: Vec<u64> = read("events.jsonl")
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|event| event["type"] == "TransitionOccurred")
        .filter_map(|event| event["commit"].as_u64())
        .collect();
    let traced = commits.len();
    commits.dedup();
    assert_eq!((traced as u64, commits.len() as u64), (steps, steps), "every committed step traced once");
}

/// Before: with a low open-file limit the run failed once live scripts used up the
/// descriptors ("Too many open files"; `ulimit -n 256` failed at 85 workers). Baton
/// now budgets descriptors per running step and queues the rest, saying so once.
#[test]
fn a_wide_fan_out_under_a_low_open_file_limit_completes() {
    let forks: String = (0..600).map(|_| "<fork next=\"DONE\">W</fork>").collect();
    let test = Test::new()
        .file("START.sh", &format!("echo '{forks}'\n"))
        .file("W.sh", "sleep 0.05\necho '<result>w</result>'\n")
        .file("DONE.sh", "echo '<result>main</result>'\n");
    let mut command = test.command(&["run".into(), "wf".into(), "--run-id".into(), "wide".into(), "-q".into()]);
    // SAFETY: setrlimit touches only the child, between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 256, rlim_max: 256 };
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            Ok(())
        });
    }
    let output = command.output().expect("run baton");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "main\n");
    assert_eq!(stderr.matches("under the open-file limit of 256").count(), 1, "said once: {stderr}");
    assert!(!stderr.contains("Too many open files"), "{stderr}");
}

/// Found while hardening: two projects running a run of the same id at once shared
/// one input directory in /dev/shm, so one script could read the other's input.
#[test]
fn runs_of_the_same_id_in_two_projects_keep_their_inputs_apart() {
    let project = |word: &str| {
        let test = Test::new().file("START.sh", "sleep 0.3\necho \"<result>$(cat \"$BATON_INPUT_FILE\")</result>\"\n");
        let child = test.spawn(&["run", "wf", "--run-id", "same", "-q", "--input", word]);
        (test, child)
    };
    let (_first, alpha) = project("alpha");
    let (_second, beta) = project("beta");
    for (child, word) in [(alpha, "alpha"), (beta, "beta")] {
        let output = child.wait_with_output().expect("baton exits");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            format!("{word}\n"),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// A SIGKILLed run's input files in /dev/shm do not outlive it: the watchdog
/// removes the invocation's input directory.
#[test]
fn a_killed_runs_input_files_are_removed() {
    let test = Test::new().file("START.sh", "echo \"$BATON_INPUT_FILE\" > input-file.path\nsleep 30\n");
    let mut child = test.spawn(&["run", "wf", "--run-id", "killed", "-q", "--input", "secret"]);
    assert!(test.wait_for_file("input-file.path"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let path = loop {
        let text = std::fs::read_to_string(test.root().join("input-file.path")).unwrap_or_default();
        if text.ends_with('\n') || std::time::Instant::now() > deadline {
            break std::path::PathBuf::from(text.trim());
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    if !path.starts_with("/dev/shm") {
        let _ = child.kill();
        let _ = child.wait();
        eprintln!("skipped: no /dev/shm here, so the inputs stay in the run directory");
        return;
    }
    assert!(path.exists(), "{}", path.display());
    // SAFETY: signal delivery to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    let directory = path.parent().expect("input directory").to_path_buf();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while directory.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!directory.exists(), "{} is gone", directory.display());
}

/// Before: the last step's events waited for its journal sync while the run's
/// end was written, so a kill right after that left a run marked completed whose
/// trace lacked its last step; a completed run is never resumed, so nothing
/// restored it. Commits here: 1 launches START, 2 records START, 3 records DONE,
/// 4 marks the run completed.
#[test]
fn a_run_killed_right_after_its_end_was_written_has_every_step_in_its_trace() {
    let crashed = Test::new()
        .file("START.sh", "echo '<goto>DONE</goto>'\n")
        .file("DONE.sh", "echo '<result>done</result>'\n")
        .env("BATON_FAILPOINT", "after_journal_append:4")
        .run_workflow(&["-q"]);
    assert_eq!(crashed.status, -1, "baton crashed itself\n{}", crashed.stderr);
    assert_eq!(crashed.state("test")["status"], "completed");
    let commits: Vec<u64> =
        crashed.events_of("test", "TransitionOccurred").iter().filter_map(|event| event["commit"].as_u64()).collect();
    assert_eq!(commits, [2, 3]);
}

/// A journal on a file system in memory is not synced (a power loss takes it
/// whatever Baton does); runs there complete and trace every step all the same.
#[test]
fn a_run_in_memory_completes_without_syncing_its_journal() {
    let root = tempfile::Builder::new().prefix("baton-shm-").tempdir_in("/dev/shm").expect("/dev/shm");
    let workflow = root.path().join("wf");
    std::fs::create_dir_all(&workflow).expect("wf");
    std::fs::write(workflow.join("START.sh"), "echo '<goto>DONE</goto>'\n").expect("write");
    std::fs::write(workflow.join("DONE.sh"), "echo '<result>in memory</result>'\n").expect("write");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["run", "wf", "--run-id", "m", "-q"])
        .current_dir(root.path())
        .env_remove("BATON_SYNC_IN_MEMORY")
        .env_remove("BATON_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("baton");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "in memory\n", "{}", String::from_utf8_lossy(&output.stderr));
    let events = std::fs::read_to_string(root.path().join(".baton/runs/m/events.jsonl")).expect("trace");
    assert_eq!(events.matches("\"TransitionOccurred\"").count(), 2);
}

/// A two-step workflow for the message regressions below.
fn two_steps() -> Test {
    Test::new().file("START.sh", "echo '<goto>END</goto>'\n").file("END.sh", "echo '<result>done</result>'\n")
}

/// Issue 19: `gc --older-than 0s` said "expected a duration such as … 45s, found
/// `0s`". An age of zero is every finished run.
#[test]
fn gc_older_than_0s_deletes_every_finished_run() {
    let ran = two_steps().run_workflow(&["-q"]);
    ran.status(0);
    let gc = ran.rerun(["gc", "--older-than", "0s"]);
    gc.status(0).stdout("deleted test\n");
    assert_eq!(gc.error_message(), "deleted 1 of 1 finished run");
    assert!(!gc.root().join(".baton/runs/test").exists());
}

/// Issue 19: `--baton-dir /etc/passwd list` printed "no runs", exit 0.
#[test]
fn a_baton_dir_that_is_a_file_is_an_error_naming_it() {
    let outcome = Test::new().write("afile", "").args(["--baton-dir", "afile", "list"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: baton directory [ROOT]/afile is not a directory; give --baton-dir (or BATON_DIR) a directory for \
         Baton's runs"
    );
    let discovered = Test::new().write(".baton", "").args(["status", "x"]).run();
    discovered.status(1);
    assert_eq!(
        discovered.error_message(),
        "error: baton directory [ROOT]/.baton is not a directory; give --baton-dir (or BATON_DIR) a directory for \
         Baton's runs"
    );
}

/// Issue 19: `diagram` of an empty directory drew an empty chart, exit 0, where
/// `lint` says the workflow has no entry point.
#[test]
fn diagram_of_a_workflow_without_an_entry_point_fails_as_lint_does() {
    let outcome = Test::new().args(["diagram", "wf"]).run();
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: workflow `wf` has no entry point: expected a `1_START` or `START` state (1_START.md, 1_START.sh, \
         START.md or START.sh)"
    );
    outcome.rerun(["lint", "wf"]).status(1);
}

/// Issue 19: `convert emptydir --output e.yaml` named `emptydir.yaml` in its error.
#[test]
fn convert_of_an_empty_directory_names_no_file_it_would_not_write() {
    let outcome = Test::new().args(["convert", "wf", "--to", "yaml", "--output", "e.yaml"]).run();
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: cannot convert [ROOT]/wf: holds no state files (`.md`, `.sh`, `.ps1`, `.bat`); nothing to convert"
    );
    assert!(!outcome.root().join("e.yaml").exists());
}

/// Issue 19: "1 workflows"; a count and its noun agree everywhere.
#[test]
fn one_of_anything_is_singular() {
    let outcome = two_steps()
        .env("BATON_CLAUDE_BIN", "/nonexistent/claude")
        .write("wf/tests/one.yaml", "expect:\n  steps: 1\n  visits: {END: 2}\n")
        .args(["test", "wf"])
        .run();
    outcome.status(1).stdout(
        "FAIL wf/tests/one.yaml: expected 1 step, got 2; expected END.sh to be entered 2 times, got 1\n0 passed, 1 \
         failed\n",
    );
}

/// Issue 19: `logs --agent nosuch` printed a note and exited 0, while `logs --step
/// 999` is an error (exit 1).
#[test]
fn logs_of_an_unknown_agent_is_an_error_like_an_unknown_step() {
    let ran = two_steps().run_workflow(&["-q"]);
    ran.status(0);
    let outcome = ran.rerun(["logs", "test", "--agent", "mian"]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: run `test` has no agent `mian` (did you mean `main`?); its agents are: main"
    );
    let step = outcome.rerun(["logs", "test", "--step", "999"]);
    step.status(1);
    assert_eq!(step.error_message(), "error: run `test` has no step 999 of agent `main`: its steps are 1 to 2");
}

/// Issue 19: `--input-file /dev/zero` read until memory ran out; what `--input-file`
/// reads is now capped at 32 MiB, with the file named.
#[test]
fn input_file_of_unbounded_size_is_refused_at_32_mib() {
    let outcome = loop_of(1).run_workflow(&["--input-file", "/dev/zero"]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: --input-file /dev/zero is larger than 33554432 bytes (32 MiB), the most baton reads as input"
    );
    assert!(!outcome.root().join(".baton/runs").exists(), "no run was created");
}

/// Issue 19: a YAML state named with 300 characters made a per-step file name over
/// 255 bytes, and the whole trace stopped (`cannot write …: File name too long`).
/// The state's part of those names is now cut to 100 bytes.
#[test]
fn a_state_name_longer_than_a_file_name_keeps_the_trace_going() {
    let long = "S".repeat(300);
    let outcome = Test::new()
        .write(
            "w.yaml",
            &format!(
                "states:\n  START:\n    sh: \"echo '<goto>{long}</goto>'\"\n  {long}:\n    sh: \"echo \
                 '<result>done</result>'\"\n"
            ),
        )
        .args(["run", "w.yaml", "--run-id", "long", "-q"])
        .run();
    outcome.status(0).stdout("done\n");
    assert_eq!(outcome.stderr_normalized(), "done: run long completed: 2 steps, $0.0000, N ms\n");
    let stdout_file = outcome.run_dir("long").join(format!("main_{}_002.stdout.txt", "S".repeat(100)));
    assert_eq!(std::fs::read_to_string(&stdout_file).expect("the step's stdout file"), "<result>done</result>\n");
    assert_eq!(outcome.events_of("long", "ScriptOutput").len(), 2);
}

/// Issue 19: a `.baton` that is a symbolic link to nowhere read as a project with no
/// runs for `list`, and `run` failed with `cannot write [ROOT]/.baton: File exists`.
/// Both now name the link and its missing target.
#[test]
fn a_baton_dir_that_is_a_dangling_symlink_is_an_error_naming_its_target() {
    let test = loop_of(1);
    std::os::unix::fs::symlink(test.root().join("gone"), test.root().join(".baton")).expect("symlink");
    let expected = "error: baton directory [ROOT]/.baton is a symbolic link to [ROOT]/gone, which does not exist; \
                    create that directory, or give --baton-dir (or BATON_DIR) a directory for Baton's runs";
    let listed = test.args(["list"]).run();
    listed.status(1).stdout("");
    assert_eq!(listed.error_message(), expected);
    let ran = listed.rerun(["run", "wf", "-q"]);
    ran.status(1);
    assert_eq!(ran.error_message(), expected);
}

/// Issue 19: a YAML state named by a list, a mapping, `true` or `1.5` was reported
/// in the parser's debug form (`state name Array([String("a")]) is not text`).
#[test]
fn a_yaml_state_name_that_is_not_text_is_named_by_its_kind() {
    let cases = [
        ("? [a]\n  : {sh: x}", "a list"),
        ("true: {sh: x}", "`true` (quote it to use it as a name)"),
        ("1.5: {sh: x}", "`1.5` (quote it to use it as a name)"),
    ];
    for (state, found) in cases {
        let outcome = Test::new().write("w.yaml", &format!("states:\n  {state}\n")).args(["run", "w.yaml"]).run();
        outcome.status(1);
        assert_eq!(
            outcome.error_message(),
            format!("error: YAML workflow `[ROOT]/w.yaml`, line 1: a state name must be text; found {found}")
        );
    }
}

/// Issue 19: a YAML workflow or a `workflow.yaml` that links to `/dev/zero` was read
/// until memory ran out; the 1 MiB limit was checked only after the whole file was
/// in memory. Reading now stops one byte past the limit.
#[test]
fn a_yaml_workflow_or_manifest_of_unbounded_size_is_refused_at_1_mib() {
    let test = loop_of(1);
    std::os::unix::fs::symlink("/dev/zero", test.root().join("zero.yaml")).expect("symlink");
    std::os::unix::fs::symlink("/dev/zero", test.root().join("wf/workflow.yaml")).expect("symlink");
    let yaml = test.args(["run", "zero.yaml"]).run();
    yaml.status(1);
    assert_eq!(
        yaml.error_message(),
        "error: cannot read YAML workflow `[ROOT]/zero.yaml`: the YAML is longer than the limit of 1048576 bytes (1 MiB)"
    );
    let manifest = yaml.rerun(["run", "wf"]);
    manifest.status(1);
    assert_eq!(
        manifest.error_message(),
        "error: manifest `[ROOT]/wf/workflow.yaml`: the YAML is longer than the limit of 1048576 bytes (1 MiB)"
    );
}

/// Issue 19 (found after merging): `baton gc --unreadable` on a run directory that is
/// a symbolic link took the run's lock inside the link's target, writing a `lock` file
/// outside `.baton`. Only the link is removed now; its target is left as it was.
#[test]
fn gc_of_a_symlinked_run_dir_wrote_its_lock_in_the_links_target() {
    let test = loop_of(1);
    let elsewhere = test.root().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("target");
    std::fs::write(elsewhere.join("state.json"), "{ not json").expect("state");
    std::fs::create_dir_all(test.root().join(".baton/runs")).expect("runs");
    std::os::unix::fs::symlink(&elsewhere, test.root().join(".baton/runs/linked")).expect("symlink");
    let outcome = test.args(["gc", "--unreadable"]).run();
    outcome.status(0).stdout("deleted linked\n");
    assert!(!outcome.root().join(".baton/runs/linked").exists(), "the link is gone");
    let left: Vec<_> = std::fs::read_dir(&elsewhere).expect("read").flatten().map(|entry| entry.file_name()).collect();
    assert_eq!(left, ["state.json"], "the target is untouched: no lock file, nothing removed");
}

/// A new run keeps its first snapshot on its journal's first line (issue 22). A journal
/// that lost that line, in a run without `state.json`, cannot be rebuilt: `status` says
/// so and what removes it, `list` shows it unreadable, `repair` refuses, and
/// `gc --unreadable` deletes it.
#[test]
fn a_journal_without_its_first_snapshot_is_an_unreadable_run_gc_removes() {
    let outcome = loop_of(3).run_workflow(&["-q", "--max-steps", "1"]);
    outcome.status(3);
    let journal = outcome.run_dir("test").join("journal.jsonl");
    assert!(!outcome.run_dir("test").join("state.json").exists(), "a short run has no state.json");
    let bytes = std::fs::read(&journal).expect("journal");
    let first = bytes.iter().position(|byte| *byte == b'\n').expect("a first line") + 1;
    assert!(bytes.starts_with(b"{\"snapshot\":"));
    std::fs::write(&journal, &bytes[first..]).expect("drop the snapshot line");
    let message = "[ROOT]/.baton/runs/test/journal.jsonl does not begin with the run's snapshot, and the run has no \
                   state.json: nothing can rebuild the run (a baton was stopped as it created it, or the file was \
                   damaged); `baton gc --unreadable` deletes it";
    let status = outcome.rerun(["status", "test"]);
    status.status(1);
    assert_eq!(status.error_message(), format!("error: {message}"));
    let repair = status.rerun(["repair", "test"]);
    repair.status(1);
    assert_eq!(repair.error_message(), format!("error: {message}"));
    let list = repair.rerun(["list"]);
    list.status(0);
    assert!(list.stdout.contains("unreadable"), "{}", list.stdout);
    let gc = list.rerun(["gc", "--unreadable"]);
    gc.status(0).stdout("deleted test\n");
    assert!(!gc.run_dir("test").exists());
}
