//! `--files shipped`, step by step: the four calls the step protocol makes,
//! two on each side, and what travels between them (`docs/distributed-files.md`).
//!
//! 1. Coordinator, before sending a step: [`prepare`] — packs the workflows,
//!    pushes a snapshot of the agent's working directory, packs its task folder
//!    and collects the sessions the step may continue or fork. A session that
//!    cannot travel is left out with a notice: the protocol then clears it from
//!    the agent so the step starts a fresh conversation rather than failing.
//! 2. Worker, before running it: [`materialise`] — unpacks the workflows (once
//!    per bundle), checks the working directory out, writes the task folder and
//!    installs the sessions; the [`Workspace`]'s maps turn the request's paths
//!    into the worker's.
//! 3. Worker, after the step: [`send_back`] — pushes the working directory's
//!    result, packs the task folder and collects the sessions the step left.
//! 4. Coordinator, on the reply: [`receive`] — writes the step's changes into
//!    the working directory (refused by name if a file changed on both sides),
//!    the task folder, and installs the sessions, so the next step, on any
//!    worker, continues them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backend::session_files::{SessionFile, SessionFilesError};
use crate::distributed::carry::session::{self, ShippedSession};
use crate::distributed::carry::task_folder::{self, TaskFolderError};
use crate::distributed::carry::workdir::{self, Checkout, WorkdirError, WorkdirTicket};
use crate::distributed::carry::workflow_bundle::{self, BundleError, PathMap, WorkflowBundle};
use crate::ids::BackendName;
use crate::process::git::GitError;

const MIB: usize = 1024 * 1024;
/// The most a request's shipped files may take as JSON, and a reply's: Restate
/// journals both and refuses a message over 32 MiB (a reply over it is retried
/// forever), and the request's other fields and the reply's events (8 MiB) need
/// room too. Sessions are left out first (the conversation starts afresh).
pub(crate) const MAX_REQUEST_FILES_JSON: usize = 24 * MIB;
pub(crate) const MAX_REPLY_FILES_JSON: usize = 16 * MIB;

/// What a step request carries in `--files shipped` (`Files::Shipped`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ShippedFiles {
    pub(crate) workflows: WorkflowBundle,
    pub(crate) workdir: WorkdirTicket,
    /// The top of the coordinator's repository, which the worker's checkout stands for.
    pub(crate) coordinator_toplevel: PathBuf,
    /// The agent's task folder on the coordinator, and its files.
    pub(crate) task_folder: PathBuf,
    pub(crate) task_files: Vec<SessionFile>,
    pub(crate) sessions: Vec<ShippedSession>,
}

/// What a step reply carries back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ShippedBack {
    /// The working directory's result (the ticket's own commit when the step changed nothing).
    pub(crate) workdir_commit: String,
    pub(crate) task_files: Vec<SessionFile>,
    pub(crate) sessions: Vec<ShippedSession>,
    /// Sessions that could not come back (the next turn starts afresh), worded.
    pub(crate) notices: Vec<String>,
}

/// What [`prepare`] needs of the step.
pub(crate) struct Outgoing<'a> {
    pub(crate) run_id: &'a str,
    pub(crate) agent_id: &'a str,
    /// The agent's scope, working directory and task folder, on the coordinator.
    pub(crate) scope: &'a Path,
    pub(crate) cwd: &'a Path,
    pub(crate) task_folder: &'a Path,
    /// The run's git remote (`workdir::remote_for`).
    pub(crate) remote: &'a str,
    /// The sessions the step may continue or fork (`session_id`, `fork_session_id`) and their backend.
    pub(crate) sessions: &'a [(BackendName, String)],
    pub(crate) step_env: &'a BTreeMap<String, String>,
}

/// A step's files, ready to send; `dropped` are the sessions left out (clear
/// them from the agent), each with its notice in `notices`.
pub(crate) struct Prepared {
    pub(crate) files: ShippedFiles,
    pub(crate) dropped: Vec<String>,
    pub(crate) notices: Vec<String>,
}

