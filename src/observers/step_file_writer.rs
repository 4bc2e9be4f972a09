//! Writing a run's per-step trace files (R7.11): `stdout.txt`, `stderr.txt` and
//! `meta.json` for every script step, a prompt file for every markdown step.
//!
//! Each one is a new file, and on ext4 a new file's inode is most of its cost: on
//! this project's machine, where benchmarks had created and removed files by the
//! hundred thousand, an `openat(O_CREAT)` took 0.2 to 0.7 ms of kernel time against
//! 0.01 ms for a `link` (issue 22, eighth round, `docs/benchmarks.md`): without a
//! journal, ext4 walks past every inode freed in the last minute before it hands out
//! a new one (ninth round). Many step
//! files repeat an earlier one byte for byte: most `stderr.txt` files are empty, and
//! a loop's or a poller's `stdout.txt` is often the same line each time. A file's
//! contents are what a reader sees, whatever its name, so a step file whose contents
//! (up to [`MOST_REMEMBERED_BYTES`]) equal a file written earlier in this invocation
//! is a hard link to that file: no inode is made for it.
//!
//! A linked file must never be written through: a step written again under the same
//! name (a step retried after a resume) would change every file linked to it. So a
//! file is only ever created new (`create_new`); one that exists is removed first,
//! which leaves the others as they were.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Files up to this size are remembered by their contents.
const MOST_REMEMBERED_BYTES: usize = 4096;
/// How many distinct contents are remembered; past it the memory starts over, so
/// it holds at most 64 × 4 KiB whatever the run prints.
const MOST_REMEMBERED: usize = 64;

/// Writes step files for one run directory.
pub(crate) struct StepFileWriter {
    /// Files written in this invocation, by their contents (compared whole, not by a
    /// hash): a later file with the same contents is linked to the one named here.
    written: HashMap<Vec<u8>, PathBuf>,
    /// False once a link failed for another reason than a missing source: on a file
    /// system without hard links (FAT, some FUSE mounts) every file is made new.
    links: bool,
}

impl StepFileWriter {
    pub(crate) fn new() -> StepFileWriter {
        StepFileWriter { written: HashMap::new(), links: true }
    }

    /// Write `contents` as the file `path`, replacing whatever was there.
    pub(crate) fn write(&mut self, path: &Path, contents: &[u8]) -> io::Result<()> {
        // A name written again with the same contents is made new below: linking it
        // to itself would remove the source first.
        if let Some(source) = self.written.get(contents).filter(|source| source.as_path() != path) {
            match replacing(path, || fs::hard_link(source, path)) {
                Ok(()) => return Ok(()),
                // The source was removed (its step written again): make the file new.
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    self.written.remove(contents);
                }
                Err(_) => {
                    self.written.clear();
                    self.links = false;
                }
            }
        }
        // `path` is written again with other contents: the names linked to it keep
        // the old inode, and nothing more links to this name for the old contents.
        self.written.retain(|_, source| source != path);
        replacing(path, || OpenOptions::new().write(true).create_new(true).open(path))?.write_all(contents)?;
        if self.links && contents.len() <= MOST_REMEMBERED_BYTES {
            if self.written.len() >= MOST_REMEMBERED {
                self.written.clear();
            }
            self.written.insert(contents.to_vec(), path.to_path_buf());
        }
        Ok(())
    }
}

