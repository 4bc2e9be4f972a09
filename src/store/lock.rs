//! One owner per run: `baton run`/`resume` hold an exclusive `flock` on
//! `<run_dir>/lock` for as long as they drive the run, with their pid written in
//! it. A second `resume` of a live run fails at once and names the owner. The
//! kernel drops the lock when the owner dies, however it dies, so a crashed run is
//! never locked out. One subtlety: a child forked by the owner shares the lock until
//! it `exec`s, so right after the owner was killed the lock can stay taken for an
//! instant; when the recorded owner is dead we retry briefly instead of refusing.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::process::group::signal_process;

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
    _file: File,
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

fn recorded_pid(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0)).and_then(|_| file.read_to_string(&mut text));
    let pid = text.trim();
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
        let mut file = open(&path).map_err(io_error)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while !try_lock(&file).map_err(io_error)? {
            let pid = recorded_pid(&mut file);
            if is_alive(&pid) || std::time::Instant::now() >= deadline {
                return Err(LockError::Held { run_id: run_id.to_string(), pid });
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        file.set_len(0).map_err(io_error)?;
        file.seek(SeekFrom::Start(0)).map_err(io_error)?;
        write!(file, "{}", std::process::id()).map_err(io_error)?;
        Ok(RunLock { _file: file })
    }

    /// The pid of the process driving the run right now, if any.
    pub(crate) fn holder(run_dir: &Path) -> Option<String> {
        // Read-only: `flock` needs no write access, and `baton logs --follow` asks this
        // of a run it must not change.
        let mut file = File::open(run_dir.join(LOCK_FILE)).ok()?;
        match try_lock(&file) {
            // Free: we took it for a moment; closing the file releases it.
            Ok(true) => None,
            Ok(false) => Some(recorded_pid(&mut file)),
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
