//! The git calls of worktree isolation (`docs/isolation.md`), all in one place:
//! real `git` through `std::process::Command`, never a library, so Baton reads and
//! writes repositories exactly as the user's git does.
//!
//! Every call clears the variables that would point git elsewhere (`GIT_DIR`, …),
//! so a Baton started from a git hook still works on the repository it is given.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Why a git call failed, with what it was doing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GitError {
    #[error("git cannot be run (is it installed?): {source}")]
    NotInstalled { source: std::io::Error },
    #[error("{} is not in a git repository", dir.display())]
    NotARepository { dir: PathBuf },
    #[error("the repository at {} has no commit yet (HEAD does not resolve)", dir.display())]
    NoCommit { dir: PathBuf },
    #[error("`git {args}` failed in {}: {stderr}", dir.display())]
    Failed { args: String, dir: PathBuf, stderr: String },
}

/// The repository containing a directory, and the commit its `HEAD` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RepoHead {
    /// The top of the working tree (`git rev-parse --show-toplevel`).
    pub(crate) toplevel: PathBuf,
    /// The full hash of `HEAD`.
    pub(crate) commit: String,
}

/// Run `git -C dir ARGS`; its stdout (trimmed at the end) when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    git_with(dir, args, &[])
}

/// [`git`] with variables of its own set after the clearing (a temporary
/// `GIT_INDEX_FILE`, a committer): `distributed::carry::workdir`'s snapshots.
pub(crate) fn git_with(dir: &Path, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Result<String, GitError> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_COMMON_DIR")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| GitError::NotInstalled { source })?;
    if output.status.success() {
        return Ok(String::from_utf8_lossy(&output.stdout).trim_end().to_string());
    }
    let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
    if stderr.contains("not a git repository") {
        return Err(GitError::NotARepository { dir: dir.to_path_buf() });
    }
    Err(GitError::Failed { args: args.join(" "), dir: dir.to_path_buf(), stderr })
}

/// The repository containing `dir` and its current `HEAD`.
pub(crate) fn head_of(dir: &Path) -> Result<RepoHead, GitError> {
    let toplevel = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?);
    let commit = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        .map_err(|_| GitError::NoCommit { dir: toplevel.clone() })?;
    Ok(RepoHead { toplevel, commit })
}

/// Make sure `path` is a complete worktree of `repo` on `branch`, creating it at
/// `base` when it is not: idempotent, and safe after a crash at any point of an
/// earlier attempt. A worktree git lists (and not as still `initializing`) is kept
/// as it is; anything else at `path` — a directory git does not know, one a killed
/// `git worktree add` left half made — is removed, and the worktree made afresh
/// (the branch reset to `base`: no step has run in it yet).
///
/// `git worktree add` is not safe to run concurrently in one repository (it reads the
/// other worktrees' records, which a concurrent add may have half written), so this
/// Baton makes its worktrees one at a time, and tries again (three times in all) when
/// git fails, for another process working on the same repository. `repo` was a
/// repository when the fork was made, so git saying "not a git repository" here is
/// such a collision too (git names the half-written record, not `repo`).
///
/// A Baton killed while its `git worktree add` ran does not kill git, which finishes
/// on its own beside the resume. So a worktree still being made (git's own
/// `initializing` lock, younger than [`ADD_IN_PROGRESS`]) is waited for, and kept once
/// complete: it is the same branch at the same base.
pub(crate) fn ensure_worktree(repo: &Path, path: &Path, branch: &str, base: &str) -> Result<(), GitError> {
    let _turn = one_at_a_time();
    let mut attempt = 1;
    loop {
        match check_or_make(repo, path, branch, base) {
            Err(GitError::Failed { .. } | GitError::NotARepository { .. }) if attempt < 3 => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            outcome => return outcome,
        }
    }
}

/// This Baton's turn to change worktrees (their records are shared by the repository).
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// How long a `git worktree add` that another process started may still be running:
/// its lock is left alone until it is this old.
const ADD_IN_PROGRESS: std::time::Duration = std::time::Duration::from_secs(10);

/// The age of the `initializing` lock of the worktree at `path`, if git is making it:
/// the lock is in the record (in `records`, `<common dir>/worktrees/`) whose `gitdir`
/// names `path/.git`, which git writes before the worktree's own `.git`.
fn being_made(records: &Path, path: &Path) -> Option<std::time::Duration> {
    let wanted = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()).join(".git");
    for record in std::fs::read_dir(records).ok()?.flatten() {
        let Ok(gitdir) = std::fs::read_to_string(record.path().join("gitdir")) else { continue };
        let gitdir = PathBuf::from(gitdir.trim());
        let gitdir = gitdir
            .parent()
            .and_then(|dir| std::fs::canonicalize(dir).ok())
            .map_or(gitdir.clone(), |dir| dir.join(".git"));
        if gitdir != wanted && gitdir != path.join(".git") {
            continue;
        }
        let lock = record.path().join("locked");
        if std::fs::read_to_string(&lock).ok()?.trim() != "initializing" {
            return None;
        }
        let modified = std::fs::metadata(&lock).ok()?.modified().ok()?;
        return Some(modified.elapsed().unwrap_or(std::time::Duration::ZERO));
    }
    None
}

