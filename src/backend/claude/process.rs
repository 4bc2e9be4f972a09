//! Running one `claude -p` process (R12.3–R12.5, decision A12).
//!
//! The child runs in its own process group with the prompt on stdin (closed after
//! writing: an open, silent stdin costs Claude Code 3 s). Its stdout is read line by
//! line — each line at most 1 MiB, blank lines skipped, non-JSON lines logged and
//! skipped — and every line resets the idle timer; stderr is kept (its tail) for
//! error messages, though Claude Code rarely writes there.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::watch;

use crate::process::group::{
    LEFTOVER_GRACE, Watched, apply_stop_level, end_leftovers, kill_group, terminate_leftovers,
};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;

/// The longest stdout line accepted (R12.4).
pub(crate) const MAX_LINE_BYTES: usize = 1024 * 1024;
/// How much of stderr is kept for messages.
const STDERR_TAIL_BYTES: usize = 16 * 1024;

pub(crate) struct ClaudeProcess<'a> {
    pub(crate) program: &'a Path,
    pub(crate) arguments: &'a [String],
    pub(crate) prompt: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) env: &'a BTreeMap<String, String>,
}

#[derive(Debug)]
pub(crate) struct ClaudeExit {
    pub(crate) exit_code: Option<i32>,
    pub(crate) stderr: String,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ClaudeProcessError {
    #[error("could not start `{program}`: {source}")]
    Spawn { program: PathBuf, source: io::Error },
    #[error("Claude Code printed nothing for {} seconds", .after.as_secs_f64())]
    IdleTimeout { after: Duration },
    #[error("Claude Code printed a line longer than {MAX_LINE_BYTES} bytes")]
    LineTooLong,
    #[error("Claude Code was stopped before it finished")]
    Cancelled,
    #[error("reading Claude Code's output failed: {0}")]
    Read(io::Error),
}

/// Run Claude; `on_object` receives every JSON object of its stdout, in order.
pub(crate) async fn run_claude(
    process: ClaudeProcess<'_>,
    mut on_object: impl FnMut(Value),
    mut stop: watch::Receiver<StopLevel>,
    watchdog: Option<&Watchdog>,
) -> Result<ClaudeExit, ClaudeProcessError> {
    let mut child = Command::new(process.program)
        .args(process.arguments)
        .current_dir(process.cwd)
        .envs(process.env)
        .env_remove("CLAUDECODE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| ClaudeProcessError::Spawn { program: process.program.to_path_buf(), source })?;
    let _watched = Watched::new(watchdog, &child);
    let group = child.id().unwrap_or_default();
    let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        kill_group(&child);
        return Err(ClaudeProcessError::Read(io::Error::other("the child's pipes were not captured")));
    };
    let prompt = process.prompt.as_bytes().to_vec();
    // Written concurrently: a large prompt must not block reading stdout.
    tokio::spawn(async move {
        let _ = stdin.write_all(&prompt).await;
        let _ = stdin.shutdown().await;
    });

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
                    handle_line(&pending, &mut on_object);
                    pending.clear();
                }
                Ok(count) => {
                    pending.extend_from_slice(&buffer[..count]);
                    while let Some(end) = pending.iter().position(|byte| *byte == b'\n') {
                        handle_line(&pending[..end], &mut on_object);
                        pending.drain(..=end);
                        deadline = idle(tokio::time::Instant::now());
                    }
                    if pending.len() > MAX_LINE_BYTES {
                        kill_group(&child);
                        let _ = child.wait().await;
                        return Err(ClaudeProcessError::LineTooLong);
                    }
                }
                Err(error) => {
                    kill_group(&child);
                    let _ = child.wait().await;
                    return Err(ClaudeProcessError::Read(error));
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
                return Err(ClaudeProcessError::IdleTimeout { after: process.idle_timeout.unwrap_or_default() });
            },
            changed = stop.changed() => {
                let level = changed.ok().map(|()| *stop.borrow());
                if apply_stop_level(&child, level, &mut terminated) {
                    let _ = child.wait().await;
                    return Err(ClaudeProcessError::Cancelled);
                }
            },
        }
    }
    let status = child.wait().await.map_err(ClaudeProcessError::Read)?;
    // Anything Claude Code's tools left running in its group ends with the turn.
    terminate_leftovers(group);
    end_leftovers(group, LEFTOVER_GRACE).await;
    Ok(ClaudeExit { exit_code: status.code(), stderr: String::from_utf8_lossy(&stderr_tail).into_owned() })
}

fn handle_line(line: &[u8], on_object: &mut impl FnMut(Value)) {
    let text = String::from_utf8_lossy(line);
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(value) if value.is_object() => on_object(value),
        _ => tracing::debug!(line = %trimmed, "ignoring a stdout line of Claude Code that is not a JSON object"),
    }
}
