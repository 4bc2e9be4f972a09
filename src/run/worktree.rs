//! Worktree isolation in the loop (`docs/isolation.md`): the parent's repository
//! is looked up before a fork with `isolation="worktree"` is applied (so the
//! worker's worktree is recorded in the commit that creates it), and the worktree
//! is made, if it is not there yet, just before each of the worker's steps starts.

use crate::events::error_kind::ErrorKind;
use crate::executor::step_failure::StepFailure;
use crate::model::agent::{Agent, PauseReason};
use crate::process::git;
use crate::run::workflow_loop::WorkflowLoop;
use crate::transition::apply::IsolationBase;
use crate::transition::{Isolation, Transition};

impl WorkflowLoop {
    /// What the isolated workers of `transition` (emitted by `agents[index]`) need,
    /// or why they cannot have it: an unknown `isolation`, or a parent directory
    /// in no git repository (or no git).
    pub(super) fn isolation_base(
        &self,
        index: usize,
        transition: &Transition,
    ) -> Result<Option<IsolationBase>, String> {
        let specs = transition.fork_specs();
        if let Some(Isolation::Unknown(value)) =
            specs.iter().map(|spec| &spec.isolation).find(|isolation| matches!(isolation, Isolation::Unknown(_)))
        {
            return Err(format!("isolation=\"{value}\" is not known (the only isolation is \"worktree\")"));
        }
        if !specs.iter().any(|spec| spec.isolation == Isolation::Worktree) {
            return Ok(None);
        }
        let parent = &self.state.agents[index];
        let head = git::head_of(&parent.cwd)
            .map_err(|error| format!("isolation=\"worktree\" needs a git repository with a commit: {error}"))?;
        let cwd = std::fs::canonicalize(&parent.cwd).unwrap_or_else(|_| parent.cwd.clone());
        let toplevel = std::fs::canonicalize(&head.toplevel).unwrap_or_else(|_| head.toplevel.clone());
        let offset = cwd.strip_prefix(&toplevel).map(|offset| offset.to_path_buf()).unwrap_or_default();
        Ok(Some(IsolationBase {
            repo: head.toplevel,
            head: head.commit,
            offset,
            worktrees: self.context.baton_dir.join("worktrees").join(&*self.state.run_id),
            run_id: self.state.run_id.to_string(),
        }))
    }
}

/// Make `agent`'s worktree, if it has one and it is not there (complete) yet: run
/// in the step's task, after its launch was committed, before the step itself.
/// A worktree that cannot be made pauses the agent.
pub(super) fn ensure_worktree(agent: &Agent) -> Result<(), StepFailure> {
    let Some(worktree) = &agent.worktree else { return Ok(()) };
    git::ensure_worktree(&worktree.repo, &worktree.path, &worktree.branch, &worktree.base).map_err(|error| {
        let message = format!("cannot make the worktree {}: {error}", worktree.path.display());
        StepFailure::pause(PauseReason::ValidationError, ErrorKind::TransitionError, message)
    })
}
