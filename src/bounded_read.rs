//! Reading a file, a pipe or an archive entry to its end, but never past a limit.
//! Every input a hostile user controls and Baton reads whole is bounded this way
//! (`--input-file`, a YAML workflow or manifest, a zip archive and each entry it
//! inflates): a size that metadata or a header declares can lie, and `/dev/zero`
//! declares none, so the bound is on what is read.

use std::io::{self, Read};

/// Read `reader` to its end if that is at most `limit` bytes; `None` when there is
/// more (one byte past the limit is read to tell, and nothing further).
pub(crate) fn read_at_most(reader: impl Read, limit: u64) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    reader.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_itself_is_read_and_one_byte_more_is_refused() {
        assert_eq!(read_at_most(&b"abc"[..], 3).unwrap(), Some(b"abc".to_vec()));
        assert_eq!(read_at_most(&b"abcd"[..], 3).unwrap(), None);
        assert_eq!(read_at_most(io::repeat(0), 1024).unwrap(), None, "an endless reader stops past the limit");
    }
}
