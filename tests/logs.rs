//! `baton logs`: golden output on the recorded runs in `fixtures/runs/`, the
//! filters, `--raw`, a torn last line, errors, and `--follow` of a run another
//! `baton` drives. The fixtures are made by the ignored `regenerate_*` tests at the
//! end (`fixtures/runs/README.md`); `BATON_UPDATE_GOLDEN=1` rewrites the goldens.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::support::Test;
use crate::support::claude_cli::{CLAUDE_ENV_REMOVE, claude_binary, claude_env};
use crate::support::fake_anthropic::{FakeAnthropic, Reply, Rule, ToolUse};

/// The project directory the fixtures' paths were rewritten to.
const FIXTURE_ROOT: &str = "/work/project";

/// The files of a run a fixture keeps.
const RUN_FILES: [&str; 3] = ["state.json", "journal.jsonl", "events.jsonl"];

pub(crate) fn fixture_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/runs").join(name)
}

/// A project holding the recorded run `name` as `.baton/runs/<name>/`.
pub(crate) fn with_fixture(name: &str) -> Test {
    let mut test = Test::new();
    for file in RUN_FILES {
        let path = fixture_dir(name).join(file);
        if let Ok(contents) = std::fs::read_to_string(&path) {
            test = test.write(&format!(".baton/runs/{name}/{file}"), &contents);
        }
    }
    test
}

/// `baton logs ARGS…` in `test`'s project: its stdout, after checking it succeeded.
fn logs(test: Test, args: &[&str]) -> String {
    let outcome = test.args(["logs"].iter().chain(args).copied()).run();
    outcome.status(0);
    outcome.stdout.clone()
}

