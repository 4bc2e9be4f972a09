//! `Test::new().file("START.sh", "...").args(["run", "wf"]).run()` writes a temp
//! project (with a `.git` marker, so `.baton/` is created inside it), runs the real
//! binary there, and returns an [`Outcome`] with normalised output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

pub(crate) struct Test {
    root: tempfile::TempDir,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// Another `baton` to run instead of the one this build made (a bench's A/B).
    binary: Option<PathBuf>,
}

impl Default for Test {
    fn default() -> Test {
        Test::new()
    }
}

impl Test {
    /// An empty project with a workflow directory `wf/`.
    pub(crate) fn new() -> Test {
        let root = tempfile::Builder::new().prefix("baton-test-").tempdir().expect("temp dir");
        std::fs::create_dir_all(root.path().join(".git")).expect(".git marker");
        std::fs::create_dir_all(root.path().join("wf")).expect("wf dir");
        Test { root, args: Vec::new(), env: Vec::new(), binary: None }
    }

    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }

    /// Write `contents` to `wf/<name>` (a state of the default workflow).
    pub(crate) fn file(self, name: &str, contents: &str) -> Test {
        self.write(&format!("wf/{name}"), contents)
    }

    /// Write `contents` to `<root>/<path>`, creating directories.
    pub(crate) fn write(self, path: &str, contents: &str) -> Test {
        let full = self.root.path().join(path);
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).expect("parent dir");
        }
        std::fs::write(&full, contents).expect("write test file");
        self
    }

    pub(crate) fn args<I, S>(mut self, args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    pub(crate) fn env(mut self, key: &str, value: &str) -> Test {
        self.env.push((key.to_string(), value.to_string()));
        self
    }

    /// Run `binary` as `baton` from now on, instead of the one this build made.
    #[allow(dead_code)] // For `benches/backend_overhead.rs --versus`; no test compares builds.
    pub(crate) fn binary(mut self, binary: Option<&Path>) -> Test {
        self.binary = binary.map(Path::to_path_buf);
        self
    }

    /// Use the fake Claude CLI (`support::fake_claude`) for prompt states.
    pub(crate) fn with_fake_claude(self) -> Test {
        let dir = self.root.path().join(".fake-claude");
        let test = self.env("BATON_CLAUDE_BIN", &super::fake_claude::binary().to_string_lossy());
        test.env("FAKE_CLAUDE_DIR", &dir.to_string_lossy())
    }

    /// Stop setting `key` for later commands.
    pub(crate) fn env_remove(mut self, key: &str) -> Test {
        self.env.retain(|(name, _)| name != key);
        self
    }

    /// `baton run wf --run-id test` plus `extra` arguments.
    pub(crate) fn run_workflow(self, extra: &[&str]) -> Outcome {
        let mut args = vec!["run".to_string(), "wf".to_string(), "--run-id".to_string(), "test".to_string()];
        args.extend(extra.iter().map(|arg| arg.to_string()));
        self.args(args).run()
    }

    pub(crate) fn run(self) -> Outcome {
        self.run_in(".")
    }

    /// Run with the working directory `<root>/<subdirectory>`.
    pub(crate) fn run_in(self, subdirectory: &str) -> Outcome {
        let output =
            self.command(&self.args).current_dir(self.root.path().join(subdirectory)).output().expect("run baton");
        Outcome {
            status: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            test: self,
        }
    }

    /// Start `baton <args>` in the background (stdout and stderr captured).
    pub(crate) fn spawn(&self, args: &[&str]) -> std::process::Child {
        self.spawn_with_stdin(args, Stdio::null())
    }

    /// Start `baton <args>` in the background with its stdin a pipe the test writes
    /// to, as a supervisor does under `--on-ask json` (stdout and stderr captured).
    pub(crate) fn spawn_piped(&self, args: &[&str]) -> std::process::Child {
        self.spawn_with_stdin(args, Stdio::piped())
    }

    fn spawn_with_stdin(&self, args: &[&str], stdin: Stdio) -> std::process::Child {
        let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
        let mut command = self.command(&args);
        command.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped());
        command.spawn().expect("spawn baton")
    }

    /// The events of run `run_id` written so far (a line still being written is left out).
    pub(crate) fn events_so_far(&self, run_id: &str) -> Vec<Value> {
        let path = self.root.path().join(".baton/runs").join(run_id).join("events.jsonl");
        let text = std::fs::read_to_string(path).unwrap_or_default();
        text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    }

    /// Wait (up to 20 s) until run `run_id`'s trace has an event that `matches`;
    /// the first such event. Fails the test, with the trace, if none comes.
    #[track_caller]
    pub(crate) fn wait_for_event(&self, run_id: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let events = self.events_so_far(run_id);
            if let Some(event) = events.iter().find(|event| matches(event)) {
                return event.clone();
            }
            if std::time::Instant::now() >= deadline {
                let trace: Vec<String> = events.iter().map(Value::to_string).collect();
                panic!("the awaited event never came; the trace:\n{}", trace.join("\n"));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Wait (up to 20 s) until `<root>/<path>` exists; false if it never does.
    pub(crate) fn wait_for_file(&self, path: &str) -> bool {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if self.root.path().join(path).exists() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }

    /// The command for `baton <args>` in this project, ready to spawn.
    pub(crate) fn command(&self, args: &[String]) -> Command {
        let binary = self.binary.as_deref().unwrap_or(Path::new(env!("CARGO_BIN_EXE_baton")));
        let mut command = Command::new(binary);
        command
            .args(args)
            .current_dir(self.root.path())
            .env_remove("BATON_DIR")
            .env_remove("BATON_CLAUDE_BIN")
            .env_remove("BATON_PI_BIN")
            .env_remove("BATON_CODEX_BIN")
            .env_remove("BATON_LOG")
            // A developer's own collector never receives the tests' runs (tests/otel.rs sets its own).
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env("NO_COLOR", "1")
            .env("BATON_RETRY_BASE_MS", "10")
            // The journal is synced even when the temp dir is in memory, so every test
            // runs the same persistence code wherever it runs.
            .env("BATON_SYNC_IN_MEMORY", "1")
            .env("BATON_BIN", binary)
            .stdin(Stdio::null());
        for (key, value) in &self.env {
            command.env(key, value);
        }
        command
    }
}

pub(crate) struct Outcome {
    pub(crate) status: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) test: Test,
}