/// The worker's side of a step: where everything is.
pub(crate) struct Workspace {
    /// Scopes: coordinator ⇄ worker.
    pub(crate) workflows: PathMap,
    /// The repository: coordinator's top ⇄ worker's checkout.
    pub(crate) workdir: PathMap,
    /// The task folder: coordinator's ⇄ worker's.
    pub(crate) task_folder: PathMap,
    /// The agent's working directory on the worker.
    pub(crate) cwd: PathBuf,
    checkout: Checkout,
}

/// What [`receive`] did: the paths of the working directory the step changed.
pub(crate) struct Received {
    pub(crate) changed: Vec<String>,
    pub(crate) notices: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum CarryError {
    #[error(transparent)]
    Workflows(#[from] BundleError),
    #[error(transparent)]
    Workdir(#[from] WorkdirError),
    #[error(transparent)]
    TaskFolder(#[from] TaskFolderError),
    #[error(transparent)]
    Session(#[from] SessionFilesError),
    #[error(
        "the files a step carries {direction} are {size} bytes as JSON, more than the {} MiB a Restate message may \
         hold with the rest of the step; run with `--files shared`, or keep less in the task folder",
        .limit / MIB
    )]
    TooLarge { direction: &'static str, size: usize, limit: usize },
}

impl CarryError {
    /// Whether trying again may succeed (a git remote or a disk that was not
    /// there a moment ago); the rest needs the user (a conflict, a bound, a
    /// missing remote) and pauses the agent.
    pub(crate) fn is_retryable(&self) -> bool {
        matches!(
            self,
            CarryError::Workdir(WorkdirError::Git(GitError::Failed { .. }) | WorkdirError::Io { .. })
                | CarryError::Workflows(BundleError::Unpack { .. })
                | CarryError::Session(SessionFilesError::Install { .. })
                | CarryError::TaskFolder(TaskFolderError::Unwritable { .. })
        )
    }
}

/// Step 1, on the coordinator before the step is sent.
pub(crate) fn prepare(step: &Outgoing<'_>) -> Result<Prepared, CarryError> {
    let workflows = workflow_bundle::pack(step.scope)?;
    let workdir = workdir::ship(step.cwd, step.remote, step.run_id, step.agent_id)?;
    let coordinator_toplevel = crate::process::git::head_of(step.cwd).map_err(WorkdirError::from)?.toplevel;
    let task_files = task_folder::pack(step.task_folder)?;
    let (mut sessions, mut dropped, mut notices) = (Vec::new(), Vec::new(), Vec::new());
    for (backend, id) in step.sessions {
        match session::collect(*backend, id, step.cwd, step.step_env) {
            Ok(shipped) => sessions.push(shipped),
            Err(error) => {
                dropped.push(id.clone());
                notices.push(error.fallback_notice());
            }
        }
    }
    let mut files = ShippedFiles {
        workflows,
        workdir,
        coordinator_toplevel,
        task_folder: step.task_folder.to_path_buf(),
        task_files,
        sessions: Vec::new(),
    };
    let fixed = json_size(&files);
    for left_out in fit(&mut sessions, fixed, MAX_REQUEST_FILES_JSON, "to the worker")? {
        notices.push(left_out.1);
        dropped.push(left_out.0);
    }
    files.sessions = sessions;
    Ok(Prepared { files, dropped, notices })
}

/// Step 2, on the worker before the step runs: everything in place under `worker_dir`.
pub(crate) fn materialise(
    files: &ShippedFiles,
    run_id: &str,
    worker_dir: &Path,
    step_env: &BTreeMap<String, String>,
) -> Result<Workspace, CarryError> {
    let workflows = workflow_bundle::unpack(&files.workflows, worker_dir)?;
    let checkout = workdir::check_out(worker_dir, &files.workdir)?;
    let name = files.task_folder.file_name().map(PathBuf::from).unwrap_or_default();
    let worker_task_folder = worker_dir.join("tasks").join(run_id).join(name);
    task_folder::unpack(&files.task_files, &worker_task_folder)?;
    for shipped in &files.sessions {
        session::install(shipped, &checkout.cwd, step_env)?;
    }
    Ok(Workspace {
        workflows,
        workdir: PathMap {
            coordinator_root: files.coordinator_toplevel.clone(),
            worker_root: checkout.toplevel.clone(),
        },
        task_folder: PathMap { coordinator_root: files.task_folder.clone(), worker_root: worker_task_folder },
        cwd: checkout.cwd.clone(),
        checkout,
    })
}

/// Step 3, on the worker after the step: `sessions` are the agent's after it, made in
/// `cwd` (the agent's working directory on the worker, after any `<cd>`).
pub(crate) fn send_back(
    workspace: &Workspace,
    sessions: &[(BackendName, String)],
    cwd: &Path,
    step_env: &BTreeMap<String, String>,
) -> Result<ShippedBack, CarryError> {
    let workdir_commit = workdir::send_back(&workspace.checkout)?;
    let task_files = task_folder::pack(&workspace.task_folder.worker_root)?;
    let (mut shipped, mut notices) = (Vec::new(), Vec::new());
    for (backend, id) in sessions {
        match session::collect(*backend, id, cwd, step_env) {
            Ok(session) => shipped.push(session),
            Err(error) => notices.push(error.fallback_notice()),
        }
    }
    let mut back = ShippedBack { workdir_commit, task_files, sessions: Vec::new(), notices };
    let fixed = json_size(&back);
    for (_, notice) in fit(&mut shipped, fixed, MAX_REPLY_FILES_JSON, "back from the worker")? {
        back.notices.push(notice);
    }
    back.sessions = shipped;
    Ok(back)
}

/// Step 4, on the coordinator with the reply: `cwd` is the agent's working directory on the
/// coordinator after the step (mapped back through [`Workspace::workdir`]'s roots).
pub(crate) fn receive(
    files: &ShippedFiles,
    back: &ShippedBack,
    cwd: &Path,
    step_env: &BTreeMap<String, String>,
) -> Result<Received, CarryError> {
    let changed = workdir::bring_back(cwd, &files.workdir, &back.workdir_commit)?;
    task_folder::unpack(&back.task_files, &files.task_folder)?;
    let mut notices = back.notices.clone();
    for shipped in &back.sessions {
        if let Err(error) = session::install(shipped, cwd, step_env) {
            notices.push(error.fallback_notice());
        }
    }
    Ok(Received { changed, notices })
}

fn json_size<T: Serialize>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(usize::MAX, |json| json.len())
}

/// Leave sessions out, the largest first, until they fit beside `fixed` bytes
/// within `limit`; the ids left out and their notices. Refused when the rest
/// alone does not fit.
fn fit(
    sessions: &mut Vec<ShippedSession>,
    fixed: usize,
    limit: usize,
    direction: &'static str,
) -> Result<Vec<(String, String)>, CarryError> {
    if fixed > limit {
        return Err(CarryError::TooLarge { direction, size: fixed, limit });
    }
    let mut sized: Vec<(usize, ShippedSession)> =
        sessions.drain(..).map(|session| (json_size(&session), session)).collect();
    let mut left_out = Vec::new();
    while fixed + sized.iter().map(|(size, _)| size + 1).sum::<usize>() > limit {
        let Some(largest) = (0..sized.len()).max_by_key(|index| sized[*index].0) else { break };
        let (size, session) = sized.remove(largest);
        let notice = format!(
            "{} session `{}` takes {size} bytes as JSON, too many to carry {direction} with the step; the agent's next \
             turn starts a fresh conversation",
            session.backend, session.session
        );
        left_out.push((session.session, notice));
    }
    sessions.extend(sized.into_iter().map(|(_, session)| session));
    Ok(left_out)
}

#[cfg(test)]
mod tests;
