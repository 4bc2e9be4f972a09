//! An agent's working directory, carried to a worker and back through git
//! (`docs/distributed-files.md`, "Working directories").
//!
//! The run names a git remote both machines reach (`--repo URL`, else the
//! `origin` of the repository the agent works in). Before a step the
//! coordinator snapshots the agent's working tree as a commit — through a
//! temporary index, so the user's index, `HEAD` and branches are never touched —
//! whose parent is `HEAD`, and pushes it to `refs/heads/baton/RUN/AGENT`
//! ([`ship`]). The worker fetches that branch into its own clone
//! (`<worker dir>/checkouts/RUN/AGENT`), checks the commit out detached
//! ([`check_out`]), runs the step there, snapshots the result the same way
//! (parent: the commit it received) and pushes it back to the same branch
//! ([`send_back`]), with a lease on what it found there: a worker whose step
//! was given up and run again elsewhere cannot overwrite the newer result. The
//! coordinator then fetches the result and writes what the step changed into
//! the working directory ([`bring_back`]) — unless a file the step changed was
//! also changed on the coordinator's side while the step ran: then nothing is
//! written and the error names those files.
//!
//! Git's rules decide what travels: tracked and untracked files do, ignored
//! ones (`.gitignore`, `.git/info/exclude`, `core.excludesFile`) do not, in
//! either direction, and stay where they are. The working tree is bounded
//! ([`MAX_TREE_BYTES`]) before anything is hashed, the biggest files named.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::process::git::{GitError, git_with, head_of};

const MIB: u64 = 1024 * 1024;
/// The most a working tree may hold (files git would carry, together).
pub(crate) const MAX_TREE_BYTES: u64 = 512 * MIB;
/// How many of the biggest files a refusal names.
const BIGGEST_NAMED: usize = 3;

/// What the coordinator sends with a step so the worker can make its working
/// directory: the commit to check out and where it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WorkdirTicket {
    /// The git remote both sides reach (a URL or a path).
    pub(crate) remote: String,
    /// `baton/RUN/AGENT`, a branch of `remote`.
    pub(crate) branch: String,
    /// The snapshot of the working tree the step starts from.
    pub(crate) commit: String,
    /// The agent's working directory relative to the repository's top
    /// (`/`-separated, empty at the top).
    pub(crate) offset: String,
}

/// The worker's copy, made by [`check_out`] and sent back by [`send_back`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Checkout {
    /// The top of the worker's clone.
    pub(crate) toplevel: PathBuf,
    /// Where the step runs: `toplevel` joined with the ticket's offset.
    pub(crate) cwd: PathBuf,
    ticket: WorkdirTicket,
    /// What the branch held when the step started (the ticket's commit, or the
    /// result of an earlier try of the same step).
    found: String,
}

/// Why a working directory cannot travel.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkdirError {
    #[error(
        "`--files shipped` carries the working directory {} through git, and it is not in a git repository with a commit: {source}",
        .dir.display()
    )]
    NotARepository { dir: PathBuf, source: GitError },
    #[error(
        "`--files shipped` needs a git remote both machines reach, and the repository at {} has no `origin`; name one with `--repo URL`",
        .toplevel.display()
    )]
    NoRemote { toplevel: PathBuf },
    #[error(
        "the working directory {} holds {total} bytes that git would carry, more than the {} MiB a step may ship; the biggest: {biggest}. \
         Ignore them in .gitignore, or run with `--files shared`",
        .dir.display(), MAX_TREE_BYTES / MIB
    )]
    TooLarge { dir: PathBuf, total: u64, biggest: String },
    #[error("`{branch}` is not a branch name git accepts (run `{run}`, agent `{agent}`)")]
    BadBranch { branch: String, run: String, agent: String },
    #[error(
        "branch `{branch}` of {remote} holds {found}, which is neither the step's snapshot {expected} nor a result of it: \
         something else pushed to it while the step was on its way"
    )]
    BranchMoved { remote: String, branch: String, expected: String, found: String },
    #[error(
        "branch `{branch}` of {remote} moved on while the step ran on this worker (it was run again elsewhere, or something \
         else pushed to it); this worker's result {result} is not sent back"
    )]
    Superseded { remote: String, branch: String, result: String },
    #[error(transparent)]
    Conflict(Box<Conflict>),
    #[error("cannot {action} {}: {reason}", .path.display())]
    Io { action: &'static str, path: PathBuf, reason: String },
    #[error(transparent)]
    Git(#[from] GitError),
}

/// Files changed on both sides while a step ran on a worker.
#[derive(Debug, thiserror::Error)]
#[error(
    "the step's result cannot be written into {}: {} changed there while the step ran on the worker, and the step changed \
     {} too: {files}. Nothing was overwritten; the step's result is commit {result} on branch `{branch}` of {remote}",
    .dir.display(),
    if .count == &1 { "this file" } else { "these files" },
    if .count == &1 { "it" } else { "them" }
)]
pub(crate) struct Conflict {
    pub(crate) dir: PathBuf,
    pub(crate) count: usize,
    pub(crate) files: String,
    pub(crate) result: String,
    pub(crate) branch: String,
    pub(crate) remote: String,
}

