//! The trace of a run (decision A16, R7.11), written under `.baton/runs/<run_id>/`:
//!
//! - `events.jsonl`: every bus event as `{"v":1,"seq":N,"ts":"…","type":…}`, one
//!   line each, flushed per event so a crash loses nothing already emitted. `seq`
//!   continues across resumes.
//! - `<agent>_<state>_<NNN>.stdout.txt`, `.stderr.txt`, `.meta.json` for each script
//!   step, and `<agent>_<state>_<NNN>.jsonl` for each Claude step's raw stream.
//! - `transitions.log`: one human-readable line per transition.
//!
//! A trace that cannot be written (a full disk) degrades the trace, never the
//! run: the first failure is reported once, and the trace stops for the rest of
//! this invocation; a resume re-publishes the committed steps it lacks.
//!
//! `events.jsonl` and `transitions.log` are appended synchronously: they are what a
//! crash must not lose. A new run's two files are created by the writer thread
//! below, beside the run's start instead of before it: on a busy ext4 disk each
//! file created can cost a millisecond (`docs/benchmarks.md`, issue 22's fourth
//! round). Lines written before they exist (the run's start, the first step's) wait
//! in memory and go first; a run killed in that instant has no trace yet, and its
//! resume writes one. The per-step files repeat what `ScriptOutput` events already
//! hold, and creating three files per step costs more than the rest of the step's
//! bookkeeping together, so a background thread writes them; `close` waits for it.
//! One that repeats an earlier one is a hard link to it (`step_file_writer`).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::events::Event;
use crate::events::bus::{EventBus, HandlerError};
use crate::ids::AgentId;
use crate::observers::step_file_queue::StepFileQueue;
use crate::observers::step_file_writer::StepFileWriter;
use crate::text::state_name::display_stem;

/// The trace of events in a run directory (`docs/trace-format.md`).
pub(crate) const TRACE_FILE: &str = "events.jsonl";

/// One human-readable line per transition.
const TRANSITIONS_FILE: &str = "transitions.log";

/// The most bytes of a state's name in a per-step file's name.
const MAX_STEM_BYTES: usize = 100;

/// The version of the `events.jsonl` line format.
pub(crate) const TRACE_VERSION: u32 = 1;

struct Files {
    events: TraceFile,
    next_seq: u64,
    /// The highest journal commit whose transition the trace holds.
    last_commit: u64,
    transitions: TraceFile,
    /// Open Claude stream files, by agent id.
    streams: HashMap<AgentId, File>,
}

/// `events.jsonl` or `transitions.log`: open, or being created and holding the
/// lines to write first.
enum TraceFile {
    Open(File),
    Creating(Vec<u8>),
}

impl TraceFile {
    fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        match self {
            TraceFile::Open(file) => {
                file.write_all(line)?;
                file.flush()
            }
            TraceFile::Creating(lines) => {
                lines.extend_from_slice(line);
                Ok(())
            }
        }
    }

    /// The file now exists: write what waited for it, then write to it directly.
    fn created(&mut self, mut file: File) -> io::Result<()> {
        if let TraceFile::Creating(lines) = self {
            file.write_all(lines)?;
        }
        *self = TraceFile::Open(file);
        Ok(())
    }
}

fn lock_files(files: &Mutex<Files>) -> std::sync::MutexGuard<'_, Files> {
    files.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// On the writer's thread: create a new trace's two files (without holding the lock:
/// the run goes on writing lines meanwhile), then hand them over.
fn create_trace(files: &Mutex<Files>, run_dir: &Path) -> io::Result<()> {
    let events = append(&run_dir.join(TRACE_FILE))?;
    let transitions = append(&run_dir.join(TRANSITIONS_FILE))?;
    let mut files = lock_files(files);
    files.events.created(events)?;
    files.transitions.created(transitions)
}

/// A per-step file to write: its path and contents.
type StepFile = (PathBuf, Vec<u8>);

