//! One owner per run: `baton run`/`resume` hold an exclusive `flock` on the run's
//! journal (`journal.jsonl`) for as long as they drive the run. A second `resume`
//! of a live run fails at once and names the owner. The kernel drops the lock when
//! the owner dies, however it dies, so a crashed run is never locked out.
//!
//! The lock is on the journal, not on a file of its own, because on a busy ext4
//! every file a run creates costs up to a millisecond (docs/benchmarks.md, issue
//! 22); the journal is never replaced, only written in place, so its inode lives as
//! long as the run. The owner's pid is not written anywhere: the kernel lists every
//! `flock` with the pid that took it in `/proc/locks`, which is also how a reader
//! asks who drives a run without taking the lock itself (a reader that took it for
//! a moment would make a `resume` at that instant refuse, naming the reader).
//!
//! One subtlety: a child forked by the owner shares the lock until it `exec`s, so
//! right after the owner was killed the lock can stay taken for an instant; when
//! the listed owner is dead we retry briefly instead of refusing.
//!
//! Runs written by an earlier Baton have a `lock` file, which held the pid and a
//! failure note (`store::failure_note` still reads the note there).

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::process::group::signal_process;
use crate::store::journal::JOURNAL_FILE;

/// The lock file of runs written by an earlier Baton.
pub(crate) const LEGACY_LOCK_FILE: &str = "lock";

#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    #[error(
        "run `{run_id}` is already being driven by another baton (pid {pid}); wait for it to finish, or stop it with `kill -INT {pid}`"
    )]
    Held { run_id: String, pid: String },
    #[error(
        "run `{run_id}` is already being driven by another baton (its pid is not listed in /proc/locks); wait for it to finish"
    )]
    HeldByUnknown { run_id: String },
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

/// Who holds a `flock` on a file, as `/proc/locks` lists it.
#[derive(Debug, PartialEq, Eq)]
enum Listed {
    /// The pid that took the lock (it may have died since, leaving the lock to a
    /// child it forked).
    Pid(u32),
    /// No lock on the file.
    Free,
    /// `/proc/locks` cannot be read, or lists the lock without a pid this process
    /// can see (another pid namespace).
    Unknown,
}

/// The `/proc/locks` key of a file: `MAJOR:MINOR:INODE`, the device in hex.
fn lock_key(metadata: &std::fs::Metadata) -> String {
    let device = metadata.dev();
    format!("{:02x}:{:02x}:{}", libc::major(device), libc::minor(device), metadata.ino())
}

/// The `flock` on the file whose `/proc/locks` key is `key`, from the listing
/// `locks`. Lines are `N: FLOCK  ADVISORY  WRITE PID MAJ:MIN:INODE START END`; a
/// waiter's line starts with `N: ->` and holds nothing.
fn listed_in(locks: impl BufRead, key: &str) -> Listed {
    for line in locks.lines() {
        let Ok(line) = line else { return Listed::Unknown };
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&"FLOCK") || fields.get(5) != Some(&key) {
            continue;
        }
        return match fields.get(4).and_then(|pid| pid.parse::<u32>().ok()) {
            Some(pid) if pid > 0 => Listed::Pid(pid),
            _ => Listed::Unknown,
        };
    }
    Listed::Free
}

/// Who holds the `flock` on `file`, by `/proc/locks`.
fn listed_holder(file: &File) -> Listed {
    let (Ok(metadata), Ok(locks)) = (file.metadata(), File::open("/proc/locks")) else { return Listed::Unknown };
    listed_in(BufReader::new(locks), &lock_key(&metadata))
}

