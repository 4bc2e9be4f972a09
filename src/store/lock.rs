//! One owner per run: `baton run`/`resume` hold an exclusive `flock` on
//! `<run_dir>/lock` for as long as they drive the run, with their pid written in
//! it. A second `resume` of a live run fails at once and names the owner. The
//! kernel drops the lock when the owner dies, however it dies, so a crashed run is
//! never locked out. One subtlety: a child forked by the owner shares the lock until
//! it `exec`s, so right after the owner was killed the lock can stay taken for an
//! instant; when the recorded owner is dead we retry briefly instead of refusing.
//!
//! The pid is the file's first line. A run's failure note may follow it
//! (`store::failure_note`); taking the lock rewrites the pid and keeps the note.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::process::group::signal_process;
use crate::store::failure_note;

pub(crate) const LOCK_FILE: &str = "lock";

#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    #[error(
        "run `{run_id}` is already being driven by another baton (pid {pid}); wait for it to finish, or stop it with `kill -INT {pid}`"
    )]
    Held { run_id: String, pid: String },
    #[error("cannot lock {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
}

/// Held for the lifetime of the value.
#[derive(Debug)]
pub(crate) struct RunLock {
    file: File,
    /// The bytes of the pid line, where a failure note would start.
    pid_length: u64,
}

pub(crate) fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)
}

/// Take an exclusive `flock` on `file` without waiting; whether it was free.
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: flock on a file descriptor we own; no memory is involved.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() == Some(libc::EWOULDBLOCK) { Ok(false) } else { Err(error) }
}

/// The most of a lock file anyone reads: the pid line and a failure note.
pub(crate) const MAX_LOCK_BYTES: u64 = failure_note::RESERVED_BYTES as u64 + 64;

/// A lock file's bytes as its pid line and what follows: a failure note, newline
/// first, or nothing.
pub(crate) fn split_pid_line(bytes: &[u8]) -> (&[u8], &[u8]) {
    bytes.split_at(bytes.iter().position(|byte| *byte == b'\n').unwrap_or(bytes.len()))
}

/// The start of the lock file: the pid line, and a failure note if one follows.
fn head(file: &File) -> io::Result<Vec<u8>> {
    let mut bytes = vec![0; 64];
    let read = file.read_at(&mut bytes, 0)?;
    bytes.truncate(read);
    Ok(bytes)
}

/// Where the pid line of a lock file ends (a failure note starts there).
pub(crate) fn pid_line_length(file: &File) -> io::Result<u64> {
    Ok(split_pid_line(&head(file)?).0.len() as u64)
}

fn recorded_pid(file: &File) -> String {
    let head = head(file).unwrap_or_default();
    let pid = String::from_utf8_lossy(split_pid_line(&head).0);
    let pid = pid.trim();
    if pid.is_empty() { "unknown".to_string() } else { pid.to_string() }
}

/// Whether the process `pid` (as recorded in the lock file) exists.
fn is_alive(pid: &str) -> bool {
    pid.parse::<u32>().is_ok_and(|pid| signal_process(pid, 0))
}

impl RunLock {
    /// Take the run's lock or report who holds it.
    pub(crate) fn acquire(run_dir: &Path, run_id: &str) -> Result<RunLock, LockError> {
        let path = run_dir.join(LOCK_FILE);
        let io_error = |source| LockError::Io { path: path.clone(), source };
        let file = open(&path).map_err(io_error)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while !try_lock(&file).map_err(io_error)? {
            let pid = recorded_pid(&file);
            if is_alive(&pid) || std::time::Instant::now() >= deadline {
                return Err(LockError::Held { run_id: run_id.to_string(), pid });
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // The pid replaces the last owner's; a failure note after it stays.
        let mut old = Vec::new();
        (&file).take(MAX_LOCK_BYTES).read_to_end(&mut old).map_err(io_error)?;
        let pid = std::process::id().to_string();
        let mut content = pid.clone().into_bytes();
        content.extend_from_slice(split_pid_line(&old).1);
        file.write_all_at(&content, 0).map_err(io_error)?;
        if old.len() > content.len() || old.len() as u64 == MAX_LOCK_BYTES {
            file.set_len(content.len() as u64).map_err(io_error)?;
        }
        Ok(RunLock { file, pid_length: pid.len() as u64 })
    }

    /// Empty the run's failure note and hold space for the next one
    /// (`store::failure_note`); `run` and `resume` do this once they own the run.
    pub(crate) fn hold_failure_note(&self) {
        failure_note::reserve(&self.file, self.pid_length);
    }

    /// The pid of the process driving the run right now, if any.
    pub(crate) fn holder(run_dir: &Path) -> Option<String> {
        // Read-only: `flock` needs no write access, and `baton logs --follow` asks this
        // of a run it must not change.
        let file = File::open(run_dir.join(LOCK_FILE)).ok()?;
        match try_lock(&file) {
            // Free: we took it for a moment; closing the file releases it.
            Ok(true) => None,
            Ok(false) => Some(recorded_pid(&file)),
            Err(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_owner_is_refused_with_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path(), "r").unwrap();
        let error = RunLock::acquire(dir.path(), "r").unwrap_err();
        let pid = std::process::id();
        assert_eq!(
            error.to_string(),
            format!(
                "run `r` is already being driven by another baton (pid {pid}); wait for it to finish, or stop it with `kill -INT {pid}`"
            )
        );
        assert_eq!(RunLock::holder(dir.path()), Some(pid.to_string()));
        drop(first);
        assert_eq!(RunLock::holder(dir.path()), None);
        assert!(RunLock::acquire(dir.path(), "r").is_ok());
    }
}
