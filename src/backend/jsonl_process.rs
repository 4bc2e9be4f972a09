//! Running one agent CLI process that prints JSON lines: `claude -p` (R12.3–R12.5,
//! decision A12), `pi --mode json`, `codex exec --json`. Every backend runs its CLI
//! through here, so they all stop, time out and clean up the same way.
//!
//! The child runs in its own process group with the prompt on stdin (closed after
//! writing: an open, silent stdin costs Claude Code 3 s), or with stdin closed when
//! the prompt is an argument. Its stdout is read line by line — each line at most
//! 1 MiB, blank lines skipped, non-JSON lines logged and skipped — and every line
//! resets the idle timer; stderr is kept (its tail) for error messages.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::watch;

use crate::process::group::{
    LEFTOVER_GRACE, Watched, apply_stop_level, end_leftovers, kill_group, terminate_leftovers,
};
use crate::process::pid_window::PidWindow;
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;

/// The longest stdout line accepted (R12.4).
pub(crate) const MAX_LINE_BYTES: usize = 1024 * 1024;
/// How much of stderr is kept for messages.
const STDERR_TAIL_BYTES: usize = 16 * 1024;

pub(crate) struct CliProcess<'a> {
    /// The CLI's name in messages: `Claude Code`, `pi`, `Codex`.
    pub(crate) cli: &'static str,
    pub(crate) program: &'a Path,
    pub(crate) arguments: &'a [String],
    /// Written to stdin, which is then closed; `None`: stdin is closed at once.
    pub(crate) prompt: Option<&'a str>,
    /// Inherited variables the CLI must not see.
    pub(crate) env_remove: &'a [&'a str],
    pub(crate) cwd: &'a Path,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) env: &'a BTreeMap<String, String>,
}