/// The remote a run's working directories travel through: `repo` when the run
/// names one (`--repo URL`), else the `origin` of the repository `cwd` is in.
pub(crate) fn remote_for(cwd: &Path, repo: Option<&str>) -> Result<String, WorkdirError> {
    if let Some(repo) = repo.map(str::trim).filter(|repo| !repo.is_empty()) {
        return Ok(repo.to_string());
    }
    let head = repository(cwd)?;
    git_with(&head.0, &["remote", "get-url", "origin"], &[])
        .ok()
        .filter(|url| !url.is_empty())
        .ok_or(WorkdirError::NoRemote { toplevel: head.0 })
}

/// Coordinator, before a step: snapshot `cwd`'s working tree (parent `HEAD`)
/// and push it to `baton/RUN/AGENT` of `remote`. The coordinator owns the
/// branch between steps, so the push replaces whatever an earlier step left.
pub(crate) fn ship(cwd: &Path, remote: &str, run: &str, agent: &str) -> Result<WorkdirTicket, WorkdirError> {
    let branch = branch_name(run, agent)?;
    let (toplevel, head) = repository(cwd)?;
    let offset = offset_of(cwd, &toplevel);
    let commit = snapshot(&toplevel, &head, Some(&format!("baton: run {run}, agent {agent}, before a step")))?;
    push(&toplevel, remote, &commit, &branch, None)?;
    Ok(WorkdirTicket { remote: remote.to_string(), branch, commit, offset })
}

/// Worker, before the step: fetch the ticket's branch into the clone for this
/// run and agent under `worker_dir` and check the snapshot out detached
/// (files an earlier step left that git does not ignore are removed; ignored
/// ones stay).
pub(crate) fn check_out(worker_dir: &Path, ticket: &WorkdirTicket) -> Result<Checkout, WorkdirError> {
    let toplevel = worker_dir.join("checkouts").join(ticket.branch.trim_start_matches("baton/"));
    if !toplevel.join(".git").exists() {
        std::fs::create_dir_all(&toplevel).map_err(|error| io("make", &toplevel, error))?;
        git_with(&toplevel, &["init", "--quiet"], &[])?;
    }
    let found = fetch(&toplevel, ticket)?;
    if found != ticket.commit {
        let parent = git_with(&toplevel, &["rev-parse", "--verify", "--quiet", &format!("{found}^")], &[]).ok();
        if parent.as_deref() != Some(ticket.commit.as_str()) {
            return Err(moved(ticket, found));
        }
    }
    git_with(&toplevel, &["checkout", "--quiet", "--force", "--detach", &ticket.commit], &[])?;
    git_with(&toplevel, &["clean", "-f", "-d", "--quiet"], &[])?;
    let cwd = if ticket.offset.is_empty() { toplevel.clone() } else { toplevel.join(&ticket.offset) };
    std::fs::create_dir_all(&cwd).map_err(|error| io("make", &cwd, error))?;
    Ok(Checkout { toplevel, cwd, ticket: ticket.clone(), found })
}

/// Worker, after the step: snapshot the clone (parent: the ticket's commit)
/// and push it to the ticket's branch, leased on what [`check_out`] found
/// there. The result commit (the ticket's own when the step changed nothing)
/// goes back in the step's reply.
pub(crate) fn send_back(checkout: &Checkout) -> Result<String, WorkdirError> {
    let ticket = &checkout.ticket;
    let result = snapshot(&checkout.toplevel, &ticket.commit, Some("baton: the step's result"))?;
    if tree_of(&checkout.toplevel, &result)? == tree_of(&checkout.toplevel, &ticket.commit)? {
        return Ok(ticket.commit.clone());
    }
    match push(&checkout.toplevel, &ticket.remote, &result, &ticket.branch, Some(&checkout.found)) {
        Err(WorkdirError::Git(GitError::Failed { stderr, .. })) if stderr.contains("stale info") => {
            Err(WorkdirError::Superseded { remote: ticket.remote.clone(), branch: ticket.branch.clone(), result })
        }
        pushed => pushed.map(|()| result),
    }
}

