//! A run's state as it was right after one of its journal commits, read back for
//! `baton rerun`, and the new run made from it.
//!
//! The state after commit `N` is the snapshot with the journal entries up to `N`
//! replayed; it exists on disk only while the snapshot is no newer than `N`. A
//! compaction (a `baton resume`, an invocation that ends with more than 100 entries,
//! every 1,000 commits) folds the journal into the snapshot and empties it, and the
//! states before the snapshot's commit are gone: such a step is refused, and the
//! error says which steps are still there.
//!
//! Everything here only reads the original run: its files are opened read-only and
//! its lock is not taken, so its directory stays byte-for-byte as it was.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ids::{RunId, SessionId};
use crate::model::agent::AgentStatus;
use crate::model::run_state::{BATON_VERSION, RerunOf, RunState, RunStatus, STATE_VERSION};
use crate::store::journal::{Commit, StepSummary};
use crate::store::runs::{StoreError, read_run_files};

#[derive(Debug, thiserror::Error)]
pub(crate) enum RerunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("run `{run_id}` has no committed steps: there is nothing to rerun from")]
    NoSteps { run_id: String },
    #[error(
        "`--from 0` names no step: a step is named by its journal commit, from 1 (the `commit` of its \
         `TransitionOccurred` event); run `{run_id}` can be rerun from {} (`baton status {run_id} --steps` lists \
         its steps)",
        range(*.first, *.last)
    )]
    Zero { run_id: String, first: u64, last: u64 },
    #[error(
        "run `{run_id}` has no step {commit}: its journal ends at commit {last}; it can be rerun from {} (`baton \
         status {run_id} --steps` lists its steps)",
        range(*.first, *.last)
    )]
    Beyond { run_id: String, commit: u64, first: u64, last: u64 },
    #[error(
        "run `{run_id}` can no longer be rerun from step {commit}: its journal up to commit {first} was compacted into \
         its state.json (a resume, an invocation of more than 100 steps and every 1,000 commits do that), so the \
         state after step {commit} is not on disk any more; it can be rerun from {} (`baton status {run_id} --steps` \
         lists its steps)",
        range(*.first, *.last)
    )]
    Compacted { run_id: String, commit: u64, first: u64, last: u64 },
    #[error(
        "run `{run_id}` cannot be rerun from step {commit}: its journal is damaged at line {line} ({reason}), and \
         the last commit before the damage is {last}; rerun from an earlier step, or cut the journal back with \
         `baton repair {run_id}` (which changes that run)"
    )]
    Damaged { run_id: String, commit: u64, line: usize, reason: String, last: u64 },
    #[error(
        "every agent of run `{run_id}` had terminated by step {commit}: a rerun from there has nothing to run; rerun \
         from an earlier step (`baton status {run_id} --steps` lists them)"
    )]
    NothingToRun { run_id: String, commit: u64 },
    #[error("cannot copy the task folders {} to {}: {source}", .from.display(), .to.display())]
    CopyTasks { from: PathBuf, to: PathBuf, source: io::Error },
}

/// "commits 1 to 5", or "commit 5 only".
fn range(first: u64, last: u64) -> String {
    if first == last { format!("commit {first} only") } else { format!("commits {first} to {last}") }
}

/// What of a run's history is still on disk: its snapshot and the journal after it.
#[derive(Debug)]
pub(crate) struct History {
    run_id: String,
    snapshot: RunState,
    /// The intact entries after the snapshot's commit.
    entries: Vec<Commit>,
    /// Where the journal is damaged, if it is: its line and why.
    damage: Option<(usize, String)>,
}

/// The state right after one commit, and the step that commit recorded (if it was one).
#[derive(Debug)]
pub(crate) struct StateAtCommit {
    pub(crate) state: RunState,
    pub(crate) commit: u64,
    pub(crate) step: Option<StepSummary>,
}

impl History {
    /// Read the history of the run in `run_dir` (read-only).
    pub(crate) fn read(run_dir: &Path) -> Result<History, StoreError> {
        let (snapshot, scan) = read_run_files(run_dir)?;
        Ok(History { run_id: snapshot.run_id.to_string(), snapshot, entries: scan.entries, damage: scan.problem })
    }

