//! The last word of a run that could not save its outcome. When a disk fills up,
//! the snapshot and the journal cannot record that the run failed, and `status`
//! would later call it "running, but killed". So every invocation holds a few
//! blocks for a note up front (`fallocate` with `KEEP_SIZE`: the space is held, the
//! file's size does not change), and a failure to save writes its note into them,
//! which needs no new space. Loading a run applies a note no later commit outdates.
//!
//! The note lives in the run's `lock` file, on the line after the owner's pid
//! (`store::lock`): the file is created for every invocation anyway, and a file of
//! its own cost one more inode per run, which on a busy ext4 is most of a
//! millisecond (docs/benchmarks.md, issue 22). Runs written by an earlier Baton
//! keep theirs in `failure.json`, which is still read.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::store::lock::{LOCK_FILE, MAX_LOCK_BYTES, pid_line_length, split_pid_line};
use crate::text::char_floor;

/// Where an earlier Baton left the note.
const LEGACY_FAILURE_FILE: &str = "failure.json";

/// Space held for the note; its message is cut to fit.
pub(crate) const RESERVED_BYTES: usize = 4096;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FailureNote {
    /// The run's commit count when it failed; a later commit outdates the note.
    pub(crate) commit: u64,
    pub(crate) error: String,
}

/// Empty the note in `lock` (the run's lock file, whose first `pid_length` bytes
/// are the owner's pid) and hold space for the next one. Best effort: on a disk that
/// is already full there is nothing to hold.
pub(crate) fn reserve(lock: &File, pid_length: u64) {
    if lock.set_len(pid_length).is_err() {
        return;
    }
    // SAFETY: fallocate on a descriptor we own; KEEP_SIZE leaves the size as it is.
    unsafe {
        libc::fallocate(
            lock.as_raw_fd(),
            libc::FALLOC_FL_KEEP_SIZE,
            0,
            (pid_length as usize + 1 + RESERVED_BYTES) as libc::off_t,
        );
    }
}

/// Write `note` into the space held for it and make it durable.
pub(crate) fn record(run_dir: &Path, note: &FailureNote) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(note).map_err(io::Error::other)?;
    if bytes.len() > RESERVED_BYTES {
        let mut shorter = note.clone();
        shorter.error.truncate(char_floor(&shorter.error, RESERVED_BYTES / 2));
        shorter.error.push('…');
        bytes = serde_json::to_vec(&shorter).map_err(io::Error::other)?;
    }
    bytes.insert(0, b'\n');
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(run_dir.join(LOCK_FILE))?;
    let at = pid_line_length(&file)?;
    file.write_all_at(&bytes, at)?;
    file.set_len(at + bytes.len() as u64)?;
    file.sync_data()
}

/// The note of `run_dir`, if a failure left one.
pub(crate) fn read(run_dir: &Path) -> Option<FailureNote> {
    let mut text = Vec::new();
    if let Ok(file) = File::open(run_dir.join(LOCK_FILE)) {
        file.take(MAX_LOCK_BYTES).read_to_end(&mut text).ok()?;
        if let Some(note) = split_pid_line(&text).1.strip_prefix(b"\n") {
            return serde_json::from_slice(note).ok();
        }
    }
    text.clear();
    File::open(run_dir.join(LEGACY_FAILURE_FILE)).ok()?.take(RESERVED_BYTES as u64).read_to_end(&mut text).ok()?;
    serde_json::from_slice(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::lock::RunLock;

    #[test]
    fn a_note_is_written_into_the_reserved_space_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let lock = RunLock::acquire(dir.path(), "r").unwrap();
        lock.hold_failure_note();
        assert_eq!(read(dir.path()), None, "a reserved note is empty");
        let note = FailureNote { commit: 7, error: "disk full".into() };
        record(dir.path(), &note).unwrap();
        assert_eq!(read(dir.path()), Some(note));
        assert_eq!(RunLock::holder(dir.path()), Some(std::process::id().to_string()), "the pid is kept");
        lock.hold_failure_note();
        assert_eq!(read(dir.path()), None, "the next invocation starts clean");
    }

    #[test]
    fn the_space_is_held_without_changing_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let lock = RunLock::acquire(dir.path(), "r").unwrap();
        lock.hold_failure_note();
        let metadata = std::fs::metadata(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(metadata.len(), std::process::id().to_string().len() as u64);
        use std::os::unix::fs::MetadataExt;
        // tmpfs and ext4 both honour KEEP_SIZE; a file system that does not leaves
        // the note best effort, which this test would not catch, so it asks only
        // where fallocate works.
        if metadata.blocks() > 0 {
            assert!(metadata.blocks() * 512 >= RESERVED_BYTES as u64);
        }
    }

    #[test]
    fn a_second_acquire_keeps_the_note() {
        // `baton repair` and `baton gc` take the lock of a run that failed: its note
        // must survive them.
        let dir = tempfile::tempdir().unwrap();
        let note = FailureNote { commit: 3, error: "disk full".into() };
        {
            let lock = RunLock::acquire(dir.path(), "r").unwrap();
            lock.hold_failure_note();
            record(dir.path(), &note).unwrap();
        }
        std::fs::write(dir.path().join(LOCK_FILE), format!("123456789\n{}", serde_json::to_string(&note).unwrap()))
            .unwrap();
        let _lock = RunLock::acquire(dir.path(), "r").unwrap();
        assert_eq!(read(dir.path()), Some(note));
        assert_eq!(RunLock::holder(dir.path()), Some(std::process::id().to_string()));
    }

    #[test]
    fn a_note_left_by_an_earlier_baton_in_failure_json_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LEGACY_FAILURE_FILE), r#"{"commit":4,"error":"full"}"#).unwrap();
        assert_eq!(read(dir.path()), Some(FailureNote { commit: 4, error: "full".into() }));
        std::fs::write(dir.path().join(LOCK_FILE), "42").unwrap();
        assert_eq!(read(dir.path()), Some(FailureNote { commit: 4, error: "full".into() }), "a lock without a note");
    }

    #[test]
    fn a_long_message_is_cut_to_fit() {
        let dir = tempfile::tempdir().unwrap();
        let lock = RunLock::acquire(dir.path(), "r").unwrap();
        lock.hold_failure_note();
        record(dir.path(), &FailureNote { commit: 1, error: "é".repeat(10_000) }).unwrap();
        let note = read(dir.path()).unwrap();
        assert!(note.error.ends_with('…') && note.error.len() < RESERVED_BYTES);
    }
}