/// Coordinator, after the step: fetch `result` and write what the step
/// changed into `cwd`'s working tree (its index and `HEAD` untouched). Refused,
/// with nothing written, when a file the step changed was changed in `cwd`
/// too since the ticket's snapshot. The paths written or removed, from the
/// repository's top.
pub(crate) fn bring_back(cwd: &Path, ticket: &WorkdirTicket, result: &str) -> Result<Vec<String>, WorkdirError> {
    if result == ticket.commit {
        return Ok(Vec::new());
    }
    let (toplevel, _) = repository(cwd)?;
    let found = fetch(&toplevel, ticket)?;
    if found != result {
        return Err(moved(ticket, found));
    }
    let theirs = changed_paths(&toplevel, &ticket.commit, result)?;
    let sent_tree = tree_of(&toplevel, &ticket.commit)?;
    let now = snapshot(&toplevel, &ticket.commit, None)?;
    if now != sent_tree {
        let ours = changed_paths(&toplevel, &sent_tree, &now)?;
        let both: Vec<&String> = theirs.iter().filter(|path| ours.contains(path)).collect();
        if !both.is_empty() {
            let files = both.iter().map(|path| format!("`{path}`")).collect::<Vec<_>>().join(", ");
            return Err(WorkdirError::Conflict(Box::new(Conflict {
                dir: cwd.to_path_buf(),
                count: both.len(),
                files,
                result: result.to_string(),
                branch: ticket.branch.clone(),
                remote: ticket.remote.clone(),
            })));
        }
    }
    write_changes(&toplevel, &ticket.commit, result)?;
    Ok(theirs)
}

/// `baton/RUN/AGENT`, checked by git.
fn branch_name(run: &str, agent: &str) -> Result<String, WorkdirError> {
    let branch = format!("baton/{run}/{agent}");
    let checked = git_with(Path::new("."), &["check-ref-format", "--branch", &branch], &[]);
    match checked {
        Ok(_) => Ok(branch),
        Err(_) => Err(WorkdirError::BadBranch { branch, run: run.to_string(), agent: agent.to_string() }),
    }
}

/// The top of the repository `cwd` is in, and its `HEAD`.
fn repository(cwd: &Path) -> Result<(PathBuf, String), WorkdirError> {
    let head = head_of(cwd).map_err(|source| WorkdirError::NotARepository { dir: cwd.to_path_buf(), source })?;
    Ok((head.toplevel, head.commit))
}