/// The files of one step, handed to the writer thread together (a script step has
/// three); the queue wakes that thread only when it sleeps with nothing to do
/// (`step_file_queue`).
type StepFiles = Vec<StepFile>;

pub(crate) struct DebugObserver {
    run_dir: PathBuf,
    /// Set by the first write that failed: nothing more is written, nothing more said.
    broken: Arc<AtomicBool>,
    /// Shared with the writer thread, which creates a new trace's files.
    files: Arc<Mutex<Files>>,
    step_files: Arc<StepFileQueue<StepFiles>>,
    writer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

fn append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// The one message a broken trace gets (`broken` makes it the only one).
fn report_broken(broken: &AtomicBool, run_dir: &Path, path: &Path, error: &dyn std::fmt::Display) {
    if !broken.swap(true, Ordering::Relaxed) {
        eprintln!(
            "warning: the trace in {} stopped: cannot write {}: {error}; the run goes on without it, and `baton \
             resume` restores the transitions it misses",
            run_dir.display(),
            path.display()
        );
    }
}

/// Where an existing `events.jsonl` left off: the `seq` of its last line and the
/// highest `commit` of its transitions. Reads backwards in blocks and stops as soon
/// as both are known, so it costs little even for a long trace.
fn trace_position(path: &Path) -> (u64, u64) {
    const BLOCK: u64 = 64 * 1024;
    let Ok(mut file) = File::open(path) else { return (0, 0) };
    let Ok(length) = file.seek(SeekFrom::End(0)) else {
        return (0, 0);
    };
    let (mut last_seq, mut last_commit) = (None, None);
    let mut end = length;
    let mut carry: Vec<u8> = Vec::new();
    while end > 0 && (last_seq.is_none() || last_commit.is_none()) {
        let start = end.saturating_sub(BLOCK);
        let mut block = vec![0u8; (end - start) as usize];
        if file.seek(SeekFrom::Start(start)).is_err() || file.read_exact(&mut block).is_err() {
            break;
        }
        block.extend_from_slice(&carry);
        // The first (partial) line of the block is completed by the next block read.
        let first_newline =
            if start == 0 { 0 } else { block.iter().position(|b| *b == b'\n').map_or(block.len(), |i| i + 1) };
        carry = block[..first_newline].to_vec();
        for line in block[first_newline..].split(|b| *b == b'\n').rev() {
            let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
                continue;
            };
            if last_seq.is_none() {
                last_seq = value.get("seq").and_then(serde_json::Value::as_u64);
            }
            if last_commit.is_none() && value.get("type").and_then(|t| t.as_str()) == Some("TransitionOccurred") {
                last_commit = value.get("commit").and_then(serde_json::Value::as_u64);
            }
            if last_seq.is_some() && last_commit.is_some() {
                break;
            }
        }
        end = start;
    }
    (last_seq.unwrap_or(0), last_commit.unwrap_or(0))
}

/// Open `path` for appending after cutting off a torn last line: a run killed in
/// the middle of a write leaves a line without its newline, and the next line
/// appended to it would make one unreadable line of two.
fn append_after_complete_lines(path: &Path) -> io::Result<File> {
    const BLOCK: u64 = 64 * 1024;
    let mut file = OpenOptions::new().create(true).read(true).append(true).open(path)?;
    let length = file.seek(SeekFrom::End(0))?;
    let mut end = length;
    let mut keep = 0;
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let mut block = vec![0u8; (end - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut block)?;
        if let Some(newline) = block.iter().rposition(|b| *b == b'\n') {
            keep = start + newline as u64 + 1;
            break;
        }
        end = start;
    }
    if keep < length {
        file.set_len(keep)?;
    }
    Ok(file)
}

/// Write `json` and a newline with one `write`. Formatting a `Value` straight into
/// an unbuffered file issued a `write` per token: 1,500 system calls for one Claude
/// turn's stream, most of Baton's CPU per prompt step (issue 22, item 5).
fn write_json_line(file: &mut impl Write, json: &serde_json::Value) -> io::Result<()> {
    let mut line = serde_json::to_vec(json)?;
    line.push(b'\n');
    file.write_all(&line)
}