    /// The first commit whose state can be rebuilt: the snapshot's (commit 0, a run
    /// before its first step, is no step).
    pub(crate) fn first(&self) -> u64 {
        self.snapshot.journal_commit.max(1)
    }

    /// The last intact commit.
    pub(crate) fn last(&self) -> u64 {
        self.entries.last().map_or(self.snapshot.journal_commit, |entry| entry.commit)
    }

    /// The steps a rerun can start from, with their commits; the snapshot's own last
    /// step first when it is the snapshot's commit.
    pub(crate) fn steps(&self) -> Vec<(u64, &StepSummary)> {
        let snapshot_step = self
            .snapshot
            .last_step
            .as_ref()
            .filter(|(commit, _)| *commit == self.snapshot.journal_commit && *commit > 0)
            .map(|(commit, step)| (*commit, step));
        let journal_steps =
            self.entries.iter().filter_map(|entry| entry.step.as_ref().map(|step| (entry.commit, step)));
        snapshot_step.into_iter().chain(journal_steps).collect()
    }

    /// The run's state right after commit `commit`, or why it cannot be rebuilt.
    pub(crate) fn state_at(self, commit: u64) -> Result<StateAtCommit, RerunError> {
        let run_id = self.run_id.clone();
        let (first, last) = (self.first(), self.last());
        if last == 0 {
            return Err(RerunError::NoSteps { run_id });
        }
        if commit == 0 {
            return Err(RerunError::Zero { run_id, first, last });
        }
        if commit < self.snapshot.journal_commit {
            return Err(RerunError::Compacted { run_id, commit, first, last });
        }
        if commit > last {
            if let Some((line, reason)) = self.damage {
                return Err(RerunError::Damaged { run_id, commit, line, reason, last });
            }
            return Err(RerunError::Beyond { run_id, commit, first, last });
        }
        let mut state = self.snapshot;
        let mut step = state.last_step.clone().filter(|(at, _)| *at == commit).map(|(_, step)| step);
        for entry in self.entries.into_iter().take_while(|entry| entry.commit <= commit) {
            step = entry.step.clone();
            entry.apply(&mut state);
        }
        Ok(StateAtCommit { state, commit, step })
    }
}

/// The state a rerun starts from: `at`, the state of run `at.state.run_id` after
/// commit `at.commit`, taken over by the new run `run_id`. Its history (agents,
/// stacks, counters, cost, steps) is the original's; it runs again (paused agents
/// un-paused, as a resume would); its task folders are its own copies (see
/// `copy_task_folders`); and every Claude session it took over is borrowed: forked,
/// never resumed, so the original's conversations stay as they were.
pub(crate) fn new_run_state(at: StateAtCommit, run_id: RunId, baton_dir: &Path) -> Result<RunState, RerunError> {
    let StateAtCommit { mut state, commit, .. } = at;
    let original = state.run_id.clone();
    if state.agents.is_empty() {
        return Err(RerunError::NothingToRun { run_id: original.to_string(), commit });
    }
    let old_tasks = tasks_dir(baton_dir, &original);
    let new_tasks = tasks_dir(baton_dir, &run_id);
    let moved = |path: &mut PathBuf| {
        if let Ok(rest) = path.strip_prefix(&old_tasks) {
            *path = new_tasks.join(rest);
        }
    };
    let mut borrowed: BTreeSet<SessionId> = BTreeSet::new();
    for agent in &mut state.agents {
        if agent.status == AgentStatus::Paused {
            agent.unpause();
        }
        moved(&mut agent.task_folder);
        moved(&mut agent.cwd);
        borrowed.extend(agent.session_id.iter().chain(&agent.fork_session_id).cloned());
        for frame in &mut agent.stack {
            moved(&mut frame.task_folder);
            moved(&mut frame.cwd);
            borrowed.extend(frame.session.iter().cloned());
        }
    }
    let now = jiff::Timestamp::now().to_string();
    state.version = STATE_VERSION;
    state.written_by = BATON_VERSION.to_string();
    state.run_id = run_id;
    state.status = RunStatus::Running;
    state.error = None;
    state.paused_by = None;
    state.created_at = now.clone();
    state.updated_at = now;
    // The new trace starts empty: there is no step of this run to restore in it.
    state.last_step = None;
    state.rerun_of = Some(RerunOf { run_id: original, commit });
    state.borrowed_sessions = borrowed;
    Ok(state)
}