impl Outcome {
    pub(crate) fn root(&self) -> &Path {
        self.test.root()
    }

    pub(crate) fn run_dir(&self, run_id: &str) -> PathBuf {
        self.root().join(".baton/runs").join(run_id)
    }

    /// Change run `run_id`'s snapshot on disk by hand: its `state.json`, or, for a run
    /// that has none yet, the first line of its journal (`docs/state-format.md`).
    /// Returns the file changed.
    pub(crate) fn edit_snapshot(&self, run_id: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
        let state_path = self.run_dir(run_id).join("state.json");
        if let Ok(text) = std::fs::read_to_string(&state_path) {
            let mut state: Value = serde_json::from_str(&text).expect("state.json is JSON");
            edit(&mut state);
            std::fs::write(&state_path, state.to_string()).expect("write state.json");
            return state_path;
        }
        let journal = self.run_dir(run_id).join("journal.jsonl");
        let bytes = std::fs::read(&journal).expect("the run's journal");
        let end = bytes.iter().position(|byte| *byte == b'\n').expect("a first line") + 1;
        let mut line: Value = serde_json::from_slice(&bytes[..end]).expect("the first line is JSON");
        edit(&mut line["snapshot"]);
        let mut edited = line.to_string().into_bytes();
        edited.push(b'\n');
        edited.extend_from_slice(&bytes[end..]);
        std::fs::write(&journal, edited).expect("write the journal");
        journal
    }

    /// stderr with the temp root replaced by `[ROOT]` and durations by `N ms`.
    pub(crate) fn stderr_normalized(&self) -> String {
        normalize(&self.stderr, self.root())
    }

    /// Fail with the whole output when the exit code is not `expected`.
    #[track_caller]
    pub(crate) fn status(&self, expected: i32) -> &Outcome {
        assert_eq!(
            self.status, expected,
            "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub(crate) fn stdout(&self, expected: &str) -> &Outcome {
        assert_eq!(self.stdout, expected, "stdout differs\n--- stderr\n{}", self.stderr);
        self
    }

    #[track_caller]
    pub(crate) fn stderr_contains(&self, expected: &str) -> &Outcome {
        let normalized = self.stderr_normalized();
        assert!(normalized.contains(expected), "stderr lacks {expected:?}\n--- stderr (normalized)\n{normalized}");
        self
    }

    /// The `error: …` line(s) Baton printed for a command that failed before a run.
    pub(crate) fn error_message(&self) -> String {
        normalize(self.stderr.trim_end(), self.root())
    }

    /// The state of run `run_id` as Baton reads it back (snapshot + journal),
    /// from `baton status --json`.
    pub(crate) fn state(&self, run_id: &str) -> Value {
        let output = self
            .test
            .command(&["status".into(), "--json".into(), run_id.into()])
            .output()
            .expect("baton status --json");
        assert!(output.status.success(), "baton status failed: {}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).expect("status --json prints JSON")
    }

    /// Every event of run `run_id`, in order.
    pub(crate) fn events(&self, run_id: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.run_dir(run_id).join("events.jsonl")).unwrap_or_default();
        text.lines().map(|line| serde_json::from_str(line).expect("event line is JSON")).collect()
    }

    /// The events of type `kind`.
    pub(crate) fn events_of(&self, run_id: &str, kind: &str) -> Vec<Value> {
        self.events(run_id).into_iter().filter(|event| event["type"] == kind).collect()
    }

    /// The project, for further commands.
    pub(crate) fn into_test(self) -> Test {
        self.test
    }

    /// Run `baton <args>` again in the same project.
    pub(crate) fn rerun<I, S>(self, args: I) -> Outcome
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.test.args(args).run()
    }
}

/// Replace what changes from run to run: the temp root and durations.
pub(crate) fn normalize(text: &str, root: &Path) -> String {
    let root = root.to_string_lossy();
    let replaced = text.replace(root.as_ref(), "[ROOT]");
    let durations = regex::Regex::new(r"\b\d+(\.\d+)? (ms|s)\b").expect("regex");
    durations.replace_all(&replaced, "N ms").into_owned()
}
