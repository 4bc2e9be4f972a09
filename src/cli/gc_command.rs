//! `baton gc [--older-than AGE] [--keep N] [--dry-run]`: runs are kept (A9)
//! until this prunes them. Only finished runs — completed or failed — are
//! deleted, with their task folders; a run that can still go on (running, paused, interrupted, asking)
//! is never touched, and a run some baton drives right now is skipped: each
//! deletion first takes the run's lock, so it cannot race a `resume`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::CliError;
use super::arguments::GcArguments;
use super::list_command::runs_in_order;
use crate::model::run_state::{RunState, RunStatus};
use crate::process::git;
use crate::store::lock::RunLock;
use crate::store::runs::RunStore;
use crate::text::duration::parse_duration;
use crate::transition::task_folder::TaskFolders;

const DEFAULT_AGE: Duration = Duration::from_secs(30 * 86400);

pub(crate) fn gc(store: &RunStore, arguments: &GcArguments) -> Result<i32, CliError> {
    let older_than = match (&arguments.older_than, arguments.keep) {
        (Some(text), _) => Some(parse_duration(text).map_err(|error| CliError::InvalidValue {
            flag: "older-than",
            value: text.clone(),
            expected: error.to_string(),
        })?),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_AGE),
    };
    let now = jiff::Timestamp::now();
    let finished: Vec<(String, RunState)> = runs_in_order(store)
        .into_iter()
        .filter_map(|(id, run)| {
            let run = run.ok()?;
            matches!(run.status, RunStatus::Completed | RunStatus::Failed).then_some((id, run))
        })
        .collect();
    // Newest first, so `--keep N` keeps the first N.
    let kept = arguments.keep.unwrap_or(0);
    let mut doomed: Vec<(&String, &RunState)> = Vec::new();
    for (index, (id, run)) in finished.iter().rev().enumerate() {
        let updated_at = &run.updated_at;
        let old_enough = older_than.is_none_or(|age| {
            updated_at.parse::<jiff::Timestamp>().is_ok_and(|updated| {
                now.as_second().saturating_sub(updated.as_second()) >= i64::try_from(age.as_secs()).unwrap_or(i64::MAX)
            })
        });
        if index >= kept && old_enough {
            doomed.push((id, run));
        }
    }
    let mut stdout = std::io::stdout().lock();
    let mut removed = 0;
    for (id, run) in doomed {
        let run_dir = store.run_dir(id);
        if arguments.dry_run {
            if RunLock::holder(&run_dir).is_none() {
                writeln!(stdout, "would delete {id}").map_err(|source| CliError::Stdout { source })?;
                removed += 1;
            }
            continue;
        }
        let Ok(lock) = RunLock::acquire(&run_dir, id) else {
            eprintln!("skipped {id}: a baton is driving it");
            continue;
        };
        // Its workers' worktrees and branches go first, while the run still names them.
        remove_worktrees(store.baton_dir(), id, run);
        // The run's task folders go with it; they are its agents' scratch space.
        let tasks = TaskFolders::new(store.baton_dir(), id);
        let removed_tasks = match std::fs::remove_dir_all(tasks.root()) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
            _ => Ok(()),
        };
        match removed_tasks.and_then(|()| std::fs::remove_dir_all(&run_dir)) {
            Ok(()) => {
                removed += 1;
                writeln!(stdout, "deleted {id}").map_err(|source| CliError::Stdout { source })?;
            }
            Err(error) => eprintln!("cannot delete {}: {error}", run_dir.display()),
        }
        drop(lock);
    }
    let verb = if arguments.dry_run { "would delete" } else { "deleted" };
    eprintln!("{verb} {removed} of {} finished runs", finished.len());
    Ok(0)
}

/// Remove run `id`'s worktrees (`.baton/worktrees/<id>/*`) and delete its
/// `baton/<id>/…` branches, in every repository its workers forked from — the ones
/// its state records, and the ones the worktrees left on disk belong to — then
/// prune their worktree records (`docs/isolation.md`). What cannot be removed is
/// reported, and the run is deleted anyway.
fn remove_worktrees(baton_dir: &Path, id: &str, run: &RunState) {
    let root = baton_dir.join("worktrees").join(id);
    let recorded = run.agents.iter().filter_map(|agent| agent.worktree.as_ref());
    let recorded = recorded.chain(run.terminated.iter().filter_map(|agent| agent.worktree.as_ref()));
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