/// `<baton_dir>/tasks/<run_id>`: where a run's task folders live.
fn tasks_dir(baton_dir: &Path, run_id: &str) -> PathBuf {
    baton_dir.join("tasks").join(run_id)
}

/// Copy the task folders of run `from` (as they are now: Baton keeps no history of
/// files) to run `to`, so that states reading what earlier steps wrote there find it.
/// Nothing to copy is no error; symbolic links are copied as links.
pub(crate) fn copy_task_folders(baton_dir: &Path, from: &str, to: &str) -> Result<(), RerunError> {
    let (source, target) = (tasks_dir(baton_dir, from), tasks_dir(baton_dir, to));
    if !source.is_dir() {
        return Ok(());
    }
    copy_tree(&source, &target).map_err(|source_error| RerunError::CopyTasks {
        from: source.clone(),
        to: target.clone(),
        source: source_error,
    })
}

fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&source)?, &target)?;
        } else {
            fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::agent::{Agent, Frame};

    fn state_with(agent: Agent) -> RunState {
        let mut state: RunState =
            serde_json::from_str(include_str!("../../fixtures/state-v1/state.json")).expect("fixture parses");
        state.run_id = "old".into();
        state.agents = vec![agent];
        state
    }

    #[test]
    fn the_new_run_borrows_every_session_and_owns_copies_of_the_task_folders() {
        let baton = Path::new("/p/.baton");
        let mut agent = Agent::main("A.md".into(), "/wf".into(), "/p/.baton/tasks/old/main/sub".into(), "/t".into());
        agent.task_folder = "/p/.baton/tasks/old/main".into();
        agent.session_id = Some("s-now".into());
        agent.stack.push(Frame {
            session: Some("s-caller".into()),
            session_backend: None,
            session_message: None,
            state: "RET.md".into(),
            scope_dir: "/wf".into(),
            scope_url: None,
            cwd: "/elsewhere".into(),
            nesting_depth: 0,
            task_folder: "/p/.baton/tasks/old/main".into(),
        });
        agent.pause(crate::model::agent::PauseReason::Timeout, "slow".into());
        let at = StateAtCommit { state: state_with(agent), commit: 3, step: None };
        let state = new_run_state(at, "new".into(), baton).expect("a rerun");
        let agent = &state.agents[0];
        assert_eq!(agent.task_folder, PathBuf::from("/p/.baton/tasks/new/main"));
        assert_eq!(agent.cwd, PathBuf::from("/p/.baton/tasks/new/main/sub"));
        assert_eq!(agent.stack[0].task_folder, PathBuf::from("/p/.baton/tasks/new/main"));
        assert_eq!(agent.stack[0].cwd, PathBuf::from("/elsewhere"));
        assert!(agent.is_active(), "paused agents run again");
        let borrowed: Vec<&str> = state.borrowed_sessions.iter().map(|session| &**session).collect();
        assert_eq!(borrowed, ["s-caller", "s-now"]);
        assert_eq!(state.rerun_of, Some(RerunOf { run_id: "old".into(), commit: 3 }));
        assert_eq!((state.version, state.status, state.last_step.is_none()), (STATE_VERSION, RunStatus::Running, true));
    }

    #[test]
    fn a_state_where_every_agent_terminated_has_nothing_to_rerun() {
        let mut state = state_with(Agent::main("A.md".into(), "/wf".into(), "/".into(), "/t".into()));
        state.agents.clear();
        let at = StateAtCommit { state, commit: 5, step: None };
        let error = new_run_state(at, "new".into(), Path::new("/p/.baton")).unwrap_err();
        assert!(matches!(error, RerunError::NothingToRun { commit: 5, .. }), "{error}");
    }
}