/// Compare `actual` with `fixtures/runs/<fixture>/<file>` (or write it under `BATON_UPDATE_GOLDEN=1`).
#[track_caller]
pub(crate) fn golden(fixture: &str, file: &str, actual: &str) {
    let path = fixture_dir(fixture).join(file);
    if std::env::var_os("BATON_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    assert_eq!(actual, expected, "{} differs (BATON_UPDATE_GOLDEN=1 rewrites it)", path.display());
}

#[test]
fn logs_of_the_script_countdown_run_read_as_its_console() {
    golden("script-countdown", "logs.txt", &logs(with_fixture("script-countdown"), &["script-countdown"]));
}

#[test]
fn logs_follow_of_a_finished_run_prints_it_and_ends() {
    let shown = logs(with_fixture("script-countdown"), &["script-countdown", "--follow"]);
    golden("script-countdown", "logs.txt", &shown);
}

#[test]
fn logs_step_of_a_script_shows_its_stdout_stderr_exit_code_and_tag() {
    let shown = logs(with_fixture("script-countdown"), &["script-countdown", "--step", "2"]);
    golden("script-countdown", "logs-step-2.txt", &shown);
}

#[test]
fn logs_step_of_a_worker_is_picked_with_agent() {
    let shown = logs(with_fixture("script-countdown"), &["script-countdown", "--step", "1", "--agent", "main_helper1"]);
    golden("script-countdown", "logs-step-1-main_helper1.txt", &shown);
}

#[test]
fn logs_of_the_claude_tools_run_read_as_its_console() {
    golden("claude-tools", "logs.txt", &logs(with_fixture("claude-tools"), &["claude-tools"]));
}

#[test]
fn logs_step_of_a_claude_turn_is_a_transcript_with_tool_calls_results_and_errors() {
    let shown = logs(with_fixture("claude-tools"), &["claude-tools", "--step", "1"]);
    assert!(shown.contains("    result of Read (error)\n"), "{shown}");
    golden("claude-tools", "logs-step-1.txt", &shown);
}

#[test]
fn logs_step_with_a_reminder_shows_every_turn_prompt() {
    let shown = logs(with_fixture("claude-tools"), &["claude-tools", "--step", "3"]);
    assert!(shown.contains("--- reminder 1 prompt\n"), "{shown}");
    golden("claude-tools", "logs-step-3.txt", &shown);
}

#[test]
fn logs_agent_keeps_that_agents_lines_and_the_run_wide_ones() {
    let shown = logs(with_fixture("script-countdown"), &["script-countdown", "--agent", "main_helper1"]);
    golden("script-countdown", "logs-agent-main_helper1.txt", &shown);
    assert!(!shown.contains("[main]"), "{shown}");
}

#[test]
fn logs_state_takes_the_name_with_or_without_its_extension() {
    let bare = logs(with_fixture("script-countdown"), &["script-countdown", "--state", "TICK"]);
    let full = logs(with_fixture("script-countdown"), &["script-countdown", "--state", "TICK.sh"]);
    assert_eq!(bare, full);
    golden("script-countdown", "logs-state-TICK.txt", &bare);
    assert!(!bare.contains("START.sh in"), "{bare}");
}

#[test]
fn logs_raw_prints_the_trace_lines_unchanged() {
    let trace = std::fs::read_to_string(fixture_dir("script-countdown").join("events.jsonl")).expect("fixture");
    assert_eq!(logs(with_fixture("script-countdown"), &["script-countdown", "--raw"]), trace);
    let worker = logs(with_fixture("script-countdown"), &["script-countdown", "--raw", "--agent", "main_helper1"]);
    let kept: Vec<&str> = trace
        .lines()
        .filter(|line| {
            let event: serde_json::Value = serde_json::from_str(line).expect("JSON");
            let about = |key: &str| event[key] == "main_helper1";
            event.get("agent_id").is_none() && event.get("new_agent_id").is_none()
                || about("agent_id")
                || about("new_agent_id")
        })
        .filter(|line| !line.contains("\"RunFailed\""))
        .collect();
    assert_eq!(worker, kept.join("\n") + "\n");
}

#[test]
fn logs_skips_a_torn_last_line() {
    let trace = std::fs::read_to_string(fixture_dir("script-countdown").join("events.jsonl")).expect("fixture");
    let test = with_fixture("script-countdown")
        .write(".baton/runs/script-countdown/events.jsonl", &format!("{trace}{{\"v\":1,\"seq\":999,\"type\":\"Stat"));
    let outcome = test.args(["logs", "script-countdown"]).run();
    outcome.status(0);
    golden("script-countdown", "logs.txt", &outcome.stdout);
    assert_eq!(outcome.stderr, "", "a torn line is no unreadable event");
}

#[test]
fn logs_of_an_unknown_run_is_the_stores_error() {
    let outcome = with_fixture("script-countdown").args(["logs", "script-countdwn"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run `script-countdwn` not found in [ROOT]/.baton/runs; did you mean `script-countdown`?"
    );
}

#[test]
fn logs_step_out_of_range_names_the_valid_steps() {
    let outcome = with_fixture("script-countdown").args(["logs", "script-countdown", "--step", "99"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run `script-countdown` has no step 99 of agent `main`: its steps are 1 to 6"
    );
    let outcome =
        with_fixture("script-countdown").args(["logs", "script-countdown", "--step", "1", "--agent", "ghost"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run `script-countdown` has no step 1 of agent `ghost`: the run has no such agent; its agents are: \
         main, main_helper1 (pick one with --agent)"
    );
}

/// `baton logs --follow` of a run driven by another process: it shows the steps as
/// they happen and ends by itself when the run does. The run waits at a gate file
/// the test opens only once the follower has shown the step before it.
#[test]
fn logs_follow_shows_a_live_run_and_ends_with_it() {
    let test = Test::new()
        .file("START.sh", "echo '<goto>WAIT</goto>'\n")
        .file(
            "WAIT.sh",
            "while [ ! -f gate ]; do sleep 0.05; done\necho '<print>gate open</print>'\necho '<goto>AFTER</goto>'\n",
        )
        .file("AFTER.sh", "echo '<result>after the gate</result>'\n");
    let mut driver = test.spawn(&["run", "wf", "--run-id", "live"]);
    assert!(test.wait_for_file(".baton/runs/live/journal.jsonl"), "the run never started");
    let mut follower = test.spawn(&["logs", "live", "--follow"]);
    let stdout = follower.stdout.take().expect("follower stdout");
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let timeout = Duration::from_secs(60);
    let mut seen = Vec::new();
    // The follower shows the run's progress up to the gate while the run waits there.
    while !seen.iter().any(|line: &String| line == "[main] > WAIT.sh") {
        seen.push(lines.recv_timeout(timeout).unwrap_or_else(|_| panic!("the follower showed only {seen:#?}")));
    }
    std::fs::write(test.root().join("gate"), "").expect("open the gate");
    // The channel closes when the follower exits: it must do so by itself.
    while let Ok(line) = lines.recv_timeout(timeout) {
        seen.push(line);
    }
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = follower.try_wait().expect("follower status") {
            break status;
        }
        assert!(Instant::now() < deadline, "the follower did not end with the run: {seen:#?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "follower failed: {status}");
    assert!(driver.wait().expect("driver").success());
    let shown = seen.join("\n");
    for expected in [
        "run live started: ",
        "[main] < START.sh in ",
        "[main] print: gate open",
        "[main] > AFTER.sh",
        "[main] < AFTER.sh in ",
        "done: run live completed: 3 steps",
    ] {
        assert!(shown.contains(expected), "the follower did not show {expected:?}:\n{shown}");
    }
}

// ---------------------------------------------------------------------------
// The fixtures. Run `cargo test --test integration logs::regenerate -- --ignored` to make
// them again (then `BATON_UPDATE_GOLDEN=1 cargo test --test integration logs::` for the
// goldens); `fixtures/runs/README.md` says what each holds.

/// Copy run `run_id` of `root` into `fixtures/runs/<run_id>/`, with the project's
/// temporary path replaced by [`FIXTURE_ROOT`] (also in the dashed form Claude Code
/// uses in its own directory names) and each `(from, to)` of `more` applied.
fn save_fixture(root: &Path, run_id: &str, more: &[(&str, &str)]) {
    let root_text = root.to_string_lossy().into_owned();
    let dashed = root_text.replace(['/', '.'], "-");
    let fixed_dashed = FIXTURE_ROOT.replace('/', "-");
    let target = fixture_dir(run_id);
    std::fs::create_dir_all(&target).expect("fixture dir");
    for file in RUN_FILES {
        let Ok(contents) = std::fs::read_to_string(root.join(".baton/runs").join(run_id).join(file)) else { continue };
        let mut fixed = contents.replace(&root_text, FIXTURE_ROOT).replace(&dashed, &fixed_dashed);
        for (from, to) in more {
            fixed = fixed.replace(from, to);
        }
        std::fs::write(target.join(file), fixed).expect("write fixture");
    }
}

#[test]
#[ignore = "regenerates fixtures/runs/script-countdown"]
fn regenerate_script_countdown_fixture() {
    let test = Test::new()
        .file(
            "START.sh",
            "#!/usr/bin/env bash\n# A helper runs beside the countdown.\necho \"<print>Counting down from ${BATON_INPUT:-3}</print>\"\necho '<fork next=\"TICK\" word=\"ignition\">HELPER</fork>'\n",
        )
        .file(
            "HELPER.sh",
            "#!/usr/bin/env bash\necho \"helper checks $word\" >&2\necho \"<result>$word checked</result>\"\n",
        )
        .file(
            "TICK.sh",
            "#!/usr/bin/env bash\nn=\"${BATON_INPUT:-3}\"\nif [ \"$n\" -le 0 ]; then\n  echo '<goto>LIFTOFF</goto>'\nelse\n  echo \"<print>$n...</print>\"\n  echo \"tick $n\" >&2\n  echo \"<goto input=\\\"$((n - 1))\\\">TICK</goto>\"\nfi\n",
        )
        .file("LIFTOFF.sh", "#!/usr/bin/env bash\necho '<result>Liftoff!</result>'\n");
    let outcome = test.args(["run", "wf", "--run-id", "script-countdown", "--input", "3"]).run();
    outcome.status(0);
    save_fixture(outcome.root(), "script-countdown", &[]);
}

#[test]
#[ignore = "regenerates fixtures/runs/claude-tools (needs the pinned Claude Code CLI)"]
fn regenerate_claude_tools_fixture() {
    let fake = FakeAnthropic::start(vec![
        Rule::when_prompt("WORK STATE").on_round(0).reply(
            Reply::text("I'll write a note, then read a file that is not there.")
                .with_tool_use(ToolUse::bash("echo hello > note.txt && cat note.txt"))
                .with_tool_use(ToolUse::read("missing.txt")),
        ),
        Rule::when_prompt("WORK STATE")
            .on_round(1)
            .reply_text("The note is written; missing.txt is missing.\n<goto>CHECK</goto>"),
        Rule::when_prompt("REMINDER: Emit exactly one").resumed().reply_text("Sorry.\n<result>all good</result>"),
        Rule::when_prompt("SUMMARY STATE").reply_text("Everything checks out."),
    ]);
    let mut test = Test::new()
        .file("START.md", "WORK STATE: write note.txt, then read missing.txt.\n")
        .file("CHECK.sh", "#!/usr/bin/env bash\necho \"note says: $(cat note.txt)\"\necho 'checked the note' >&2\necho '<goto>SUMMARY</goto>'\n")
        .file(
            "SUMMARY.md",
            "---\nallowed_transitions:\n  - { tag: goto, target: START }\n  - { tag: result }\n---\nSUMMARY STATE: say how it went.\n",
        );
    for key in CLAUDE_ENV_REMOVE {
        test = test.env_remove(key);
    }
    for (key, value) in claude_env(&fake.url()) {
        test = test.env(&key, &value);
    }
    let test = test.env("BATON_CLAUDE_BIN", &claude_binary().to_string_lossy());
    let outcome = test.args(["run", "wf", "--run-id", "claude-tools"]).run();
    outcome.status(0).stdout("all good\n");
    assert!(fake.unmatched().is_empty(), "{}", fake.summary());
    let config_dir = fake.config_dir().to_string_lossy().into_owned();
    save_fixture(outcome.root(), "claude-tools", &[(&config_dir, "/work/claude-config")]);
}
