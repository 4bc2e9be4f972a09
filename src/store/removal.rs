//! Deleting a finished run with everything it made: its workers' worktrees and
//! branches, its task folders, its directory. `baton gc` and the daemon's
//! `DELETE /api/v1/runs/{id}` both go through here. The run's lock is taken first,
//! so a deletion cannot race a `resume`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::model::run_state::RunState;
use crate::process::git;
use crate::store::lock::RunLock;
use crate::store::runs::RunStore;
use crate::transition::task_folder::TaskFolders;

#[derive(Debug, thiserror::Error)]
pub(crate) enum DeleteError {
    #[error("a baton is driving the run")]
    Driven,
    #[error("cannot delete {}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },
}

/// Delete run `id` (whose state is `run`, `None` when it cannot be read); the
/// caller decided it is finished, or beyond repair.
pub(crate) fn delete_run(store: &RunStore, id: &str, run: Option<&RunState>) -> Result<(), DeleteError> {
    let run_dir = store.run_dir(id);
    // A run directory that is a symbolic link is not a run Baton made: only the link
    // goes, and nothing (not even the run's lock) is written where it points.
    if std::fs::symlink_metadata(&run_dir).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
        return std::fs::remove_file(&run_dir).map_err(|source| DeleteError::Io { path: run_dir.clone(), source });
    }
    let Ok(lock) = RunLock::acquire(&run_dir, id) else {
        return Err(DeleteError::Driven);
    };
    // Its workers' worktrees and branches go first, while the run still names them.
    remove_worktrees(store.baton_dir(), id, run);
    // The run's task folders go with it; they are its agents' scratch space.
    let tasks = TaskFolders::new(store.baton_dir(), id);
    match std::fs::remove_dir_all(tasks.root()) {
        Err(source) if source.kind() != std::io::ErrorKind::NotFound => {
            return Err(DeleteError::Io { path: tasks.root().to_path_buf(), source });
        }
        _ => {}
    }
    std::fs::remove_dir_all(&run_dir).map_err(|source| DeleteError::Io { path: run_dir.clone(), source })?;
    drop(lock);
    Ok(())
}

/// Remove run `id`'s worktrees (`.baton/worktrees/<id>/*`) and delete its
/// `baton/<id>/…` branches, in every repository its workers forked from — the ones
/// its state records, and the ones the worktrees left on disk belong to — then
/// prune their worktree records (`docs/isolation.md`). What cannot be removed is
/// reported, and the run is deleted anyway. An unreadable run names none: what is
/// on disk is all there is to go by.
fn remove_worktrees(baton_dir: &Path, id: &str, run: Option<&RunState>) {
    let root = baton_dir.join("worktrees").join(id);
    let recorded = run.into_iter().flat_map(|run| {
        let live = run.agents.iter().filter_map(|agent| agent.worktree.as_ref());
        live.chain(run.terminated.iter().filter_map(|agent| agent.worktree.as_ref()))
    });
    let mut repositories: BTreeSet<PathBuf> =
        recorded.filter_map(|worktree| git::common_dir(&worktree.repo).ok()).collect();
    let entries = std::fs::read_dir(&root).map(|entries| entries.flatten().map(|entry| entry.path()).collect());
    for path in entries.unwrap_or_else(|_| Vec::new()) {
        // A worktree names its repository; a half-made one may not: it is just deleted.
        if path.join(".git").is_file()
            && let Ok(common) = git::common_dir(&path)
        {
            if let Err(error) = git::remove_worktree(&common, &path) {
                eprintln!("cannot remove the worktree {}: {error}", path.display());
            }
            repositories.insert(common);
        }
    }
    match std::fs::remove_dir_all(&root) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            eprintln!("cannot delete {}: {error}", root.display());
        }
        _ => {}
    }
    for common in repositories {
        if let Err(error) = git::delete_branches(&common, &format!("baton/{id}/")) {
            eprintln!("cannot delete the branches baton/{id}/… of {}: {error}", common.display());
        }
    }
}