impl DebugObserver {
    /// Continue the trace in `run_dir`, or start a new one there.
    pub(crate) fn open(run_dir: &Path) -> io::Result<DebugObserver> {
        std::fs::create_dir_all(run_dir)?;
        let events_path = run_dir.join(TRACE_FILE);
        let new = !events_path.exists();
        let (events, transitions, last_seq, last_commit) = if new {
            (TraceFile::Creating(Vec::new()), TraceFile::Creating(Vec::new()), 0, 0)
        } else {
            let events = append_after_complete_lines(&events_path)?;
            let transitions = append_after_complete_lines(&run_dir.join(TRANSITIONS_FILE))?;
            let (last_seq, last_commit) = trace_position(&events_path);
            (TraceFile::Open(events), TraceFile::Open(transitions), last_seq, last_commit)
        };
        let files = Files { events, next_seq: last_seq + 1, last_commit, transitions, streams: HashMap::new() };
        let files = Arc::new(Mutex::new(files));
        let queue = Arc::new(StepFileQueue::<StepFiles>::new());
        let writer_queue = Arc::clone(&queue);
        let broken = Arc::new(AtomicBool::new(false));
        let writer_broken = Arc::clone(&broken);
        let writer_dir = run_dir.to_path_buf();
        let writer_files = Arc::clone(&files);
        let writer = std::thread::Builder::new().name("baton-trace".into()).spawn(move || {
            if new && let Err(error) = create_trace(&writer_files, &writer_dir) {
                report_broken(&writer_broken, &writer_dir, &writer_dir.join(TRACE_FILE), &error);
            }
            drop(writer_files);
            let _closed = writer_queue.closed_on_drop();
            let mut step_files = StepFileWriter::new();
            while let Some(batch) = writer_queue.take() {
                for (path, contents) in batch.into_iter().flatten() {
                    if writer_broken.load(Ordering::Relaxed) {
                        continue;
                    }
                    if let Err(error) = step_files.write(&path, &contents) {
                        report_broken(&writer_broken, &writer_dir, &path, &error);
                    }
                }
                writer_queue.gather();
            }
        })?;
        Ok(DebugObserver {
            run_dir: run_dir.to_path_buf(),
            broken,
            files,
            step_files: queue,
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Finish writing queued per-step files. Later events still reach `events.jsonl`;
    /// their step files are written synchronously.
    pub(crate) fn close(&self) {
        self.step_files.close();
        if let Some(writer) = self.writer.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() {
            let _ = writer.join();
        }
    }

    /// Queue one step's files for the writer thread (or write them now once closed).
    fn write_step_files(&self, files: StepFiles) -> io::Result<()> {
        let Err(files) = self.step_files.push(files) else {
            return Ok(());
        };
        let mut writer = StepFileWriter::new();
        files.iter().try_for_each(|(path, contents)| writer.write(path, contents))
    }

    /// Subscribe to every event on `bus`.
    pub(crate) fn attach(self: Arc<Self>, bus: &EventBus) {
        bus.on_all(Arc::new(move |event: &Event| self.record(event)));
    }

    /// The state's part is cut to [`MAX_STEM_BYTES`]: a YAML state name has no
    /// length limit, and a file name over 255 bytes stopped the whole trace. The
    /// agent and step keep each name unique.
    fn step_file(&self, agent_id: &str, state: &str, step: u64, suffix: &str) -> PathBuf {
        let stem = display_stem(state);
        let stem = &stem[..crate::text::char_floor(stem, MAX_STEM_BYTES)];
        self.run_dir.join(format!("{agent_id}_{stem}_{step:03}.{suffix}"))
    }

    /// Write `event`; after a failure, report it once and write no more.
    pub(crate) fn record(&self, event: &Event) -> Result<(), HandlerError> {
        if self.broken.load(Ordering::Relaxed) {
            return Ok(());
        }
        if let Err(error) = self.write_event(event) {
            report_broken(&self.broken, &self.run_dir, &self.run_dir.join(TRACE_FILE), &error);
        }
        Ok(())
    }

    fn write_event(&self, event: &Event) -> Result<(), HandlerError> {
        let mut files = lock_files(&self.files);
        if let Event::TransitionOccurred { commit, recovered, .. } = event {
            // A recovered step that the trace already holds is not written twice.
            if *recovered && *commit <= files.last_commit {
                return Ok(());
            }
            files.last_commit = files.last_commit.max(*commit);
        }
        let body = serde_json::to_string(event)?;
        let seq = files.next_seq;
        files.next_seq += 1;
        let timestamp = jiff::Timestamp::now();
        // `body` is a JSON object; splice the envelope fields in front of its own.
        let line = format!("{{\"v\":{TRACE_VERSION},\"seq\":{seq},\"ts\":\"{timestamp}\",{}\n", &body[1..]);
        files.events.write_line(line.as_bytes())?;

        match event {
            Event::ScriptOutput { agent_id, state, step, stdout, stderr, exit_code, execution_time_ms, env_vars } => {
                let meta = serde_json::json!({
                    "exit_code": exit_code,
                    "execution_time_ms": execution_time_ms,
                    "env_vars": env_vars,
                });
                drop(files);
                self.write_step_files(vec![
                    (self.step_file(agent_id, state, *step, "stdout.txt"), stdout.clone().into_bytes()),
                    (self.step_file(agent_id, state, *step, "stderr.txt"), stderr.clone().into_bytes()),
                    (self.step_file(agent_id, state, *step, "meta.json"), serde_json::to_vec_pretty(&meta)?),
                ])?;
            }
            Event::PromptRendered { agent_id, state, step, reminder, prompt } => {
                let suffix = if *reminder == 0 { "prompt.md".to_string() } else { format!("reminder{reminder}.md") };
                drop(files);
                self.write_step_files(vec![(
                    self.step_file(agent_id, state, *step, &suffix),
                    prompt.clone().into_bytes(),
                )])?;
            }
            Event::ClaudeStreamOutput { agent_id, state, step, json } => {
                if !files.streams.contains_key(agent_id) {
                    let file = append(&self.step_file(agent_id, state, *step, "jsonl"))?;
                    files.streams.insert(agent_id.clone(), file);
                }
                if let Some(file) = files.streams.get_mut(agent_id) {
                    write_json_line(file, json)?;
                }
            }
            Event::StateStarted { agent_id, .. } | Event::StateCompleted { agent_id, .. } => {
                files.streams.remove(agent_id);
            }
            Event::TransitionOccurred { agent_id, from_state, to_state, transition_type, metadata, .. } => {
                let to = to_state.as_deref().unwrap_or("(terminated)");
                let mut line = format!("{timestamp} {agent_id} {from_state} -> {to} [{transition_type}]");
                for (key, value) in metadata {
                    line.push_str(&format!(" {key}={value:?}"));
                }
                line.push('\n');
                files.transitions.write_line(line.as_bytes())?;
            }
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a run SIGKILLed while writing a long `ScriptOutput` line left it
    /// torn, and the resumed run's first line was glued to it.
    /// Counts the `write` calls it receives.
    #[derive(Default)]
    struct Writes {
        calls: usize,
        bytes: Vec<u8>,
    }

    impl Write for Writes {
        fn write(&mut self, buffer: &[u8]) -> io::Result<usize> {
            self.calls += 1;
            self.bytes.extend_from_slice(buffer);
            Ok(buffer.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn regression_a_claude_stream_line_took_a_write_per_json_token_now_one() {
        let json = serde_json::json!({"type": "system", "tools": ["Bash", "Read", "Edit"], "nested": {"a": [1, 2, {"b": null}]}});
        let mut writes = Writes::default();
        write_json_line(&mut writes, &json).expect("writes");
        assert_eq!(writes.calls, 1);
        assert_eq!(writes.bytes, format!("{json}\n").into_bytes());
    }

    #[test]
    fn a_torn_last_line_is_cut_before_the_trace_continues() {
        let dir = tempfile::tempdir().expect("temp dir");
        let intact = "{\"v\":1,\"seq\":1,\"type\":\"WorkflowStarted\"}\n";
        let torn = format!("{{\"v\":1,\"seq\":2,\"type\":\"ScriptOutput\",\"stdout\":\"{}", "x".repeat(100_000));
        std::fs::write(dir.path().join(TRACE_FILE), format!("{intact}{torn}")).expect("write");
        std::fs::write(dir.path().join("transitions.log"), "complete\ntor").expect("write");
        let observer = DebugObserver::open(dir.path()).expect("open");
        observer.record(&Event::WorkflowInterrupted { run_id: "r".into(), signal: "SIGINT".into() }).expect("record");
        observer.close();
        let text = std::fs::read_to_string(dir.path().join(TRACE_FILE)).expect("read");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text:.200}");
        assert_eq!(lines[0], intact.trim_end());
        let second: serde_json::Value = serde_json::from_str(lines[1]).expect("the new line is JSON on its own");
        assert_eq!(second["seq"], 2, "seq goes on after the last intact line");
        let transitions = std::fs::read_to_string(dir.path().join("transitions.log")).expect("read");
        assert_eq!(transitions, "complete\n");
    }

    fn started(run_id: &str) -> Event {
        Event::WorkflowStarted {
            run_id: run_id.into(),
            scope_dir: PathBuf::from("/flow"),
            run_dir: PathBuf::from("/runs/r"),
            initial_state: "START.md".into(),
            resumed: false,
            rerun_of: None,
        }
    }

    #[test]
    fn a_new_trace_made_by_the_writer_thread_keeps_every_line_in_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let observer = DebugObserver::open(dir.path()).expect("open");
        observer.record(&started("r")).expect("record");
        for _ in 0..50 {
            observer
                .record(&Event::WorkflowInterrupted { run_id: "r".into(), signal: "SIGINT".into() })
                .expect("record");
        }
        observer.close();
        let text = std::fs::read_to_string(dir.path().join(TRACE_FILE)).expect("the trace exists after close");
        let seqs: Vec<u64> = text
            .lines()
            .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON")["seq"].as_u64().expect("seq"))
            .collect();
        assert_eq!(seqs, (1..=51).collect::<Vec<u64>>());
        assert!(text.lines().next().is_some_and(|line| line.contains("\"WorkflowStarted\"")));
        assert!(dir.path().join(TRANSITIONS_FILE).is_file());
    }

    #[test]
    fn a_new_trace_that_cannot_be_created_breaks_the_trace_and_holds_nothing_more() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join(TRANSITIONS_FILE)).expect("a directory in the file's way");
        let observer = DebugObserver::open(dir.path()).expect("open");
        observer.record(&started("r")).expect("record");
        observer.close();
        assert!(observer.broken.load(Ordering::Relaxed));
        observer.record(&Event::WorkflowInterrupted { run_id: "r".into(), signal: "SIGINT".into() }).expect("record");
        let files = lock_files(&observer.files);
        let TraceFile::Creating(waiting) = &files.events else { panic!("the trace was never handed over") };
        assert_eq!(waiting.iter().filter(|byte| **byte == b'\n').count(), 1, "nothing more waits in memory");
    }

    #[test]
    fn a_trace_without_a_newline_at_all_starts_over() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join(TRACE_FILE), "{\"v\":1,\"se").expect("write");
        let file = append_after_complete_lines(&dir.path().join(TRACE_FILE)).expect("open");
        drop(file);
        assert_eq!(std::fs::read_to_string(dir.path().join(TRACE_FILE)).expect("read"), "");
    }
}
