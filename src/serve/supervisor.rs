//! The runs this daemon drives, each a `baton` child process on the project's
//! `.baton` directory: `run`, `resume` and `rerun` exactly as a person would type
//! them, plus `--on-ask json` so that answers and single-agent cancels reach the
//! live run as JSON lines on its stdin while its other agents go on.
//!
//! A child rather than a task in this process: the run is then the very same
//! program, persistence and signal handling as on the command line (a daemon that
//! dies cannot take a run's state with it), and a person can inspect, resume or
//! answer it with the CLI at any time. Each child is in a process group of its
//! own, so a Ctrl-C at the daemon's terminal reaches the daemon, which then stops
//! every child once, as `baton run` expects (a second SIGINT would kill its steps).
//!
//! Runs started here are recorded in `.baton/serve/runs/<run_id>.json`; a new
//! daemon resumes those that were live when the last one stopped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::{broadcast, watch};

use crate::model::run_state::RunStatus;
use crate::process::group::signal_process;
use crate::serve::ServeError;
use crate::store::lock::RunLock;
use crate::store::runs::RunStore;

/// How long a child gets to show it took its run before the request gives up.
const LAUNCH_WAIT: Duration = Duration::from_secs(20);
/// How long children get to drain after the daemon's stop, before they are killed.
const DRAIN_WAIT: Duration = Duration::from_secs(90);

/// Where the daemon in `serve_dir` records run `run_id`.
pub(crate) fn served_record(serve_dir: &Path, run_id: &str) -> PathBuf {
    serve_dir.join("runs").join(format!("{run_id}.json"))
}

/// What the daemon keeps about a run it started.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ServedRun {
    pub(crate) run_id: String,
    pub(crate) workflow_id: Option<String>,
    pub(crate) created_at: String,
    /// Stopped by a cancel (`POST …/cancel`): a person wants it stopped, so the next
    /// daemon does not resume it; a resume (or an answer) clears this.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) cancelled: bool,
}

struct ChildHandle {
    pid: u32,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    exited: watch::Receiver<Option<i32>>,
}

