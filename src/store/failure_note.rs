//! The last word of a run that could not save its outcome. When a disk fills up,
//! the snapshot and the journal cannot record that the run failed, and `status`
//! would later call it "running, but killed". So every invocation reserves a few
//! blocks for `failure.json` up front (`fallocate` with `KEEP_SIZE`: the file stays
//! empty, the space is held), and a failure to save writes its note into them,
//! which needs no new space. Loading a run applies a note no later commit outdates.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::text::char_floor;

pub(crate) const FAILURE_FILE: &str = "failure.json";

/// Space held for the note; its message is cut to fit.
const RESERVED_BYTES: usize = 4096;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FailureNote {
    /// The run's commit count when it failed; a later commit outdates the note.
    pub(crate) commit: u64,
    pub(crate) error: String,
}

/// Empty the note and hold space for the next one. Best effort: on a disk that is
/// already full there is nothing to hold.
pub(crate) fn reserve(run_dir: &Path) {
    let Ok(file) = OpenOptions::new().create(true).write(true).truncate(true).open(run_dir.join(FAILURE_FILE)) else {
        return;
    };
    // SAFETY: fallocate on a descriptor we own; KEEP_SIZE leaves the file empty.
    unsafe {
        libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, RESERVED_BYTES as libc::off_t);
    }
}

/// Write `note` into the reserved space and make it durable.
pub(crate) fn record(run_dir: &Path, note: &FailureNote) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(note).map_err(io::Error::other)?;
    if bytes.len() > RESERVED_BYTES {
        let mut shorter = note.clone();
        shorter.error.truncate(char_floor(&shorter.error, RESERVED_BYTES / 2));
        shorter.error.push('…');
        bytes = serde_json::to_vec(&shorter).map_err(io::Error::other)?;
    }
    let file = OpenOptions::new().write(true).open(run_dir.join(FAILURE_FILE))?;
    file.write_all_at(&bytes, 0)?;
    file.set_len(bytes.len() as u64)?;
    file.sync_data()
}

/// The note of `run_dir`, if a failure left one.
pub(crate) fn read(run_dir: &Path) -> Option<FailureNote> {
    let mut text = String::new();
    File::open(run_dir.join(FAILURE_FILE)).ok()?.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_is_written_into_the_reserved_space_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        reserve(dir.path());
        assert_eq!(read(dir.path()), None, "a reserved note is empty");
        let note = FailureNote { commit: 7, error: "disk full".into() };
        record(dir.path(), &note).unwrap();
        assert_eq!(read(dir.path()), Some(note));
        reserve(dir.path());
        assert_eq!(read(dir.path()), None, "the next invocation starts clean");
    }

    #[test]
    fn a_long_message_is_cut_to_fit() {
        let dir = tempfile::tempdir().unwrap();
        reserve(dir.path());
        record(dir.path(), &FailureNote { commit: 1, error: "é".repeat(10_000) }).unwrap();
        let note = read(dir.path()).unwrap();
        assert!(note.error.ends_with('…') && note.error.len() < RESERVED_BYTES);
    }
}
