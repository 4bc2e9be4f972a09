//! Running one script as a child process (R7.1–R7.5, R7.13).
//!
//! The child gets its own process group so that a timeout or a shutdown can kill
//! everything it started, not just the shell. Output is read live, chunk by chunk,
//! so `<print>` tags appear while the script runs and every chunk resets the
//! inactivity timer. After the shell exits we keep reading for a short grace
//! period only: a background grandchild that inherited the pipes must not hold the
//! step open forever (Go's `WaitDelay`, which raymond uses, behaves the same).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;
use tokio::sync::watch;

use crate::process::group::{LEFTOVER_GRACE, apply_stop_level, end_leftovers, kill_group, terminate_leftovers};
use crate::process::spawn::spawn;
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;

/// One read from a script's pipe. Every live script holds two such buffers, so
/// they are small: a live script costs Baton about 10 KB in all, and a script's
/// output rarely arrives in larger pieces than this anyway.
const READ_BUFFER_BYTES: usize = 1024;

/// How long pipes are drained after the script itself has exited.
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(3);

pub(crate) struct ScriptCommand {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) cwd: PathBuf,
    /// Variables set on top of the inherited environment (which loses `CLAUDECODE`).
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) inactivity_timeout: Option<Duration>,
    /// Leave what the script started in the background running after it exits
    /// (`# baton: keep-background`); otherwise it is ended with the step.
    pub(crate) keep_background: bool,
}

/// Which pipe a chunk of output came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pipe {
    Stdout,
    Stderr,
}

#[derive(Debug)]
pub(crate) struct ScriptRun {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    /// The exit code, or `None` when a signal ended the script.
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ScriptProcessError {
    #[error("could not start `{program}`: {source}")]
    Spawn { program: String, source: io::Error },
    #[error("produced no output for {} seconds", .after.as_secs_f64())]
    TimedOut { after: Duration, stdout: String, stderr: String },
    #[error("was stopped before it finished")]
    Cancelled,
    #[error("could not be waited for: {0}")]
    Wait(io::Error),
}

/// Decodes a byte stream as UTF-8 across chunk boundaries; invalid bytes become U+FFFD.
#[derive(Default)]
struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    fn decode(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let complete = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let text = String::from_utf8_lossy(&self.pending[..complete]).into_owned();
        self.pending.drain(..complete);
        text
    }

    fn finish(&mut self) -> String {
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        text
    }
}

/// Run `command`; `on_chunk` sees every decoded chunk of stdout and stderr as it arrives.
pub(crate) async fn run_script(
    command: ScriptCommand,
    mut on_chunk: impl FnMut(Pipe, &str),
    mut stop: watch::Receiver<StopLevel>,
    watchdog: Option<&Arc<Watchdog>>,
) -> Result<ScriptRun, ScriptProcessError> {
    let mut builder = Command::new(&command.program);
    builder
        .args(&command.args)
        .current_dir(&command.cwd)
        .env_remove("CLAUDECODE")
        .envs(&command.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let (mut child, mut watched, _live) = spawn(builder, watchdog).await.map_err(|source| {
        ScriptProcessError::Spawn { program: command.program.to_string_lossy().into_owned(), source }
    })?;
    let group = child.id().unwrap_or_default();
    let (Some(mut stdout_pipe), Some(mut stderr_pipe)) = (child.stdout.take(), child.stderr.take()) else {
        kill_group(&child);
        return Err(ScriptProcessError::Wait(io::Error::other("the child's pipes were not captured")));
    };

    let (mut stdout, mut stderr) = (String::new(), String::new());
    let (mut stdout_decoder, mut stderr_decoder) = (Utf8Decoder::default(), Utf8Decoder::default());
    let (mut stdout_buffer, mut stderr_buffer) = (vec![0u8; READ_BUFFER_BYTES], vec![0u8; READ_BUFFER_BYTES]);
    let (mut stdout_open, mut stderr_open) = (true, true);
    let far_future = tokio::time::Instant::now() + Duration::from_secs(60 * 60 * 24 * 365);
    let idle_deadline = |now: tokio::time::Instant| command.inactivity_timeout.map_or(far_future, |limit| now + limit);
    let mut deadline = idle_deadline(tokio::time::Instant::now());
    let mut exit_status = None;
    let mut drain_deadline = far_future;
    let mut terminated = false;
    if *stop.borrow() == StopLevel::Kill {
        kill_group(&child);
    }

    while stdout_open || stderr_open || exit_status.is_none() {
        tokio::select! {
            read = stdout_pipe.read(&mut stdout_buffer), if stdout_open => match read {
                Ok(0) | Err(_) => stdout_open = false,
                Ok(count) => {
                    let text = stdout_decoder.decode(&stdout_buffer[..count]);
                    on_chunk(Pipe::Stdout, &text);
                    stdout.push_str(&text);
                    deadline = idle_deadline(tokio::time::Instant::now());
                }
            },
            read = stderr_pipe.read(&mut stderr_buffer), if stderr_open => match read {
                Ok(0) | Err(_) => stderr_open = false,
                Ok(count) => {
                    let text = stderr_decoder.decode(&stderr_buffer[..count]);
                    on_chunk(Pipe::Stderr, &text);
                    stderr.push_str(&text);
                    deadline = idle_deadline(tokio::time::Instant::now());
                }
            },
            status = child.wait(), if exit_status.is_none() => {
                exit_status = Some(status.map_err(ScriptProcessError::Wait)?);
                // What the script left running in its group ends with it; its pipes
                // close as those processes die, which ends the drain early.
                if !command.keep_background {
                    terminate_leftovers(group);
                }
                drain_deadline = tokio::time::Instant::now() + DRAIN_AFTER_EXIT;
            },
            () = tokio::time::sleep_until(deadline), if exit_status.is_none() => {
                kill_group(&child);
                let _ = child.wait().await;
                return Err(ScriptProcessError::TimedOut {
                    after: command.inactivity_timeout.unwrap_or_default(),
                    stdout,
                    stderr,
                });
            },
            () = tokio::time::sleep_until(drain_deadline), if exit_status.is_some() => break,
            changed = stop.changed() => {
                let level = changed.ok().map(|()| *stop.borrow());
                if apply_stop_level(&child, level, &mut terminated) {
                    let _ = child.wait().await;
                    return Err(ScriptProcessError::Cancelled);
                }
            },
        }
    }
    if !command.keep_background {
        end_leftovers(group, LEFTOVER_GRACE, None).await;
    }
    for (decoder, stream, sink) in
        [(&mut stdout_decoder, Pipe::Stdout, &mut stdout), (&mut stderr_decoder, Pipe::Stderr, &mut stderr)]
    {
        let rest = decoder.finish();
        if !rest.is_empty() {
            on_chunk(stream, &rest);
            sink.push_str(&rest);
        }
    }
    let status = exit_status.ok_or_else(|| ScriptProcessError::Wait(io::Error::other("no exit status")))?;
    watched.settle();
    Ok(ScriptRun { stdout, stderr, exit_code: status.code(), signal: status.signal() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_decoder_keeps_split_characters_for_the_next_chunk() {
        let mut decoder = Utf8Decoder::default();
        let bytes = "é".as_bytes();
        assert_eq!(decoder.decode(&bytes[..1]), "");
        assert_eq!(decoder.decode(&bytes[1..]), "é");
        assert_eq!(decoder.decode(b"\xffa"), "\u{fffd}a");
        assert_eq!(decoder.decode(&bytes[..1]), "");
        assert_eq!(decoder.finish(), "\u{fffd}");
    }
}
