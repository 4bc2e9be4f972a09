//! A full disk, said precisely: how much the failed write needed and how much
//! its file system has left (the caller names the file).

use std::io;
use std::path::Path;

/// The facts of a write that failed for lack of space.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the disk is full: the write needed {needed} bytes and its file system has {} free",
    free.map_or_else(|| "an unknown number of bytes".to_string(), |free| free.to_string())
)]
pub(crate) struct DiskFull {
    pub(crate) needed: u64,
    pub(crate) free: Option<u64>,
}

impl DiskFull {
    /// `Some` when `error`, writing `needed` bytes to `path`, failed because the
    /// disk or the user's quota is full.
    pub(crate) fn of(error: &io::Error, path: &Path, needed: u64) -> Option<DiskFull> {
        if !matches!(error.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) {
            return None;
        }
        Some(DiskFull { needed, free: free_bytes(path.parent()?) })
    }
}

/// Bytes an unprivileged process may still write on the file system of `path`.
fn free_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct we own; the path is a valid C string.
    unsafe {
        let mut stat: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(path.as_ptr(), &mut stat) == 0).then(|| stat.f_bavail.saturating_mul(stat.f_frsize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lack_of_space_is_a_full_disk() {
        let path = Path::new("/tmp/runs/r1/journal.jsonl");
        let full = DiskFull::of(&io::Error::from_raw_os_error(libc::ENOSPC), path, 120).expect("full");
        assert_eq!(full.needed, 120);
        assert!(DiskFull::of(&io::Error::from_raw_os_error(libc::EACCES), path, 120).is_none());
        let message = DiskFull { needed: 120, free: Some(0) }.to_string();
        assert_eq!(message, "the disk is full: the write needed 120 bytes and its file system has 0 free");
    }

    #[test]
    fn free_space_is_read() {
        assert!(free_bytes(Path::new("/")).is_some());
    }
}
