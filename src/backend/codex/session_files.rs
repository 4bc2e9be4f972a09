//! Where Codex keeps a thread, to carry it to another machine
//! (`docs/distributed-files.md`).
//!
//! Codex 0.169 writes a thread to one rollout file,
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, found by
//! its thread id wherever the working directory is: `codex exec resume ID` and
//! `codex exec fork ID` look it up by id alone (`thread_usage::rollout_file`). So
//! the file travels under its path relative to `CODEX_HOME` and is installed at
//! the same place under the receiver's `CODEX_HOME`; nothing names the working
//! directory.

use std::path::Path;

use crate::backend::codex::thread_usage::rollout_file;
use crate::backend::session_files::{SessionFile, SessionFilesError, read_files, write_files};
use crate::ids::BackendName;

pub(crate) use crate::backend::codex::thread_usage::codex_home;

/// The rollout file of `thread` under `codex_home` (`_cwd` is not part of
/// Codex's names; kept for the same shape as Claude's and pi's).
pub(crate) fn collect(thread: &str, _cwd: &Path, codex_home: &Path) -> Result<Vec<SessionFile>, SessionFilesError> {
    let not_found = || SessionFilesError::NotFound {
        backend: BackendName::Codex,
        session: thread.to_string(),
        looked_in: codex_home.join("sessions"),
    };
    let path = rollout_file(codex_home, thread).ok_or_else(not_found)?;
    let relative = path.strip_prefix(codex_home).map_err(|_| not_found())?;
    let relative: Vec<String> =
        relative.components().map(|component| component.as_os_str().to_string_lossy().into_owned()).collect();
    read_files(BackendName::Codex, thread, &[(path.clone(), relative.join("/"))])
}

/// Put `files` (from [`collect`] on another machine) where `codex exec resume`
/// with `codex_home` finds them.
pub(crate) fn install(files: &[SessionFile], _cwd: &Path, codex_home: &Path) -> Result<(), SessionFilesError> {
    write_files(codex_home, files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollout_travels_under_its_dated_path() {
        let a = tempfile::tempdir().expect("a");
        let b = tempfile::tempdir().expect("b");
        let day = a.path().join("sessions/2026/11/25");
        std::fs::create_dir_all(&day).expect("day");
        std::fs::write(day.join("rollout-2026-11-25T10-00-00-t-9.jsonl"), "{}\n").expect("rollout");
        let files = collect("t-9", Path::new("/a"), a.path()).expect("collected");
        assert_eq!(files[0].path, "sessions/2026/11/25/rollout-2026-11-25T10-00-00-t-9.jsonl");
        install(&files, Path::new("/b"), b.path()).expect("installed");
        assert_eq!(rollout_file(b.path(), "t-9"), Some(b.path().join(&files[0].path)));
        let error = collect("t-8", Path::new("/a"), a.path()).expect_err("missing");
        assert_eq!(
            error.to_string(),
            format!("codex session `t-8` has no files under {}/sessions", a.path().display())
        );
    }
}