impl RunLock {
    /// Take the run's lock or report who holds it.
    pub(crate) fn acquire(run_dir: &Path, run_id: &str) -> Result<RunLock, LockError> {
        let path = run_dir.join(JOURNAL_FILE);
        let io_error = |source| LockError::Io { path: path.clone(), source };
        let file = open(&path).map_err(io_error)?;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while !try_lock(&file).map_err(io_error)? {
            let expired = std::time::Instant::now() >= deadline;
            match listed_holder(&file) {
                Listed::Pid(pid) if expired || signal_process(pid, 0) => {
                    return Err(LockError::Held { run_id: run_id.to_string(), pid: pid.to_string() });
                }
                _ if expired => return Err(LockError::HeldByUnknown { run_id: run_id.to_string() }),
                // Released since, held by a dead owner's child until its `exec`, or
                // not listed: try again.
                _ => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
        Ok(RunLock { _file: file })
    }

    /// The pid of the process driving the run right now, if any ("unknown" when a
    /// baton holds the lock but `/proc/locks` does not say which).
    pub(crate) fn holder(run_dir: &Path) -> Option<String> {
        // Read-only: `baton logs --follow` asks this of a run it must not change.
        let file = File::open(run_dir.join(JOURNAL_FILE)).ok()?;
        match listed_holder(&file) {
            Listed::Pid(pid) => Some(pid.to_string()),
            Listed::Free => None,
            // No listing to read: take the lock for a moment (closing the file
            // releases it), the one way left to know.
            Listed::Unknown => match try_lock(&file) {
                Ok(false) => Some("unknown".to_string()),
                Ok(true) | Err(_) => None,
            },
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

    #[test]
    fn a_holder_without_a_listed_pid_is_refused_without_one() {
        let error = LockError::HeldByUnknown { run_id: "r".to_string() };
        assert_eq!(
            error.to_string(),
            "run `r` is already being driven by another baton (its pid is not listed in /proc/locks); wait for it to finish"
        );
    }

    #[test]
    fn the_lock_is_on_the_journal_and_no_other_file_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let _lock = RunLock::acquire(dir.path(), "r").unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|entry| entry.file_name()).collect();
        assert_eq!(names, [JOURNAL_FILE]);
        assert_eq!(std::fs::metadata(dir.path().join(JOURNAL_FILE)).unwrap().len(), 0, "nothing is written in it");
    }

    /// `flock(1)` holding the journal of a run in `dir`, in a process group of its
    /// own; `close` keeps its command from inheriting the lock.
    fn flock_holder(dir: &Path, close: bool, seconds: &str) -> std::process::Child {
        use std::os::unix::process::CommandExt;
        let journal = dir.join(JOURNAL_FILE);
        std::fs::write(&journal, b"").unwrap();
        let mut command = std::process::Command::new("flock");
        if close {
            command.arg("--close");
        }
        let child = command.arg(&journal).args(["sleep", seconds]).process_group(0).spawn().expect("flock(1)");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while RunLock::holder(dir).is_none() {
            assert!(std::time::Instant::now() < deadline, "flock never took the lock");
            std::thread::yield_now();
        }
        // Regression (a flaky test): flock's fork holds a copy of the locked
        // descriptor until it closes it just before its exec, so a SIGKILL in that
        // window left the lock held by a dying child after flock itself was reaped.
        // With `close`, wait for `sleep` to be running: the copy is gone by then.
        let children = format!("/proc/{0}/task/{0}/children", child.id());
        let sleeping = || {
            // Without the kernel's list of children there is nothing to wait on.
            let Ok(listed) = std::fs::read_to_string(&children) else { return true };
            listed.split_whitespace().any(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|comm| comm.trim() == "sleep")
            })
        };
        while close && !sleeping() {
            assert!(std::time::Instant::now() < deadline, "flock's command never started");
            std::thread::yield_now();
        }
        child
    }

    fn end(mut child: std::process::Child) {
        // SAFETY: signals the test's own process group.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
    }

    #[test]
    fn another_process_holding_the_lock_is_named_by_its_pid() {
        let dir = tempfile::tempdir().unwrap();
        let child = flock_holder(dir.path(), true, "30");
        let pid = child.id().to_string();
        assert_eq!(RunLock::holder(dir.path()), Some(pid.clone()));
        let error = RunLock::acquire(dir.path(), "r").unwrap_err();
        assert!(matches!(&error, LockError::Held { pid: held, .. } if *held == pid), "{error}");
        end(child);
        assert_eq!(RunLock::holder(dir.path()), None);
        assert!(RunLock::acquire(dir.path(), "r").is_ok());
    }

    #[test]
    fn a_dead_owners_child_holding_the_lock_for_an_instant_is_waited_for() {
        // flock(1) without --close lets `sleep` inherit the lock: the owner dies, its
        // child holds the lock a moment longer, and /proc/locks names the dead owner.
        let dir = tempfile::tempdir().unwrap();
        let mut child = flock_holder(dir.path(), false, "0.3");
        child.kill().unwrap();
        child.wait().unwrap();
        let owner = child.id().to_string();
        assert_eq!(RunLock::holder(dir.path()), Some(owner), "listed under the dead owner");
        assert!(RunLock::acquire(dir.path(), "r").is_ok(), "taken once the child let go");
    }

    #[test]
    fn proc_locks_lines_are_read_for_the_file_asked_about() {
        let listing = "1: FLOCK  ADVISORY  WRITE 4242 fe:00:77 0 EOF\n\
                       1: -> FLOCK  ADVISORY  WRITE 5151 fe:00:10010782 0 EOF\n\
                       2: POSIX  ADVISORY  WRITE 6161 fe:00:10010782 0 EOF\n\
                       3: FLOCK  ADVISORY  WRITE 7095 fe:00:10010782 0 EOF\n";
        assert_eq!(listed_in(listing.as_bytes(), "fe:00:10010782"), Listed::Pid(7095));
        assert_eq!(listed_in(listing.as_bytes(), "fe:00:77"), Listed::Pid(4242));
        assert_eq!(listed_in(listing.as_bytes(), "00:2a:77"), Listed::Free);
        assert_eq!(listed_in("4: FLOCK  ADVISORY  WRITE 0 00:2a:9 0 EOF\n".as_bytes(), "00:2a:9"), Listed::Unknown);
    }
}
