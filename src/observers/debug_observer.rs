//! The trace of a run (decision A16, R7.11), written under `.baton/runs/<run_id>/`:
//!
//! - `events.jsonl`: every bus event as `{"v":1,"seq":N,"ts":"…","type":…}`, one
//!   line each, flushed per event so a crash loses nothing already emitted. `seq`
//!   continues across resumes.
//! - `<agent>_<state>_<NNN>.stdout.txt`, `.stderr.txt`, `.meta.json` for each script
//!   step, and `<agent>_<state>_<NNN>.jsonl` for each Claude step's raw stream.
//! - `transitions.log`: one human-readable line per transition.
//!
//! File errors are returned to the bus, which logs them; a full disk degrades the
//! trace, never the run.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::event_bus::{EventBus, HandlerError};
use crate::events::Event;
use crate::state_name::display_stem;

/// The version of the `events.jsonl` line format.
pub const TRACE_VERSION: u32 = 1;

struct Files {
    events: File,
    next_seq: u64,
    transitions: File,
    /// Open Claude stream files, by agent id.
    streams: HashMap<String, File>,
}

pub struct DebugObserver {
    run_dir: PathBuf,
    files: Mutex<Files>,
}

fn append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// The `seq` of the last complete line of an existing `events.jsonl`, so a resumed
/// run continues the numbering. Reads only the file's tail.
fn last_seq(path: &Path) -> u64 {
    let Ok(mut file) = File::open(path) else { return 0 };
    let Ok(length) = file.seek(SeekFrom::End(0)) else {
        return 0;
    };
    let start = length.saturating_sub(64 * 1024);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return 0;
    }
    let mut tail = Vec::new();
    if file.read_to_end(&mut tail).is_err() {
        return 0;
    }
    BufReader::new(tail.as_slice())
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .filter_map(|value| value.get("seq").and_then(serde_json::Value::as_u64))
        .last()
        .unwrap_or(0)
}

impl DebugObserver {
    /// Open (or continue) the trace in `run_dir`.
    pub fn open(run_dir: &Path) -> io::Result<DebugObserver> {
        std::fs::create_dir_all(run_dir)?;
        let events_path = run_dir.join("events.jsonl");
        let next_seq = last_seq(&events_path) + 1;
        let files = Files {
            events: append(&events_path)?,
            next_seq,
            transitions: append(&run_dir.join("transitions.log"))?,
            streams: HashMap::new(),
        };
        Ok(DebugObserver {
            run_dir: run_dir.to_path_buf(),
            files: Mutex::new(files),
        })
    }

    /// Subscribe to every event on `bus`.
    pub fn attach(self: Arc<Self>, bus: &EventBus) {
        bus.on_all(Arc::new(move |event: &Event| self.record(event)));
    }

    fn step_file(&self, agent_id: &str, state: &str, step: u64, suffix: &str) -> PathBuf {
        self.run_dir
            .join(format!("{agent_id}_{}_{step:03}.{suffix}", display_stem(state)))
    }

    pub fn record(&self, event: &Event) -> Result<(), HandlerError> {
        let mut files = self.files.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let body = serde_json::to_string(event)?;
        let seq = files.next_seq;
        files.next_seq += 1;
        let timestamp = jiff::Timestamp::now();
        // `body` is a JSON object; splice the envelope fields in front of its own.
        let line = format!(
            "{{\"v\":{TRACE_VERSION},\"seq\":{seq},\"ts\":\"{timestamp}\",{}\n",
            &body[1..]
        );
        files.events.write_all(line.as_bytes())?;
        files.events.flush()?;

        match event {
            Event::ScriptOutput {
                agent_id,
                state,
                step,
                stdout,
                stderr,
                exit_code,
                execution_time_ms,
                env_vars,
            } => {
                std::fs::write(self.step_file(agent_id, state, *step, "stdout.txt"), stdout)?;
                std::fs::write(self.step_file(agent_id, state, *step, "stderr.txt"), stderr)?;
                let meta = serde_json::json!({
                    "exit_code": exit_code,
                    "execution_time_ms": execution_time_ms,
                    "env_vars": env_vars,
                });
                std::fs::write(
                    self.step_file(agent_id, state, *step, "meta.json"),
                    serde_json::to_vec_pretty(&meta)?,
                )?;
            }
            Event::ClaudeStreamOutput {
                agent_id,
                state,
                step,
                json,
            } => {
                if !files.streams.contains_key(agent_id) {
                    let file = append(&self.step_file(agent_id, state, *step, "jsonl"))?;
                    files.streams.insert(agent_id.clone(), file);
                }
                if let Some(file) = files.streams.get_mut(agent_id) {
                    writeln!(file, "{json}")?;
                    file.flush()?;
                }
            }
            Event::StateStarted { agent_id, .. } | Event::StateCompleted { agent_id, .. } => {
                files.streams.remove(agent_id);
            }
            Event::TransitionOccurred {
                agent_id,
                from_state,
                to_state,
                transition_type,
                metadata,
            } => {
                let to = to_state.as_deref().unwrap_or("(terminated)");
                let mut line = format!("{timestamp} {agent_id} {from_state} -> {to} [{transition_type}]");
                for (key, value) in metadata {
                    line.push_str(&format!(" {key}={value:?}"));
                }
                line.push('\n');
                files.transitions.write_all(line.as_bytes())?;
                files.transitions.flush()?;
            }
            _ => {}
        }
        Ok(())
    }
}