fn check_or_make(repo: &Path, path: &Path, branch: &str, base: &str) -> Result<(), GitError> {
    let path_text = path.to_string_lossy();
    let mut listing = listed(repo, path)?;
    if let Some(common) = matches!(listing, Listed::Incomplete).then(|| common_dir(repo)).and_then(Result::ok) {
        let records = common.join("worktrees");
        while matches!(listing, Listed::Incomplete)
            && being_made(&records, path).is_some_and(|age| age < ADD_IN_PROGRESS)
        {
            std::thread::sleep(std::time::Duration::from_millis(50));
            listing = listed(repo, path)?;
        }
    }
    match listing {
        Listed::Complete if path.join(".git").is_file() => return Ok(()),
        // Leftovers of an interrupted attempt, or a worktree whose files are gone.
        Listed::Complete | Listed::Incomplete => {
            let _ = git(repo, &["worktree", "remove", "--force", "--force", &path_text]);
            remove_dir(path)?;
            git(repo, &["worktree", "prune"])?;
        }
        // Nothing git knows; a directory there is not a worktree.
        Listed::No => remove_dir(path)?,
    }
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    git(repo, &["worktree", "add", "--quiet", "-B", branch, &path_text, base])?;
    Ok(())
}

fn remove_dir(path: &Path) -> Result<(), GitError> {
    match std::fs::remove_dir_all(path) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(GitError::Failed {
            args: "worktree add (removing what is in the way)".to_string(),
            dir: path.to_path_buf(),
            stderr: error.to_string(),
        }),
        _ => Ok(()),
    }
}

/// How git lists `path` among `repo`'s worktrees.
enum Listed {
    No,
    /// Listed, and not locked or prunable.
    Complete,
    /// Locked (a `git worktree add` that did not finish leaves it `initializing`) or prunable.
    Incomplete,
}

fn listed(repo: &Path, path: &Path) -> Result<Listed, GitError> {
    let listing = git(repo, &["worktree", "list", "--porcelain"])?;
    let wanted = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    for entry in listing.split("\n\n") {
        let Some(listed) = entry.lines().next().and_then(|line| line.strip_prefix("worktree ")) else { continue };
        let listed = std::fs::canonicalize(listed).unwrap_or_else(|_| PathBuf::from(listed));
        if listed == wanted || Path::new(&listed) == path {
            let incomplete = entry.lines().any(|line| line.starts_with("locked") || line.starts_with("prunable"));
            return Ok(if incomplete { Listed::Incomplete } else { Listed::Complete });
        }
    }
    Ok(Listed::No)
}

/// Commit everything in the worktree at `path` (new, changed and deleted files) as
/// Baton, with `message`; nothing when there is nothing to commit. Hooks are not
/// run, and the commit is never signed: it is Baton's, not the user's.
pub(crate) fn commit_all(path: &Path, message: &str) -> Result<(), GitError> {
    let _turn = one_at_a_time();
    git(path, &["add", "-A"])?;
    if git(path, &["diff", "--cached", "--quiet"]).is_ok() {
        return Ok(());
    }
    git(
        path,
        &[
            "-c",
            "user.name=baton",
            "-c",
            "user.email=baton@localhost",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            message,
        ],
    )?;
    Ok(())
}

/// `git diff --stat BASE HEAD` in the worktree at `path`: what its branch changed.
pub(crate) fn diff_stat(path: &Path, base: &str) -> Result<String, GitError> {
    git(path, &["diff", "--stat", base, "HEAD"])
}

/// The repository (its common git directory, absolute) that `dir` belongs to.
pub(crate) fn common_dir(dir: &Path) -> Result<PathBuf, GitError> {
    let common = PathBuf::from(git(dir, &["rev-parse", "--path-format=absolute", "--git-common-dir"])?);
    Ok(common)
}

/// Remove the worktree at `path` from the repository whose common directory is
/// `common` (its files too, changes or not).
pub(crate) fn remove_worktree(common: &Path, path: &Path) -> Result<(), GitError> {
    git(common, &["worktree", "remove", "--force", "--force", &path.to_string_lossy()]).map(drop)
}