/// A child just started: the process, its pid, and its exit code once it ends
/// (`exit_sender` is for the task that waits for it).
struct Spawned {
    child: tokio::process::Child,
    pid: u32,
    exited: watch::Receiver<Option<i32>>,
    exit_sender: watch::Sender<Option<i32>>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum LaunchError {
    #[error("cannot start baton: {0}")]
    Spawn(std::io::Error),
    #[error("{0}")]
    Refused(String),
    #[error("the daemon is stopping")]
    Stopping,
    #[error("this daemon drives run `{0}` already")]
    Busy(String),
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum SendError {
    #[error("this daemon does not drive run `{0}` now")]
    NotDriven(String),
    #[error("run `{run_id}` no longer reads its input: {source}")]
    Closed { run_id: String, source: std::io::Error },
}

pub(crate) struct Supervisor {
    exe: PathBuf,
    store: RunStore,
    served_dir: PathBuf,
    logs_dir: PathBuf,
    /// Input and answers on their way to a child (`--input-file`).
    inputs_dir: PathBuf,
    children: Mutex<HashMap<String, Arc<ChildHandle>>>,
    stopping: AtomicBool,
    /// Run ids whose child started or ended.
    changed: broadcast::Sender<String>,
}

impl Supervisor {
    pub(crate) fn new(store: RunStore) -> Result<Supervisor, ServeError> {
        let exe = std::env::current_exe().map_err(|source| ServeError::CurrentExe { source })?;
        let serve_dir = store.baton_dir().join("serve");
        let served_dir = serve_dir.join("runs");
        let logs_dir = serve_dir.join("logs");
        let inputs_dir = serve_dir.join("inputs");
        forget_old_inputs(&inputs_dir);
        for dir in [&served_dir, &logs_dir] {
            std::fs::create_dir_all(dir).map_err(|source| ServeError::Write { path: dir.clone(), source })?;
        }
        let (changed, _) = broadcast::channel(256);
        Ok(Supervisor {
            exe,
            store,
            served_dir,
            logs_dir,
            inputs_dir,
            children: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
            changed,
        })
    }

    pub(crate) fn changes(&self) -> broadcast::Receiver<String> {
        self.changed.subscribe()
    }

    /// Whether this daemon started run `run_id` (now or in an earlier life).
    pub(crate) fn served(&self, run_id: &str) -> bool {
        self.record(run_id).is_file()
    }

    /// Whether a child of this daemon drives run `run_id` now.
    pub(crate) fn drives(&self, run_id: &str) -> bool {
        self.child(run_id).is_some_and(|child| child.exited.borrow().is_none())
    }

    pub(crate) fn live_count(&self) -> usize {
        let children = self.children.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        children.values().filter(|child| child.exited.borrow().is_none()).count()
    }

    fn child(&self, run_id: &str) -> Option<Arc<ChildHandle>> {
        self.children.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(run_id).cloned()
    }

    fn record(&self, run_id: &str) -> PathBuf {
        self.served_dir.join(format!("{run_id}.json"))
    }

    fn read_record(&self, run_id: &str) -> Option<ServedRun> {
        serde_json::from_slice(&std::fs::read(self.record(run_id)).ok()?).ok()
    }

    fn write_record(&self, record: &ServedRun) -> std::io::Result<()> {
        let text = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
        std::fs::write(self.record(&record.run_id), text)
    }

    /// Remember that run `run_id` was cancelled, so that no later daemon resumes it
    /// on its own (a run this daemon never started has no record and needs none).
    pub(crate) fn mark_cancelled(&self, run_id: &str) {
        if let Some(record) = self.read_record(run_id) {
            let _ = self.write_record(&ServedRun { cancelled: true, ..record });
        }
    }

    fn log_path(&self, run_id: &str) -> PathBuf {
        self.logs_dir.join(format!("{run_id}.log"))
    }

    /// Start `baton ARGS` in `cwd` to drive run `run_id`, and wait until it has taken
    /// the run (or ended: a refusal is the child's own `error:` message).
    pub(crate) async fn launch(
        &self,
        run_id: &str,
        workflow_id: Option<String>,
        args: &[String],
        cwd: &Path,
    ) -> Result<(), LaunchError> {
        if self.stopping.load(Ordering::SeqCst) {
            return Err(LaunchError::Stopping);
        }
        let record_path = self.record(run_id);
        match self.read_record(run_id) {
            // Driven again: no longer a cancelled run.
            Some(record) if record.cancelled => {
                self.write_record(&ServedRun { cancelled: false, ..record }).map_err(LaunchError::Spawn)?;
            }
            Some(_) => {}
            None if record_path.exists() => {}
            None => {
                let record = ServedRun {
                    run_id: run_id.to_string(),
                    workflow_id,
                    created_at: jiff::Timestamp::now().to_string(),
                    cancelled: false,
                };
                self.write_record(&record).map_err(LaunchError::Spawn)?;
            }
        }
        // The text a person typed goes to the child in a file, never as an argument:
        // an argument starting with `-` reads as a flag, and one over 128 KiB is
        // refused by the kernel ("Argument list too long").
        let (args, input) = take_input(args);
        let input_file = match input {
            Some(text) => Some(self.write_input(run_id, &text).map_err(LaunchError::Spawn)?),
            None => None,
        };
        let launched = self.launch_child(run_id, &args, input_file.clone(), cwd).await;
        if launched.is_err()
            && let Some(path) = &input_file
        {
            let _ = std::fs::remove_file(path);
        }
        launched
    }

    /// Write `text` to a new file only this user can read, under `.baton/serve/inputs`.
    fn write_input(&self, run_id: &str, text: &str) -> std::io::Result<PathBuf> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::create_dir_all(&self.inputs_dir)?;
        let nonce = jiff::Timestamp::now().as_nanosecond();
        let path = self.inputs_dir.join(format!("{run_id}-{nonce}.txt"));
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path)?;
        file.write_all(text.as_bytes())?;
        Ok(path)
    }