/// Make the file `path` new with `make` (which must fail with `AlreadyExists` where
/// a file of that name is in the way): remove such a file and make it again. The
/// removal only takes the name away; other names of its inode keep their contents.
fn replacing<T>(path: &Path, make: impl Fn() -> io::Result<T>) -> io::Result<T> {
    match make() {
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {
            fs::remove_file(path)?;
            make()
        }
        made => made,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn empty_files_after_the_first_are_links_to_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut writer = StepFileWriter::new();
        let [first, second, full] =
            ["a_001.stderr.txt", "a_002.stderr.txt", "a_002.stdout.txt"].map(|name| dir.path().join(name));
        writer.write(&first, b"").expect("first empty");
        writer.write(&full, b"<goto>X.sh</goto>\n").expect("with contents");
        writer.write(&second, b"").expect("second empty");
        let (first_meta, second_meta) = (fs::metadata(&first).expect("first"), fs::metadata(&second).expect("second"));
        assert_eq!((first_meta.ino(), first_meta.nlink(), second_meta.len()), (second_meta.ino(), 2, 0));
        assert_eq!(fs::read(&full).expect("read"), b"<goto>X.sh</goto>\n");
    }

    #[test]
    fn a_file_repeating_an_earlier_one_is_linked_and_other_contents_are_not() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut writer = StepFileWriter::new();
        let [first, again, other] =
            ["a_001.stdout.txt", "a_002.stdout.txt", "a_003.stdout.txt"].map(|name| dir.path().join(name));
        writer.write(&first, b"<goto>LOOP.sh</goto>\n").expect("first");
        writer.write(&again, b"<goto>LOOP.sh</goto>\n").expect("the same again");
        writer.write(&other, b"<goto>LOOP.sh</goto>\r\n").expect("one byte more");
        let [first, again, other] = [first, again, other].map(|path| fs::metadata(path).expect("metadata"));
        assert_eq!((first.ino(), first.nlink(), other.nlink()), (again.ino(), 2, 1));
    }

    #[test]
    fn a_name_written_again_with_the_same_contents_keeps_them_and_its_links() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut writer = StepFileWriter::new();
        let [first, second] = ["a_001.stdout.txt", "a_002.stdout.txt"].map(|name| dir.path().join(name));
        writer.write(&first, b"same\n").expect("first");
        writer.write(&second, b"same\n").expect("linked");
        writer.write(&second, b"same\n").expect("second again");
        writer.write(&first, b"same\n").expect("first again");
        assert_eq!(
            (fs::read(&first).expect("first"), fs::read(&second).expect("second")),
            (b"same\n".to_vec(), b"same\n".to_vec())
        );
    }

    #[test]
    fn large_files_are_not_remembered_and_memory_starts_over_when_full() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut writer = StepFileWriter::new();
        let large = vec![b'x'; MOST_REMEMBERED_BYTES + 1];
        writer.write(&dir.path().join("large_1"), &large).expect("large");
        writer.write(&dir.path().join("large_2"), &large).expect("large again");
        assert_eq!(fs::metadata(dir.path().join("large_2")).expect("large_2").nlink(), 1);
        for index in 0..=MOST_REMEMBERED {
            writer.write(&dir.path().join(format!("small_{index}")), index.to_string().as_bytes()).expect("small");
        }
        assert!(writer.written.len() <= MOST_REMEMBERED);
    }

    #[test]
    fn where_links_fail_every_file_is_made_new() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut writer = StepFileWriter::new();
        // A directory cannot be hard-linked (EPERM), as nothing can on a FAT disk.
        let unlinkable = dir.path().join("a_001.stderr.txt");
        fs::create_dir(&unlinkable).expect("dir");
        writer.written.insert(Vec::new(), unlinkable);
        let [second, third] = ["a_002.stderr.txt", "a_003.stderr.txt"].map(|name| dir.path().join(name));
        writer.write(&second, b"").expect("made new instead");
        writer.write(&third, b"").expect("and the next");
        let (second_meta, third_meta) = (fs::metadata(&second).expect("second"), fs::metadata(&third).expect("third"));
        assert_eq!((second_meta.nlink(), third_meta.nlink(), second_meta.len()), (1, 1, 0));
        assert!(!writer.links, "linking stopped");
    }

    /// Regression guard: a step written again under its name (a retried step) with
    /// output must not write into the empty file every other name links to.
    #[test]
    fn rewriting_a_linked_file_leaves_the_files_linked_to_it_empty() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut writer = StepFileWriter::new();
        let [first, second, third] =
            ["a_001.stderr.txt", "a_002.stderr.txt", "a_003.stderr.txt"].map(|name| dir.path().join(name));
        writer.write(&first, b"").expect("first");
        writer.write(&second, b"").expect("second");
        writer.write(&first, b"warning: retried\n").expect("the first again, with output");
        writer.write(&third, b"").expect("third, after its source was replaced");
        assert_eq!(fs::read(&first).expect("first"), b"warning: retried\n");
        assert_eq!((fs::read(&second).expect("second"), fs::read(&third).expect("third")), (Vec::new(), Vec::new()));
        // And a file already there from an earlier invocation is replaced, not written through.
        let mut later = StepFileWriter::new();
        later.write(&second, b"now with output\n").expect("rewrite");
        assert_eq!(fs::read(&third).expect("third"), b"");
    }
}
