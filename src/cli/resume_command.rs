//! `baton resume <RUN_ID>`: continue a run from its last snapshot. Paused agents
//! are un-paused (R8.13); an agent whose step was in flight or failed runs that
//! step again; everything whose transition was recorded stays done.
//!
//! Asks (§11): an ask whose `timeout` has passed goes to its `timeout_next` with an
//! empty answer, or pauses its agent (A11). `--input` answers the first asking
//! agent (or `--ask ID`, `baton answer`); while asks remain unanswered, the next one
//! is printed and the command exits 2 having run nothing (R11.5) — unless they can be
//! answered while the run goes on (`--on-ask prompt` at a terminal, `--on-ask json`):
//! then the run goes on and asks them again (`run::questions`).

use super::CliError;
use super::arguments::ResumeArguments;
use super::execute::{RunToExecute, continue_with_options, execute};
use crate::cli::config::Config;
use std::io::Write;

use crate::cli::edit::AgentEdit;
use crate::cli::execute::ask_json;
use crate::exit_code;
use crate::ids::{AgentId, RunId};
use crate::model::agent::AgentStatus;
use crate::model::run_state::{BATON_VERSION, RunState, RunStatus, STATE_VERSION};
use crate::process::watchdog::Watchdog;
use crate::serve::handoff::answer_through_daemon;
use crate::store::lock::RunLock;
use crate::store::runs::RunStore;
use crate::store::runs::StoreError;
use crate::transition::ask_timeout::{deadline, time_out};

pub(crate) async fn resume(
    store: RunStore,
    config: &Config,
    arguments: ResumeArguments,
    watchdog: Watchdog,
) -> Result<i32, CliError> {
    let edit = arguments.agent.as_ref().map(|agent| AgentEdit {
        agent: AgentId::from(agent.as_str()),
        input: arguments.input.clone(),
        goto: arguments.goto.clone(),
        prompt_file: arguments.prompt_file.clone(),
        by: "resume",
    });
    if let Some(edit) = &edit {
        let run_id = RunId::parse(&arguments.run_id).map_err(StoreError::from)?;
        edit.check_not_driven(&store.run_dir(&run_id), &arguments.run_id)?;
    }
    // With --agent, --input is the agent's new input, not an answer.
    let answer_text = if edit.is_some() { None } else { arguments.input.clone() };
    // A live `baton serve` drives the run: it takes the answer, and the run goes on there.
    if let Some(text) = &answer_text
        && RunLock::holder(&store.run_dir(&arguments.run_id)).is_some()
        && let Some(url) = answer_through_daemon(&store, &arguments.run_id, arguments.ask.as_deref(), text)?
    {
        eprintln!("answered through baton serve at {url}: run {} goes on there", arguments.run_id);
        return Ok(exit_code::COMPLETED);
    }
    let loaded = store.load_run(&arguments.run_id)?;
    let mut state = loaded.state;
    // From here on this build writes the run, in its own format.
    state.version = STATE_VERSION;
    state.written_by = BATON_VERSION.to_string();
    if state.status == RunStatus::Completed {
        return Err(CliError::AlreadyCompleted { run_id: state.run_id.to_string() });
    }
    // Edits first: they need the agent still paused.
    let edits = match &edit {
        Some(edit) => edit.apply(&mut state)?,
        None => Vec::new(),
    };
    // Paused agents run again (R8.13); an ask that expires now pauses its agent anew.
    for agent in state.agents.iter_mut().filter(|agent| agent.status == AgentStatus::Paused) {
        agent.unpause();
    }
    let (timeout, limits) = continue_with_options(&mut state, arguments.budget, &arguments.execution, config, false)?;
    let expired = expire_asks(&mut state, jiff::Timestamp::now());
    let asking = state.asking_agents().len();
    if asking == 0 && answer_text.is_some() {
        return Err(CliError::NoAgentWaiting { run_id: state.run_id.to_string() });
    }
    if asking > 0 {
        if let Some(text) = &answer_text {
            answer(&mut state, arguments.ask.as_deref(), text)?;
        }
        // An edit is saved like an answer (its event goes with the run that follows).
        let answered = answer_text.is_some() || !edits.is_empty();
        // Where asks are answered while the run goes on (`--on-ask prompt` at a
        // terminal), the remaining ones are asked there instead.
        if !state.asking_agents().is_empty() && limits.answers.is_none() {
            // Nothing runs while an ask waits; what changed is saved, the next ask shown.
            if answered || expired {
                let run_dir = store.run_dir(&state.run_id);
                let _lock = RunLock::acquire(&run_dir, &state.run_id)?;
                store.write_snapshot(&state)?;
            }
            // An ask that timed out beside those still waiting may have paused its
            // agent: say so here, since no run follows to say it.
            for agent in state.agents.iter().filter(|agent| agent.status == AgentStatus::Paused) {
                if let (Some(reason), Some(message)) = (agent.pause_reason, &agent.error) {
                    eprintln!("[{}] paused at {} ({reason}): {message}", agent.id, agent.current_state);
                }
            }
            let ask = ask_json(&state).unwrap_or_default();
            let mut stdout = std::io::stdout().lock();
            writeln!(stdout, "{ask}").map_err(|source| CliError::Stdout { source })?;
            return Ok(exit_code::ASKING);
        }
    }

    let run = RunToExecute {
        state,
        journal_intact: loaded.journal_intact,
        replayed_steps: loaded.replayed_steps,
        resumed: true,
        unsynced: Vec::new(),
        edits,
    };
    execute(store, run, &arguments.execution, config, timeout, limits, watchdog).await
}

/// Deliver `text` to the first asking agent, or to the one asking `ask_id` (R11.5).
fn answer(state: &mut RunState, ask_id: Option<&str>, text: &str) -> Result<(), CliError> {
    let asking = state.asking_agents();
    let chosen = match ask_id {
        None => asking.first(),
        Some(wanted) => asking.iter().find(|agent| agent.ask.as_ref().is_some_and(|ask| ask.id == wanted)),
    }
    .map(|agent| agent.id.clone());
    let Some(chosen) = chosen else {
        let open: Vec<String> =
            asking.iter().filter_map(|agent| agent.ask.as_ref()).map(|ask| ask.id.clone()).collect();
        return Err(CliError::NoSuchAsk {
            run_id: state.run_id.to_string(),
            ask_id: ask_id.unwrap_or_default().to_string(),
            open: open.join(", "),
        });
    };
    if let Some(agent) = state.agents.iter_mut().find(|agent| agent.id == chosen) {
        agent.answer(text.to_string());
    }
    Ok(())
}

/// A11: every ask whose `timeout` has passed by `now` times out
/// (`transition::ask_timeout`). Returns whether any did.
fn expire_asks(state: &mut RunState, now: jiff::Timestamp) -> bool {
    let mut expired = false;
    for agent in state.agents.iter_mut().filter(|agent| agent.status == AgentStatus::Asking) {
        if agent.ask.as_ref().and_then(deadline).is_some_and(|deadline| deadline <= now) {
            time_out(agent);
            expired = true;
        }
    }
    expired
}