    /// Spawn the child of [`launch`] (`--input-file input_file` added when given),
    /// and wait until it took the run.
    async fn launch_child(
        &self,
        run_id: &str,
        args: &[String],
        input_file: Option<PathBuf>,
        cwd: &Path,
    ) -> Result<(), LaunchError> {
        let log_path = self.log_path(run_id);
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&log_path).map_err(LaunchError::Spawn)?;
        let log_err = log.try_clone().map_err(LaunchError::Spawn)?;
        let log_start = log.metadata().map(|metadata| metadata.len()).unwrap_or(0);
        let mut command = tokio::process::Command::new(&self.exe);
        command
            .arg("--baton-dir")
            .arg(self.store.baton_dir())
            .args(args)
            .args(input_file.iter().flat_map(|path| [std::ffi::OsStr::new("--input-file"), path.as_os_str()]))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::from(log))
            .stderr(Stdio::from(log_err))
            .process_group(0)
            .kill_on_drop(false);
        let Spawned { mut child, pid, exited, exit_sender } = self.register(run_id, &mut command)?;
        let _ = self.changed.send(run_id.to_string());
        let changed = self.changed.clone();
        let waited_run = run_id.to_string();
        tokio::spawn(async move {
            let code = match child.wait().await {
                Ok(status) => status.code().unwrap_or(-1),
                Err(_) => -1,
            };
            // The child read its input when it started; nothing else needs the file.
            if let Some(path) = input_file {
                let _ = std::fs::remove_file(path);
            }
            let _ = exit_sender.send(Some(code));
            let _ = changed.send(waited_run);
        });
        self.taken(run_id, pid, exited, &log_path, log_start).await
    }

    /// Spawn `command` as the one child driving `run_id`: checked and registered under
    /// one lock, so two requests at once cannot both start one (the second would lose
    /// to the run's lock and hide the first from answers and cancels).
    fn register(&self, run_id: &str, command: &mut tokio::process::Command) -> Result<Spawned, LaunchError> {
        let mut children = self.children.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if children.get(run_id).is_some_and(|child| child.exited.borrow().is_none()) {
            return Err(LaunchError::Busy(run_id.to_string()));
        }
        let mut child = command.spawn().map_err(LaunchError::Spawn)?;
        let pid = child.id().unwrap_or_default();
        let stdin = child.stdin.take();
        let (exit_sender, exited) = watch::channel(None);
        let handle = Arc::new(ChildHandle { pid, stdin: tokio::sync::Mutex::new(stdin), exited: exited.clone() });
        children.insert(run_id.to_string(), handle);
        Ok(Spawned { child, pid, exited, exit_sender })
    }

    /// Wait until the child `pid` drives run `run_id` (holds its lock) or has ended.
    async fn taken(
        &self,
        run_id: &str,
        pid: u32,
        mut exited: watch::Receiver<Option<i32>>,
        log_path: &Path,
        log_start: u64,
    ) -> Result<(), LaunchError> {
        let run_dir = self.store.run_dir(run_id);
        let deadline = tokio::time::Instant::now() + LAUNCH_WAIT;
        loop {
            if let Some(code) = *exited.borrow_and_update() {
                // It ended: a run that exists ran (and perhaps finished already); one
                // that does not was refused, and the child said why.
                if self.store.exists(run_id) && code != 1 {
                    return Ok(());
                }
                let said = log_since(log_path, log_start);
                if self.store.exists(run_id) && !said.lines().any(|line| line.starts_with("error: ")) {
                    return Ok(());
                }
                if !self.store.exists(run_id) {
                    // Never a run: nothing to recover later.
                    let _ = std::fs::remove_file(self.record(run_id));
                }
                return Err(LaunchError::Refused(error_lines(&said)));
            }
            if RunLock::holder(&run_dir).is_some_and(|holder| holder == pid.to_string()) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(());
            }
            tokio::select! {
                _ = exited.changed() => {}
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
            }
        }
    }

    /// Send one control line to the child driving `run_id`.
    pub(crate) async fn send(&self, run_id: &str, line: &serde_json::Value) -> Result<(), SendError> {
        let Some(child) = self.child(run_id).filter(|child| child.exited.borrow().is_none()) else {
            return Err(SendError::NotDriven(run_id.to_string()));
        };
        let mut stdin = child.stdin.lock().await;
        let Some(writer) = stdin.as_mut() else { return Err(SendError::NotDriven(run_id.to_string())) };
        let text = format!("{line}\n");
        let written = async {
            writer.write_all(text.as_bytes()).await?;
            writer.flush().await
        };
        written.await.map_err(|source| SendError::Closed { run_id: run_id.to_string(), source })
    }

    /// Resume the runs an earlier daemon drove that no process drives now (a
    /// daemon stopped, or killed, while they ran). One still driven by a
    /// leftover child is resumed once that child lets go.
    pub(crate) fn recover(self: &Arc<Self>) -> usize {
        let Ok(records) = std::fs::read_dir(&self.served_dir) else { return 0 };
        let mut recovering = 0;
        for record in records.filter_map(Result::ok) {
            let name = record.file_name().to_string_lossy().to_string();
            let Some(run_id) = name.strip_suffix(".json").map(str::to_string) else { continue };
            // Cancelled runs stay stopped until someone resumes them.
            if self.read_record(&run_id).is_some_and(|record| record.cancelled) {
                continue;
            }
            let Ok(run) = self.store.load(&run_id) else { continue };
            if !matches!(run.status, RunStatus::Running | RunStatus::Interrupted) {
                continue;
            }
            recovering += 1;
            let supervisor = Arc::clone(self);
            let cwd = run
                .agents
                .first()
                .map(|agent| agent.cwd.clone())
                .unwrap_or_else(|| self.store.baton_dir().to_path_buf());
            tokio::spawn(async move {
                let run_dir = supervisor.store.run_dir(&run_id);
                while RunLock::holder(&run_dir).is_some() {
                    if supervisor.stopping.load(Ordering::SeqCst) {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                let still = supervisor.store.load(&run_id).map(|run| run.status);
                if !matches!(still, Ok(RunStatus::Running | RunStatus::Interrupted)) {
                    return;
                }
                let args = resume_args(&run_id, &ResumeOptions::default());
                let cwd = if cwd.is_dir() { cwd } else { std::env::temp_dir() };
                if let Err(error) = supervisor.launch(&run_id, None, &args, &cwd).await {
                    eprintln!("baton serve: cannot resume run {run_id}: {error}");
                }
            });
        }
        recovering
    }

    /// Stop launching, ask every child to stop (SIGINT: drain and save, as Ctrl-C
    /// does), and wait for them; a child still running after `DRAIN_WAIT` is killed.
    pub(crate) async fn shutdown(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let children: Vec<Arc<ChildHandle>> =
            self.children.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).values().cloned().collect();
        for child in &children {
            if child.exited.borrow().is_none() {
                signal_process(child.pid, libc::SIGINT);
            }
        }
        let deadline = tokio::time::Instant::now() + DRAIN_WAIT;
        for child in children {
            let mut exited = child.exited.clone();
            let ended = tokio::time::timeout_at(deadline, exited.wait_for(Option::is_some)).await;
            if ended.is_err() {
                signal_process(child.pid, libc::SIGKILL);
            }
        }
    }
}