#[derive(Debug)]
pub(crate) struct CliExit {
    pub(crate) exit_code: Option<i32>,
    pub(crate) stderr: String,
    pub(crate) malformed: MalformedLines,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum CliProcessError {
    #[error("could not start `{}`: {source}", .program.display())]
    Spawn { program: PathBuf, source: io::Error },
    #[error("{cli} printed nothing for {} seconds", .after.as_secs_f64())]
    IdleTimeout { cli: &'static str, after: Duration },
    #[error("{cli} printed a line longer than {MAX_LINE_BYTES} bytes")]
    LineTooLong { cli: &'static str },
    #[error("{cli} was stopped before it finished")]
    Cancelled { cli: &'static str },
    #[error("reading {cli}'s output failed: {source}")]
    Read { cli: &'static str, source: io::Error },
}

/// Run the CLI; `on_object` receives every JSON object of its stdout, in order.
pub(crate) async fn run_cli(
    process: CliProcess<'_>,
    mut on_object: impl FnMut(Value),
    mut stop: watch::Receiver<StopLevel>,
    watchdog: Option<&Arc<Watchdog>>,
) -> Result<CliExit, CliProcessError> {
    let mut command = Command::new(process.program);
    // Opened before the spawn, so that the leftover check after the turn reads only
    // the processes created since (`PidWindow`): a turn lasts a second or more, and
    // the read is a few microseconds.
    let window = PidWindow::open();
    for name in process.env_remove {
        command.env_remove(name);
    }
    command
        .args(process.arguments)
        .current_dir(process.cwd)
        .envs(process.env)
        .stdin(if process.prompt.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let spawning = std::time::Instant::now();
    let mut child =
        command.spawn().map_err(|source| CliProcessError::Spawn { program: process.program.to_path_buf(), source })?;
    let spawn_us = spawning.elapsed().as_micros();
    let cli = process.cli;
    let mut watched = Watched::new(watchdog.cloned(), &child);
    let group = child.id().unwrap_or_default();
    // Timestamps for whoever asks where a step's wall time went (`BATON_LOG=debug`;
    // `cargo bench --bench backend_overhead` reads them): the CLI's lifetime is its
    // own, the rest of the step is Baton's. The CLI's life began when the spawn call
    // did, `spawn_us` before this line: the call returns once the child has exec'd,
    // and on a busy machine the new child keeps the core its parent waits for
    // (milliseconds of the CLI's own start-up, not of Baton's work).
    tracing::debug!(cli, pid = group, spawn_us, "agent CLI started");
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        kill_group(&child);
        return Err(CliProcessError::Read { cli, source: io::Error::other("the child's pipes were not captured") });
    };
    if let (Some(prompt), Some(mut stdin)) = (process.prompt, child.stdin.take()) {
        let prompt = prompt.as_bytes().to_vec();
        // Written concurrently: a large prompt must not block reading stdout.
        tokio::spawn(async move {
            let _ = stdin.write_all(&prompt).await;
            let _ = stdin.shutdown().await;
        });
    }
    let mut malformed = MalformedLines::default();

    let mut pending: Vec<u8> = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    let mut stderr_tail: Vec<u8> = Vec::new();
    let mut stderr_buffer = vec![0u8; 8 * 1024];
    let (mut stdout_open, mut stderr_open) = (true, true);
    let far = tokio::time::Instant::now() + Duration::from_secs(60 * 60 * 24 * 365);
    let idle = |now: tokio::time::Instant| process.idle_timeout.map_or(far, |limit| now + limit);
    let mut deadline = idle(tokio::time::Instant::now());
    let mut terminated = false;

    while stdout_open || stderr_open {
        tokio::select! {
            read = stdout.read(&mut buffer), if stdout_open => match read {
                Ok(0) => {
                    stdout_open = false;
                    handle_line(&pending, &mut on_object, &mut malformed);
                    pending.clear();
                }
                Ok(count) => {
                    pending.extend_from_slice(&buffer[..count]);
                    while let Some(end) = pending.iter().position(|byte| *byte == b'\n') {
                        handle_line(&pending[..end], &mut on_object, &mut malformed);
                        pending.drain(..=end);
                        deadline = idle(tokio::time::Instant::now());
                    }
                    if pending.len() > MAX_LINE_BYTES {
                        kill_group(&child);
                        let _ = child.wait().await;
                        return Err(CliProcessError::LineTooLong { cli });
                    }
                }
                Err(error) => {
                    kill_group(&child);
                    let _ = child.wait().await;
                    return Err(CliProcessError::Read { cli, source: error });
                }
            },
            read = stderr.read(&mut stderr_buffer), if stderr_open => match read {
                Ok(0) | Err(_) => stderr_open = false,
                Ok(count) => {
                    stderr_tail.extend_from_slice(&stderr_buffer[..count]);
                    if stderr_tail.len() > STDERR_TAIL_BYTES {
                        stderr_tail.drain(..stderr_tail.len() - STDERR_TAIL_BYTES);
                    }
                }
            },
            () = tokio::time::sleep_until(deadline) => {
                kill_group(&child);
                let _ = child.wait().await;
                return Err(CliProcessError::IdleTimeout { cli, after: process.idle_timeout.unwrap_or_default() });
            },
            changed = stop.changed() => {
                let level = changed.ok().map(|()| *stop.borrow());
                if apply_stop_level(&child, level, &mut terminated) {
                    let _ = child.wait().await;
                    return Err(CliProcessError::Cancelled { cli });
                }
            },
        }
    }
    let status = child.wait().await.map_err(|source| CliProcessError::Read { cli, source })?;
    tracing::debug!(cli, pid = group, code = ?status.code(), "agent CLI exited");
    // Anything the CLI's tools left running in its group ends with the turn.
    terminate_leftovers(group);
    end_leftovers(group, LEFTOVER_GRACE, window).await;
    watched.settle();
    tracing::debug!(cli, pid = group, "agent CLI's process group ended");
    Ok(CliExit { exit_code: status.code(), stderr: String::from_utf8_lossy(&stderr_tail).into_owned(), malformed })
}

/// Stdout lines that were not JSON objects: skipped, but counted, and the first
/// one kept, so a turn that fails for want of a result can say what came instead.
#[derive(Debug, Default)]
pub(crate) struct MalformedLines {
    pub(crate) count: usize,
    pub(crate) first: Option<String>,
}

impl MalformedLines {
    /// ` (N lines of its output were not JSON objects; the first: "…")`, or nothing.
    pub(crate) fn note(&self) -> String {
        match &self.first {
            Some(first) if self.count > 0 => format!(
                " ({} of its output {} not JSON objects; the first: \"{}\")",
                crate::text::count::count(self.count, "line", "lines"),
                if self.count == 1 { "was" } else { "were" },
                crate::text::excerpt::Excerpt { text: first, max_chars: 120 }
            ),
            _ => String::new(),
        }
    }
}

fn handle_line(line: &[u8], on_object: &mut impl FnMut(Value), malformed: &mut MalformedLines) {
    let text = String::from_utf8_lossy(line);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) if value.is_object() => on_object(value),
        _ => {
            tracing::debug!(line = %trimmed, "ignoring a stdout line that is not a JSON object");
            malformed.count += 1;
            if malformed.first.is_none() {
                malformed.first = Some(trimmed.chars().take(200).collect());
            }
        }
    }
}
