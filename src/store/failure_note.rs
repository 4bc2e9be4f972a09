//! The last word of a run that could not save its outcome. When a disk fills up,
//! the snapshot and the journal cannot record that the run failed, and `status`
//! would later call it "running, but killed". So the journal always holds space
//! for a note past its end (`fallocate` with `KEEP_SIZE`: the blocks are the
//! file's, its size does not change), and a failure to save writes its note
//! there, which needs no new space. Loading a run applies a note no later commit
//! outdates.
//!
//! The note is the journal's last bytes: a zero byte, the note's JSON, a newline.
//! Readers of the entries stop at the first zero byte, so they never see it, and
//! the next invocation's `Journal::open` zeroes it with any torn tail once the
//! run is loaded. It lives in the journal because a file of its own would cost a
//! run one more inode, which on a busy ext4 is most of a millisecond
//! (docs/benchmarks.md, issue 22). Runs written by an earlier Baton keep theirs
//! after the pid in their `lock` file, or in `failure.json`; both are still read.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::store::journal::JOURNAL_FILE;
use crate::store::lock::LEGACY_LOCK_FILE;
use crate::text::char_floor;

/// Where an earlier Baton left the note.
const LEGACY_FAILURE_FILE: &str = "failure.json";

/// The most a note's JSON takes; its message is cut to fit.
pub(crate) const RESERVED_BYTES: usize = 4096;

/// The space a note takes in the journal: its JSON, the zero byte before it and
/// the newline after it.
pub(crate) const NOTE_SPACE: u64 = RESERVED_BYTES as u64 + 2;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FailureNote {
    /// The run's commit count when it failed; a later commit outdates the note.
    pub(crate) commit: u64,
    pub(crate) error: String,
}