/// What a resume (or the resume that answers) changes.
#[derive(Debug, Default)]
pub(crate) struct ResumeOptions {
    pub(crate) answer: Option<(String, String)>,
    pub(crate) budget: Option<f64>,
    pub(crate) max_steps: Option<u64>,
    pub(crate) time_limit: Option<String>,
}

/// The arguments of `baton resume` for `run_id`.
pub(crate) fn resume_args(run_id: &str, options: &ResumeOptions) -> Vec<String> {
    let mut args = vec!["resume".to_string(), run_id.to_string()];
    if let Some((ask_id, text)) = &options.answer {
        args.extend(["--ask".to_string(), ask_id.clone(), "--input".to_string(), text.clone()]);
    }
    bounds(&mut args, options.budget, options.max_steps, options.time_limit.as_deref());
    args.extend(["--on-ask".to_string(), "json".to_string(), "-q".to_string()]);
    args
}

pub(crate) fn bounds(args: &mut Vec<String>, budget: Option<f64>, max_steps: Option<u64>, time_limit: Option<&str>) {
    if let Some(budget) = budget {
        args.extend(["--budget".to_string(), budget.to_string()]);
    }
    if let Some(steps) = max_steps {
        args.extend(["--max-steps".to_string(), steps.to_string()]);
    }
    if let Some(limit) = time_limit {
        args.extend(["--time-limit".to_string(), limit.to_string()]);
    }
}

