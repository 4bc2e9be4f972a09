//! Finding programs: one `PATH` search, done once by the caller and kept.
//! Spawning by bare name would repeat the search — several failing `execve`
//! calls — for every step.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Whether `path` is a regular file someone may execute.
pub(crate) fn is_executable(path: &Path) -> bool {
    path.metadata().is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The first executable `name` in the directories of `PATH`.
pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|directory| directory.join(name)).find(|candidate| is_executable(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_but_not_a_missing_program() {
        assert!(find_on_path("sh").is_some_and(|found| found.is_absolute()));
        assert_eq!(find_on_path("baton-no-such-program"), None);
    }

    #[test]
    fn a_directory_is_not_executable() {
        assert!(!is_executable(Path::new("/")));
    }
}