/// Delete every branch under `prefix` (`baton/<run>/`) of the repository whose
/// common directory is `common`, then prune its worktree records.
pub(crate) fn delete_branches(common: &Path, prefix: &str) -> Result<(), GitError> {
    let pattern = format!("refs/heads/{prefix}");
    let branches = git(common, &["for-each-ref", "--format=%(refname:short)", &pattern])?;
    git(common, &["worktree", "prune"])?;
    for branch in branches.lines().filter(|line| !line.is_empty()) {
        git(common, &["branch", "--quiet", "-D", branch])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repository() -> (tempfile::TempDir, RepoHead) {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "--quiet"]).unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        git(dir.path(), &["add", "-A"]).unwrap();
        git(dir.path(), &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "a"]).unwrap();
        let head = head_of(dir.path()).unwrap();
        (dir, head)
    }

    #[test]
    fn ensure_worktree_is_idempotent_and_replaces_a_half_made_one() {
        let (dir, head) = repository();
        let path = dir.path().join("wt/one");
        // A directory git does not know, as a crash before `git worktree add` finished could leave.
        std::fs::create_dir_all(&path).unwrap();
        std::fs::write(path.join("junk"), "x").unwrap();
        ensure_worktree(&head.toplevel, &path, "baton/r/one", &head.commit).unwrap();
        assert!(!path.join("junk").exists());
        assert_eq!(std::fs::read_to_string(path.join("a.txt")).unwrap(), "a\n");
        // A complete one is kept as it is, changes included.
        std::fs::write(path.join("b.txt"), "b\n").unwrap();
        ensure_worktree(&head.toplevel, &path, "baton/r/one", &head.commit).unwrap();
        assert!(path.join("b.txt").exists());
        // One git lists as still being made (locked "initializing") long ago, by a git
        // that was killed, is made again.
        let admin = common_dir(&path).unwrap().join("worktrees/one/locked");
        std::fs::write(&admin, "initializing").unwrap();
        let long_ago = std::time::SystemTime::now() - ADD_IN_PROGRESS - std::time::Duration::from_secs(1);
        std::fs::File::options().write(true).open(&admin).unwrap().set_modified(long_ago).unwrap();
        ensure_worktree(&head.toplevel, &path, "baton/r/one", &head.commit).unwrap();
        assert!(!path.join("b.txt").exists());
        commit_all(&path, "m").unwrap();
        assert_eq!(diff_stat(&path, &head.commit).unwrap(), "");
        std::fs::write(path.join("c.txt"), "c\n").unwrap();
        commit_all(&path, "m").unwrap();
        assert!(diff_stat(&path, &head.commit).unwrap().contains("c.txt | 1 +"));
        // One git lists whose files are gone is made again.
        std::fs::remove_dir_all(&path).unwrap();
        ensure_worktree(&head.toplevel, &path, "baton/r/one", &head.commit).unwrap();
        assert_eq!(std::fs::read_to_string(path.join("a.txt")).unwrap(), "a\n");
        let common = common_dir(dir.path()).unwrap();
        remove_worktree(&common, &path).unwrap();
        delete_branches(&common, "baton/r/").unwrap();
        assert_eq!(git(dir.path(), &["branch", "--list", "baton/*"]).unwrap(), "");
    }

    /// Regression: CI once saw a resume pause a worker with "… is not in a git
    /// repository". Its Baton had been SIGKILLed while `git worktree add` ran; git
    /// went on, and the resume removed the worktree it was making, under it.
    #[test]
    fn a_worktree_another_git_is_still_making_is_waited_for_and_kept() {
        let (dir, head) = repository();
        let path = dir.path().join("wt/two");
        ensure_worktree(&head.toplevel, &path, "baton/r/two", &head.commit).unwrap();
        std::fs::write(path.join("b.txt"), "b\n").unwrap();
        // As `git worktree add` leaves it until its checkout is done.
        let lock = common_dir(&path).unwrap().join("worktrees/two/locked");
        std::fs::write(&lock, "initializing").unwrap();
        let finisher = {
            let lock = lock.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(300));
                std::fs::remove_file(lock).unwrap();
            })
        };
        let started = std::time::Instant::now();
        ensure_worktree(&head.toplevel, &path, "baton/r/two", &head.commit).unwrap();
        finisher.join().unwrap();
        assert!(started.elapsed() >= std::time::Duration::from_millis(300), "waited for the other git");
        assert!(path.join("b.txt").exists(), "kept, not made again");
    }

    #[test]
    fn head_of_outside_a_repository_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let error = head_of(dir.path()).unwrap_err();
        assert_eq!(error.to_string(), format!("{} is not in a git repository", dir.path().display()));
    }
}
