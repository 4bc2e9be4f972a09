//! The paths of a step, moved between the coordinator's names and a worker's
//! (`--files shipped`): what the worker runs (the agent's working directory,
//! workflow, call stack and task folder) and what comes back (the workflows a
//! cross-workflow transition names), and which sessions travel each way.
//!
//! The loop applies a step's transition on the coordinator, so the worker
//! only ever runs with its own paths and the coordinator only ever stores its
//! own. A path outside what was carried cannot be moved: going out, the step
//! is refused with the path named; coming back (a workflow the worker found
//! outside the bundle, which only a worker holding the same path can) it is
//! left as it is.

use std::path::{Path, PathBuf};

use crate::distributed::carry::shipped::Workspace;
use crate::distributed::carry::workflow_bundle::PathMap;
use crate::executor::ExecutionResult;
use crate::ids::BackendName;
use crate::model::agent::Agent;
use crate::transition::Transition;

/// A path of the step that has no place on the worker.
#[derive(Debug, thiserror::Error)]
#[error(
    "agent `{agent}`'s {what} {} is outside what `--files shipped` carries ({}); run with `--files shared`",
    .path.display(),
    .carried.display()
)]
pub(crate) struct OutsideCarried {
    pub(crate) agent: String,
    pub(crate) what: &'static str,
    pub(crate) path: PathBuf,
    pub(crate) carried: PathBuf,
}

/// `agent` as the worker runs it: its working directory in the checkout, its
/// workflow in the unpacked bundle, its task folder in the worker's copy (and
/// its call stack's paths where they have a place there).
pub(crate) fn agent_to_worker(agent: &mut Agent, workspace: &Workspace) -> Result<(), OutsideCarried> {
    let id = agent.id.to_string();
    let moved = |map: &PathMap, what: &'static str, path: &Path| {
        map.to_worker(path).ok_or_else(|| OutsideCarried {
            agent: id.clone(),
            what,
            path: path.to_path_buf(),
            carried: map.coordinator_root.clone(),
        })
    };
    agent.cwd = moved(&workspace.workdir, "working directory", &real(&agent.cwd))?;
    agent.scope_dir = moved(&workspace.workflows, "workflow", &agent.scope_dir)?;
    agent.task_folder = moved(&workspace.task_folder, "task folder", &agent.task_folder)?;
    // The loop, not the step, pops a frame: its paths are only read, and moved where they can be.
    let lenient = |map: &PathMap, path: &mut PathBuf| {
        if let Some(moved) = map.to_worker(&real(path)).or_else(|| map.to_worker(path)) {
            *path = moved;
        }
    };
    for frame in &mut agent.stack {
        lenient(&workspace.workflows, &mut frame.scope_dir);
        lenient(&workspace.workdir, &mut frame.cwd);
    }
    Ok(())
}

/// `result` as the coordinator applies it: the workflows its transition names
/// moved back from the worker's bundle to the coordinator's paths.
pub(crate) fn result_to_coordinator(result: &mut ExecutionResult, workspace: &Workspace) {
    let map = &workspace.workflows;
    let back = |path: &mut PathBuf| {
        if let Some(moved) = map.to_coordinator(path) {
            *path = moved;
        }
    };
    match &mut result.transition {
        Transition::Fork { worker, .. } => {
            if let Some(entry) = &mut worker.workflow {
                back(&mut entry.scope_dir);
            }
        }
        Transition::MultiFork { workers, .. } => {
            for entry in workers.iter_mut().filter_map(|worker| worker.workflow.as_mut()) {
                back(&mut entry.scope_dir);
            }
        }
        Transition::CallWorkflow { callee: entry, .. } | Transition::ResetWorkflow { entry, .. } => {
            back(&mut entry.scope_dir);
        }
        Transition::Goto { .. }
        | Transition::Reset { .. }
        | Transition::Call { .. }
        | Transition::Function { .. }
        | Transition::Result { .. }
        | Transition::Join(_)
        | Transition::Ask { .. } => {}
    }
}

/// The sessions a step of `agent` may continue or fork: its own and the one a
/// `<call>` left it to fork, with their backend (none recorded is Claude).
pub(crate) fn sessions_before(agent: &Agent) -> Vec<(BackendName, String)> {
    let backend = agent.session_backend.unwrap_or(BackendName::Claude);
    let mut sessions: Vec<(BackendName, String)> =
        [&agent.session_id, &agent.fork_session_id].into_iter().flatten().map(|id| (backend, id.to_string())).collect();
    sessions.dedup();
    sessions
}

/// The session a step left `agent` with (its result's, else its own).
pub(crate) fn sessions_after(agent: &Agent, result: &ExecutionResult) -> Vec<(BackendName, String)> {
    match &result.session_id {
        Some(session) => {
            vec![(result.session_backend.or(agent.session_backend).unwrap_or(BackendName::Claude), session.to_string())]
        }
        None => {
            let backend = agent.session_backend.unwrap_or(BackendName::Claude);
            agent.session_id.iter().map(|session| (backend, session.to_string())).collect()
        }
    }
}

/// Symlinks resolved, as the repository's top is (`git rev-parse --show-toplevel`).
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests;