fn offset_of(cwd: &Path, toplevel: &Path) -> String {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let toplevel = std::fs::canonicalize(toplevel).unwrap_or_else(|_| toplevel.to_path_buf());
    let offset = cwd.strip_prefix(&toplevel).map(Path::to_path_buf).unwrap_or_default();
    offset.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// Snapshot the working tree of `toplevel` through a temporary index that
/// starts from `base`: with a `message`, a commit whose parent is `base`;
/// without, only the tree.
fn snapshot(toplevel: &Path, base: &str, message: Option<&str>) -> Result<String, WorkdirError> {
    let scratch = tempfile::tempdir().map_err(|error| io("make a temporary index for", toplevel, error))?;
    let index = scratch.path().join("index");
    let env = [("GIT_INDEX_FILE", index.as_os_str())];
    git_with(toplevel, &["read-tree", base], &env)?;
    check_size(toplevel, &env)?;
    git_with(toplevel, &["add", "--all", "--", "."], &env)?;
    let tree = git_with(toplevel, &["write-tree"], &env)?;
    let Some(message) = message else { return Ok(tree) };
    let identity = [
        ("GIT_AUTHOR_NAME", OsStr::new("baton")),
        ("GIT_AUTHOR_EMAIL", OsStr::new("baton@localhost")),
        ("GIT_COMMITTER_NAME", OsStr::new("baton")),
        ("GIT_COMMITTER_EMAIL", OsStr::new("baton@localhost")),
    ];
    Ok(git_with(toplevel, &["commit-tree", &tree, "-p", base, "-m", message], &identity)?)
}

/// Refuse a working tree whose files git would carry (tracked and untracked,
/// not ignored) exceed [`MAX_TREE_BYTES`], before any of them is hashed.
fn check_size(toplevel: &Path, env: &[(&str, &OsStr)]) -> Result<(), WorkdirError> {
    let listing = git_with(toplevel, &["ls-files", "-z", "--cached", "--others", "--exclude-standard"], env)?;
    let mut sizes: Vec<(u64, &str)> = listing
        .split('\0')
        .filter(|path| !path.is_empty())
        .filter_map(|path| std::fs::symlink_metadata(toplevel.join(path)).ok().map(|meta| (meta.len(), path)))
        .collect();
    let total: u64 = sizes.iter().map(|(size, _)| size).sum();
    if total <= MAX_TREE_BYTES {
        return Ok(());
    }
    sizes.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let biggest = sizes
        .iter()
        .take(BIGGEST_NAMED)
        .map(|(size, path)| match *size {
            size if size < MIB => format!("`{path}` ({size} bytes)"),
            size => format!("`{path}` ({} MiB)", size.div_ceil(MIB)),
        })
        .collect::<Vec<_>>()
        .join(", ");
    Err(WorkdirError::TooLarge { dir: toplevel.to_path_buf(), total, biggest })
}

/// Push `commit` to `branch` of `remote`: replacing it (the coordinator), or
/// leased on `expected` (a worker).
fn push(toplevel: &Path, remote: &str, commit: &str, branch: &str, expected: Option<&str>) -> Result<(), WorkdirError> {
    let target = format!("refs/heads/{branch}");
    // A `+` would force the push past the lease too.
    let refspec = if expected.is_some() { format!("{commit}:{target}") } else { format!("+{commit}:{target}") };
    let lease = expected.map(|expected| format!("--force-with-lease={target}:{expected}"));
    let mut args = vec!["push", "--quiet", "--no-verify"];
    args.extend(lease.as_deref());
    args.extend([remote, refspec.as_str()]);
    git_with(toplevel, &args, &[])?;
    Ok(())
}

/// Fetch the ticket's branch (objects only: no ref or `FETCH_HEAD` of the
/// repository changes) and say which commit it holds.
fn fetch(toplevel: &Path, ticket: &WorkdirTicket) -> Result<String, WorkdirError> {
    let source = format!("refs/heads/{}", ticket.branch);
    let listed = git_with(toplevel, &["ls-remote", &ticket.remote, &source], &[])?;
    let found = listed.split_whitespace().next().unwrap_or_default().to_string();
    if found.is_empty() {
        return Err(moved(ticket, "nothing".to_string()));
    }
    git_with(toplevel, &["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", &ticket.remote, &source], &[])?;
    Ok(found)
}

fn moved(ticket: &WorkdirTicket, found: String) -> WorkdirError {
    WorkdirError::BranchMoved {
        remote: ticket.remote.clone(),
        branch: ticket.branch.clone(),
        expected: ticket.commit.clone(),
        found,
    }
}

fn tree_of(toplevel: &Path, commit: &str) -> Result<String, WorkdirError> {
    Ok(git_with(toplevel, &["rev-parse", "--verify", &format!("{commit}^{{tree}}")], &[])?)
}

/// The paths that differ between two trees (or commits), from the top.
fn changed_paths(toplevel: &Path, from: &str, to: &str) -> Result<Vec<String>, WorkdirError> {
    let listing = git_with(toplevel, &["diff", "--name-only", "-z", "--no-renames", from, to], &[])?;
    Ok(listing.split('\0').filter(|path| !path.is_empty()).map(str::to_string).collect())
}

/// Write the difference between `from` and `to` into the working tree of
/// `toplevel`: deleted files removed, the others checked out of `to` through a
/// temporary index.
fn write_changes(toplevel: &Path, from: &str, to: &str) -> Result<(), WorkdirError> {
    let listing = git_with(toplevel, &["diff", "--name-status", "-z", "--no-renames", from, to], &[])?;
    let mut fields = listing.split('\0').filter(|field| !field.is_empty());
    let (mut written, mut deleted) = (Vec::new(), Vec::new());
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        if status == "D" { deleted.push(path) } else { written.push(path) }
    }
    for path in deleted {
        let file = toplevel.join(path);
        match std::fs::remove_file(&file) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => return Err(io("remove", &file, error)),
            _ => remove_empty_parents(toplevel, &file),
        }
    }
    if written.is_empty() {
        return Ok(());
    }
    let scratch = tempfile::tempdir().map_err(|error| io("make a temporary index for", toplevel, error))?;
    let index = scratch.path().join("index");
    let env = [("GIT_INDEX_FILE", index.as_os_str())];
    git_with(toplevel, &["read-tree", to], &env)?;
    for chunk in written.chunks(500) {
        let mut args = vec!["checkout-index", "--force", "--quiet", "--"];
        args.extend(chunk.iter().copied());
        git_with(toplevel, &args, &env)?;
    }
    Ok(())
}

/// Remove the folders a deleted file leaves empty, up to (not including) `top`.
fn remove_empty_parents(top: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(current) = dir.filter(|current| *current != top && current.starts_with(top)) {
        if std::fs::remove_dir(current).is_err() {
            break;
        }
        dir = current.parent();
    }
}

fn io(action: &'static str, path: &Path, error: std::io::Error) -> WorkdirError {
    WorkdirError::Io { action, path: path.to_path_buf(), reason: error.to_string() }
}

#[cfg(test)]
mod tests;
