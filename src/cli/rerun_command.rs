//! `baton rerun <RUN> --from <STEP>`: a new run whose history is RUN's up to and
//! including journal commit STEP, continued live from there as `baton resume` would
//! have continued RUN at that point. Nothing of the prefix runs again (no script,
//! no model turn); every step after STEP runs afresh.
//!
//! RUN is only read (`store::rerun`): its directory stays byte-for-byte as it was.
//! The new run has its own id, its own copies of RUN's task folders (as they are
//! now), `rerun_of` in its state and trace, and borrows RUN's Claude sessions: a
//! turn that would continue one forks it (`--resume S --fork-session`).

use super::CliError;
use super::arguments::RerunArguments;
use super::execute::{RunToExecute, continue_with_options, execute};
use crate::cli::config::Config;
use crate::events::Event;
use crate::ids::RunId;
use crate::inspect::trace_file::{read_complete, trace_path};
use crate::model::agent::AgentStatus;
use crate::model::run_state::RunState;
use crate::process::watchdog::Watchdog;
use crate::store::rerun::{History, StateAtCommit, copy_task_folders, new_run_state};
use crate::store::runs::{RunStore, StoreError};

pub(crate) async fn rerun(
    store: RunStore,
    config: &Config,
    arguments: RerunArguments,
    watchdog: Watchdog,
) -> Result<i32, CliError> {
    let original_dir = store.existing_run_dir(&arguments.run)?;
    let at = History::read(&original_dir)?.state_at(arguments.from)?;
    let input_target = match &arguments.input {
        Some(_) => Some(input_target(&at)?),
        None => None,
    };
    let run_id = match arguments.run_id {
        Some(id) => {
            let id = RunId::parse(&id).map_err(StoreError::from)?;
            if store.exists(&id) {
                return Err(StoreError::AlreadyExists { run_id: id.to_string() }.into());
            }
            id
        }
        None => RunId::from(store.new_run_id()),
    };
    let mut state = new_run_state(at, run_id, store.baton_dir())?;
    if let (Some(text), Some(target)) = (arguments.input, input_target) {
        give_input(&mut state, &target, text);
    }
    let (timeout, limits) = continue_with_options(&mut state, arguments.budget, &arguments.execution, config, true)?;

    // A history a person edited is said to be one, here and in the new run's trace.
    let edits = edited_history(&original_dir, arguments.from);
    for edit in &edits {
        if let Event::AgentEdited { agent_id, state: at, field, by, .. } = edit {
            eprintln!(
                "note: the history of run {} up to step {} was edited by hand: {agent_id} before {at}: {} (by {by})",
                arguments.run,
                arguments.from,
                field.as_str()
            );
        }
    }
    copy_task_folders(store.baton_dir(), &arguments.run, &state.run_id)?;
    let created = store.create(&state)?;
    let run = RunToExecute::created(state, created, edits);
    execute(store, run, &arguments.execution, config, timeout, limits, watchdog).await
}

/// The agent `--input` goes to: the one that took step STEP, which must still exist.
fn input_target(at: &StateAtCommit) -> Result<crate::ids::AgentId, CliError> {
    let run_id = at.state.run_id.to_string();
    let Some(step) = &at.step else {
        return Err(CliError::RerunInputNoStep { run_id, commit: at.commit });
    };
    if !at.state.agents.iter().any(|agent| agent.id == step.agent_id) {
        return Err(CliError::RerunInputTerminated { run_id, commit: at.commit, agent_id: step.agent_id.to_string() });
    }
    Ok(step.agent_id.clone())
}

/// `--input`: the next input of agent `target` (what STEP passed on to its next
/// state), or the answer to its ask when STEP left it asking.
fn give_input(state: &mut RunState, target: &crate::ids::AgentId, text: String) {
    if let Some(agent) = state.agents.iter_mut().find(|agent| &agent.id == target) {
        if agent.status == AgentStatus::Asking {
            agent.answer(text);
        } else {
            agent.pending_result = Some(text);
        }
    }
}

/// The edits of stopped agents (`AgentEdited`) in the trace of the run at
/// `original_dir` before step `from`'s transition: they shaped the history the
/// rerun takes over. An unreadable trace has none to say.
fn edited_history(original_dir: &std::path::Path, from: u64) -> Vec<Event> {
    let Ok(text) = read_complete(&trace_path(original_dir)) else { return Vec::new() };
    let mut edits = Vec::new();
    for event in text.lines().filter_map(|line| serde_json::from_str::<Event>(line).ok()) {
        match event {
            Event::TransitionOccurred { commit, .. } if commit >= from => break,
            Event::AgentEdited { .. } => edits.push(event),
            _ => {}
        }
    }
    edits
}