/// Remove input files a killed daemon left: a child reads its input as it starts,
/// so one written more than a minute ago is read or never will be.
fn forget_old_inputs(inputs_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(inputs_dir) else { return };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|age| age > Duration::from_secs(60)));
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// `args` without its `--input TEXT`, and that text.
fn take_input(args: &[String]) -> (Vec<String>, Option<String>) {
    let mut kept = Vec::with_capacity(args.len());
    let mut input = None;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--input" {
            input = words.next().cloned();
        } else {
            kept.push(word.clone());
        }
    }
    (kept, input)
}

/// The command line a person would type for `args` (the daemon's own
/// `--on-ask json -q` left out), quoted for a POSIX shell.
pub(crate) fn command_line(args: &[String]) -> String {
    let mut words = vec!["baton".to_string()];
    let mut skip = false;
    for (index, arg) in args.iter().enumerate() {
        if skip {
            skip = false;
            continue;
        }
        if arg == "--on-ask" && args.get(index + 1).is_some_and(|mode| mode == "json") {
            skip = true;
            continue;
        }
        if arg == "-q" {
            continue;
        }
        // A value that starts with `-` must be joined to its flag, or it reads as one.
        if arg == "--input"
            && let Some(text) = args.get(index + 1).filter(|text| text.starts_with('-'))
        {
            words.push(format!("--input={}", shell_quote(text)));
            skip = true;
            continue;
        }
        words.push(shell_quote(arg));
    }
    words.join(" ")
}

pub(crate) fn shell_quote(word: &str) -> String {
    let plain =
        !word.is_empty() && word.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&byte));
    if plain { word.to_string() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

/// What the log says after `start`.
fn log_since(path: &Path, start: u64) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let start = usize::try_from(start).unwrap_or(0).min(text.len());
    String::from_utf8_lossy(&text[start..]).into_owned()
}

/// The `error:` lines of a child's output, each with the indented lines that
/// continue it (the lint gate's findings follow its `error:` line that way), or its
/// whole output when it has none.
fn error_lines(said: &str) -> String {
    let mut errors: Vec<&str> = Vec::new();
    let mut continued = false;
    for line in said.lines() {
        continued = line.starts_with("error: ") || (continued && line.starts_with("  "));
        if continued {
            errors.push(line);
        }
    }
    let text = if errors.is_empty() { said.trim().to_string() } else { errors.join("\n") };
    let text = text.strip_prefix("error: ").map(str::to_string).unwrap_or(text);
    if text.is_empty() { "baton exited without a word".to_string() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_leaves_out_the_daemons_own_flags_and_quotes_the_rest() {
        let args: Vec<String> =
            ["resume", "r1", "--ask", "ask_main_1", "--input", "it's fine", "--on-ask", "json", "-q"]
                .into_iter()
                .map(str::to_string)
                .collect();
        assert_eq!(command_line(&args), "baton resume r1 --ask ask_main_1 --input 'it'\\''s fine'");
    }

    #[test]
    fn input_that_starts_with_a_dash_is_joined_to_its_flag_and_taken_out_for_the_child() {
        let args: Vec<String> = ["run", "wf", "--input", "-y", "-q"].into_iter().map(str::to_string).collect();
        assert_eq!(command_line(&args), "baton run wf --input=-y");
        let (kept, input) = take_input(&args);
        assert_eq!(kept, ["run", "wf", "-q"]);
        assert_eq!(input.as_deref(), Some("-y"));
    }

    #[test]
    fn a_refusal_is_the_childs_error_lines() {
        assert_eq!(error_lines("warning: x\nerror: workflow `w` has a lint error\n"), "workflow `w` has a lint error");
        assert_eq!(
            error_lines(
                "error: workflow `w` has a lint error; fix it:\n  w/START.sh:1:1: error[x]: y\n[main] z\n  not this\n"
            ),
            "workflow `w` has a lint error; fix it:\n  w/START.sh:1:1: error[x]: y"
        );
        assert_eq!(error_lines(""), "baton exited without a word");
    }
}
