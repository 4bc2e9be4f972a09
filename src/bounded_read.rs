//! Reading a file, a pipe or an archive entry to its end, but never past a limit.
//! Every input a hostile user controls and Baton reads whole is bounded this way
//! (`--input-file`, a YAML workflow or manifest, a zip archive and each entry it
//! inflates): a size that metadata or a header declares can lie, and `/dev/zero`
//! declares none, so the bound is on what is read.

use std::fs::File;
use std::io::{self, Read};

/// Read `reader` to its end if that is at most `limit` bytes; `None` when there is
/// more (one byte past the limit is read to tell, and nothing further).
pub(crate) fn read_at_most(reader: impl Read, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// `read_at_most` for a file: it reads the size its metadata gives (never beyond
/// `limit`) with one `read`, and a second finds the end, instead of a series of
/// reads of at most 8 KiB, each growing the buffer. A YAML workflow is read at
/// every access to it (R13.8), twice a step. A size that lies costs nothing worse:
/// a file that grew is read on to its end (or the limit), and one that reports no
/// size (`/proc`, a pipe) is read as before.
pub(crate) fn read_file_at_most(mut file: File, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let bound = limit.saturating_add(1);
    let size = file.metadata().map_or(0, |metadata| metadata.len()).min(bound);
    let mut bytes = vec![0; usize::try_from(size).unwrap_or(0)];
    let mut filled = 0;
    while filled < bytes.len() {
        match file.read(&mut bytes[filled..]) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    bytes.truncate(filled);
    file.take(bound - filled as u64).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_whole_from_the_size_its_metadata_gives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.yaml");
        std::fs::write(&path, "x".repeat(15_000)).unwrap();
        let read = |limit| read_file_at_most(File::open(&path).unwrap(), limit).unwrap();
        assert_eq!(read(15_000).map(|bytes| bytes.len()), Some(15_000));
        assert_eq!(read(14_999), None, "one byte past the limit is refused");
        assert_eq!(read(1 << 20).map(|bytes| bytes.len()), Some(15_000));
        // `/proc` files report no size and are read all the same.
        let status = read_file_at_most(File::open("/proc/self/status").unwrap(), 1 << 20).unwrap().unwrap();
        assert!(String::from_utf8_lossy(&status).contains("\nPid:"));
    }

    #[test]
    fn the_limit_itself_is_read_and_one_byte_more_is_refused() {
        assert_eq!(read_at_most(&b"abc"[..], 3).unwrap(), Some(b"abc".to_vec()));
        assert_eq!(read_at_most(&b"abcd"[..], 3).unwrap(), None);
        assert_eq!(read_at_most(io::repeat(0), 1024).unwrap(), None, "an endless reader stops past the limit");
    }
}
