//! A run's trace, read while it may still be written.
//!
//! The trace observer appends whole lines, but a reader can meet the end of a
//! line being written, and a run killed mid-write leaves a torn last line. Only
//! lines ended by `\n` are returned; the rest waits for the next read (or, for a
//! finished run, is skipped). The file is opened read-only: reading a trace never
//! changes it.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

pub(crate) use crate::observers::trace::TRACE_FILE;

/// The trace of the run in `run_dir`.
pub(crate) fn trace_path(run_dir: &Path) -> PathBuf {
    run_dir.join(TRACE_FILE)
}

/// Reads a trace from the start, then what is appended to it.
pub(crate) struct TraceTail {
    path: PathBuf,
    offset: u64,
    /// The start of a line not yet ended.
    partial: Vec<u8>,
}

impl TraceTail {
    pub(crate) fn new(path: PathBuf) -> TraceTail {
        TraceTail { path, offset: 0, partial: Vec::new() }
    }

    /// The complete lines appended since the last call (all of them the first
    /// time), as one text to iterate with `lines()`: one buffer, not a string per
    /// line, as a long run's trace has millions. A trace that does not exist yet
    /// has no lines.
    pub(crate) fn read_new(&mut self) -> io::Result<String> {
        let mut file = match File::open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(String::new()),
            Err(error) => return Err(error),
        };
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = std::mem::take(&mut self.partial);
        let read = file.read_to_end(&mut bytes)?;
        self.offset += read as u64;
        let complete = bytes.iter().rposition(|byte| *byte == b'\n').map_or(0, |newline| newline + 1);
        self.partial = bytes.split_off(complete);
        Ok(String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned()))
    }
}

/// The complete lines of the trace at `path` (a torn last line is left out).
pub(crate) fn read_complete(path: &Path) -> io::Result<String> {
    TraceTail::new(path.to_path_buf()).read_new()
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn a_line_being_written_waits_until_it_is_ended() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(TRACE_FILE);
        let mut tail = TraceTail::new(path.clone());
        assert_eq!(tail.read_new().expect("no trace yet"), "");
        let mut file = File::create(&path).expect("create");
        file.write_all(b"{\"seq\":1}\n{\"seq\":").expect("write");
        assert_eq!(tail.read_new().expect("read"), "{\"seq\":1}\n");
        file.write_all(b"2}\n").expect("write");
        assert_eq!(tail.read_new().expect("read"), "{\"seq\":2}\n");
        assert_eq!(tail.read_new().expect("read"), "");
    }

    #[test]
    fn a_torn_last_line_is_left_out() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(TRACE_FILE);
        std::fs::write(&path, "{\"seq\":1}\n{\"seq\":2,\"ty").expect("write");
        assert_eq!(read_complete(&path).expect("read"), "{\"seq\":1}\n");
    }
}
