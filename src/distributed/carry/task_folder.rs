//! An agent's task folder (R8.9, `.baton/tasks/RUN/AGENT`), carried whole to
//! the worker and whole back: it is the agent's own scratch space, small by
//! nature, and no one else writes it while the agent's step runs.

use std::path::{Path, PathBuf};

use crate::backend::session_files::{SessionFile, files_under, write_files};
use crate::bounded_read::read_at_most;

const MIB: u64 = 1024 * 1024;
/// The most a task folder may hold to travel (each way it shares a Restate
/// message, at most 32 MiB, with the step's other files).
pub(crate) const MAX_TASK_FOLDER_BYTES: u64 = 8 * MIB;

#[derive(Debug, thiserror::Error)]
pub(crate) enum TaskFolderError {
    #[error(
        "the task folder {} holds more than the {} MiB a step may carry to a worker; keep large files in the working \
         directory, or run with `--files shared`",
        .dir.display(), MAX_TASK_FOLDER_BYTES / MIB
    )]
    TooLarge { dir: PathBuf },
    #[error("cannot read the task folder {}: {reason}", .dir.display())]
    Unreadable { dir: PathBuf, reason: String },
    #[error("cannot write the task folder {}: {reason}", .dir.display())]
    Unwritable { dir: PathBuf, reason: String },
}

/// Every file of `dir` (none when it does not exist yet).
pub(crate) fn pack(dir: &Path) -> Result<Vec<SessionFile>, TaskFolderError> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let unreadable = |reason: String| TaskFolderError::Unreadable { dir: dir.to_path_buf(), reason };
    let listed = files_under(dir, "").map_err(|error| unreadable(error.to_string()))?;
    let mut total: u64 = 0;
    let mut files = Vec::with_capacity(listed.len());
    for (path, relative) in listed {
        let left = MAX_TASK_FOLDER_BYTES.saturating_sub(total);
        let bytes = std::fs::File::open(&path)
            .and_then(|file| read_at_most(file, left))
            .map_err(|error| unreadable(error.to_string()))?
            .ok_or_else(|| TaskFolderError::TooLarge { dir: dir.to_path_buf() })?;
        total += bytes.len() as u64;
        files.push(SessionFile { path: relative.trim_start_matches('/').to_string(), bytes });
    }
    Ok(files)
}

/// Make `dir` hold exactly `files`: each written, and files not among them
/// removed (the step deleted them).
pub(crate) fn unpack(files: &[SessionFile], dir: &Path) -> Result<(), TaskFolderError> {
    let unwritable = |reason: String| TaskFolderError::Unwritable { dir: dir.to_path_buf(), reason };
    std::fs::create_dir_all(dir).map_err(|error| unwritable(error.to_string()))?;
    write_files(dir, files).map_err(|error| unwritable(error.to_string()))?;
    let kept: std::collections::BTreeSet<&str> = files.iter().map(|file| file.path.as_str()).collect();
    for (path, relative) in files_under(dir, "").map_err(|error| unwritable(error.to_string()))? {
        if !kept.contains(relative.trim_start_matches('/')) {
            std::fs::remove_file(&path).map_err(|error| unwritable(error.to_string()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_folder_travels_whole_and_comes_back_with_deletions() {
        let root = tempfile::tempdir().expect("root");
        let (here, there) = (root.path().join("here/main"), root.path().join("there/main"));
        assert_eq!(pack(&here).expect("none yet"), Vec::new());
        std::fs::create_dir_all(here.join("notes")).expect("mkdir");
        std::fs::write(here.join("plan.md"), "plan").expect("plan");
        std::fs::write(here.join("notes/a.txt"), "a").expect("a");
        unpack(&pack(&here).expect("packed"), &there).expect("unpacked");
        assert_eq!(std::fs::read_to_string(there.join("notes/a.txt")).expect("a"), "a");
        std::fs::remove_file(there.join("plan.md")).expect("step deletes");
        std::fs::write(there.join("result.md"), "done").expect("step writes");
        unpack(&pack(&there).expect("packed back"), &here).expect("back");
        assert!(!here.join("plan.md").exists());
        assert_eq!(std::fs::read_to_string(here.join("result.md")).expect("result"), "done");
    }
}