/// Give `from..to` of `file` its blocks without changing its size; blocks already
/// there stay as they are.
pub(crate) fn hold(file: &File, from: u64, to: u64) -> io::Result<()> {
    if to <= from {
        return Ok(());
    }
    let too_far = |_| io::Error::from_raw_os_error(libc::EFBIG);
    let (offset, length) =
        (libc::off_t::try_from(from).map_err(too_far)?, libc::off_t::try_from(to - from).map_err(too_far)?);
    // SAFETY: fallocate on a descriptor we own; KEEP_SIZE leaves the size as it is.
    if unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, offset, length) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The bytes of `note` as the journal holds it: a zero byte, its JSON (the
/// message cut so that it fits in [`NOTE_SPACE`]), a newline.
pub(crate) fn encode(note: &FailureNote) -> io::Result<Vec<u8>> {
    let mut json = serde_json::to_vec(note).map_err(io::Error::other)?;
    if json.len() > RESERVED_BYTES {
        let mut shorter = note.clone();
        shorter.error.truncate(char_floor(&shorter.error, RESERVED_BYTES / 2));
        shorter.error.push('…');
        json = serde_json::to_vec(&shorter).map_err(io::Error::other)?;
    }
    let mut bytes = Vec::with_capacity(json.len() + 2);
    bytes.push(0);
    bytes.extend_from_slice(&json);
    bytes.push(b'\n');
    Ok(bytes)
}

/// The note at the end of `journal`, if one is there.
fn in_journal(journal: &File) -> Option<FailureNote> {
    let size = journal.metadata().ok()?.len();
    let length = size.min(NOTE_SPACE);
    let mut tail = vec![0; usize::try_from(length).ok()?];
    journal.read_exact_at(&mut tail, size - length).ok()?;
    let json = tail.strip_suffix(b"\n")?;
    let start = json.iter().rposition(|byte| *byte == 0)? + 1;
    let json = &json[start..];
    if !json.starts_with(b"{") {
        return None;
    }
    serde_json::from_slice(json).ok()
}

/// The note of `run_dir`, if a failure left one.
pub(crate) fn read(run_dir: &Path) -> Option<FailureNote> {
    if let Some(note) = File::open(run_dir.join(JOURNAL_FILE)).ok().and_then(|journal| in_journal(&journal)) {
        return Some(note);
    }
    let mut text = Vec::new();
    if let Ok(file) = File::open(run_dir.join(LEGACY_LOCK_FILE)) {
        file.take(RESERVED_BYTES as u64 + 64).read_to_end(&mut text).ok()?;
        let after_pid = &text[text.iter().position(|byte| *byte == b'\n').unwrap_or(text.len())..];
        if let Some(note) = after_pid.strip_prefix(b"\n") {
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

    fn journal_with(dir: &Path, bytes: &[u8]) -> File {
        let path = dir.join(JOURNAL_FILE);
        std::fs::write(&path, bytes).unwrap();
        std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap()
    }

    #[test]
    fn a_note_after_the_entries_and_their_zeros_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let journal = journal_with(dir.path(), b"{\"commit\":1}\n\0\0\0\0");
        assert_eq!(read(dir.path()), None, "zeros after the entries are no note");
        let note = FailureNote { commit: 7, error: "disk full".into() };
        journal.write_all_at(&encode(&note).unwrap(), journal.metadata().unwrap().len()).unwrap();
        assert_eq!(read(dir.path()), Some(note));
    }

    #[test]
    fn a_note_right_after_the_last_entry_is_read_back() {
        // A journal in memory has no zeros after its entries.
        let dir = tempfile::tempdir().unwrap();
        let note = FailureNote { commit: 2, error: "full".into() };
        let mut bytes = b"{\"commit\":1}\n{\"commit\":2}\n".to_vec();
        bytes.extend(encode(&note).unwrap());
        journal_with(dir.path(), &bytes);
        assert_eq!(read(dir.path()), Some(note));
    }

    #[test]
    fn entries_alone_are_no_note() {
        let dir = tempfile::tempdir().unwrap();
        journal_with(dir.path(), b"{\"commit\":1,\"error\":\"x\"}\n");
        assert_eq!(read(dir.path()), None);
        journal_with(dir.path(), b"");
        assert_eq!(read(dir.path()), None);
    }

    #[test]
    fn the_space_is_held_without_changing_the_size() {
        let dir = tempfile::tempdir().unwrap();
        let journal = journal_with(dir.path(), b"{}\n");
        hold(&journal, 3, 3 + NOTE_SPACE).unwrap();
        let metadata = journal.metadata().unwrap();
        assert_eq!(metadata.len(), 3);
        use std::os::unix::fs::MetadataExt;
        // tmpfs and ext4 both honour KEEP_SIZE; a file system that does not leaves
        // the note best effort, which this test would not catch, so it asks only
        // where fallocate works.
        if metadata.blocks() > 0 {
            assert!(metadata.blocks() * 512 >= NOTE_SPACE);
        }
    }

    #[test]
    fn a_note_left_by_an_earlier_baton_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LEGACY_FAILURE_FILE), r#"{"commit":4,"error":"full"}"#).unwrap();
        assert_eq!(read(dir.path()), Some(FailureNote { commit: 4, error: "full".into() }));
        std::fs::write(dir.path().join(LEGACY_LOCK_FILE), "42").unwrap();
        assert_eq!(read(dir.path()), Some(FailureNote { commit: 4, error: "full".into() }), "a lock without a note");
        std::fs::write(dir.path().join(LEGACY_LOCK_FILE), "42\n{\"commit\":5,\"error\":\"fuller\"}").unwrap();
        assert_eq!(read(dir.path()), Some(FailureNote { commit: 5, error: "fuller".into() }), "the lock's note");
    }

    #[test]
    fn a_long_message_is_cut_to_fit() {
        let bytes = encode(&FailureNote { commit: 1, error: "é".repeat(10_000) }).unwrap();
        assert!(bytes.len() as u64 <= NOTE_SPACE);
        let dir = tempfile::tempdir().unwrap();
        journal_with(dir.path(), &bytes);
        let note = read(dir.path()).unwrap();
        assert!(note.error.ends_with('…') && note.error.len() < RESERVED_BYTES);
    }
}
