//! Creating the `.baton` directory. It holds runs, traces, worktrees and the daemon's
//! token: nothing a user means to commit. So, as Cargo does for `target/` and Python
//! for `__pycache__/`, the directory ignores itself: Baton writes `.baton/.gitignore`
//! (`*`) when it creates the folder, and a `git add -A` in the user's repository
//! leaves it out. Only when it creates the folder: a `.baton` that exists already is
//! the user's to arrange (they may have removed the file on purpose to commit
//! `config.toml`), and an existing `.gitignore` is never overwritten.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

pub(crate) const GITIGNORE: &str = ".gitignore";
const GITIGNORE_TEXT: &str = "# Written by Baton: runs, traces and worktrees are not for committing.\n*\n";

/// Make sure `baton_dir` exists; when this call creates it, write its `.gitignore`.
pub(crate) fn create_baton_dir(baton_dir: &Path) -> io::Result<()> {
    if baton_dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = baton_dir.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    match fs::create_dir(baton_dir) {
        Ok(()) => write_gitignore(baton_dir),
        // Another process made it first; that one writes the file.
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists && baton_dir.is_dir() => Ok(()),
        Err(error) => Err(error),
    }
}

fn write_gitignore(baton_dir: &Path) -> io::Result<()> {
    match fs::OpenOptions::new().write(true).create_new(true).open(baton_dir.join(GITIGNORE)) {
        Ok(mut file) => file.write_all(GITIGNORE_TEXT.as_bytes()),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_baton_dir_ignores_itself() {
        let root = tempfile::tempdir().expect("tempdir");
        let baton_dir = root.path().join("project/.baton");
        create_baton_dir(&baton_dir).expect("create");
        assert_eq!(fs::read_to_string(baton_dir.join(GITIGNORE)).expect("read"), GITIGNORE_TEXT);
    }

    #[test]
    fn an_existing_baton_dir_is_left_as_it_is() {
        let root = tempfile::tempdir().expect("tempdir");
        let baton_dir = root.path().join(".baton");
        fs::create_dir(&baton_dir).expect("mkdir");
        create_baton_dir(&baton_dir).expect("create");
        assert!(!baton_dir.join(GITIGNORE).exists());
    }

    #[test]
    fn a_baton_dir_that_is_a_file_is_an_error() {
        let root = tempfile::tempdir().expect("tempdir");
        let baton_dir = root.path().join(".baton");
        fs::write(&baton_dir, "").expect("write");
        assert_eq!(create_baton_dir(&baton_dir).expect_err("a file").kind(), io::ErrorKind::AlreadyExists);
    }
}
