//! `baton resume <RUN_ID>`: continue a run from its last snapshot. Paused agents
//! are un-paused (R8.13); an agent whose step was in flight or failed runs that
//! step again; everything whose transition was recorded stays done.

use super::CliError;
use super::arguments::ResumeArguments;
use super::execute::{RunToExecute, apply_launch_options, check_budget, execute, limits, timeout_of};
use crate::cli::config::Config;
use crate::model::run_state::{BATON_VERSION, RunStatus, STATE_VERSION};
use crate::process::watchdog::Watchdog;
use crate::store::runs::RunStore;

pub(crate) async fn resume(
    store: RunStore,
    config: &Config,
    arguments: ResumeArguments,
    watchdog: Watchdog,
) -> Result<i32, CliError> {
    let loaded = store.load_run(&arguments.run_id)?;
    let mut state = loaded.state;
    // From here on this build writes the run, in its own format.
    state.version = STATE_VERSION;
    state.written_by = BATON_VERSION.to_string();
    if state.status == RunStatus::Completed {
        return Err(CliError::AlreadyCompleted { run_id: state.run_id.to_string() });
    }
    if arguments.input.is_some() {
        return Err(CliError::NoAgentWaiting { run_id: state.run_id.to_string() });
    }
    if let Some(budget) = check_budget(arguments.budget)? {
        state.budget_usd = budget;
    }
    let timeout = timeout_of(arguments.execution.timeout, state.launch_params.timeout_seconds, config)?;
    if let Some(seconds) = arguments.execution.timeout {
        state.launch_params.timeout_seconds = Some(seconds);
    }
    apply_launch_options(&arguments.execution, &mut state.launch_params)?;
    let limits = limits(&arguments.execution, &state.launch_params, config)?;
    for agent in &mut state.agents {
        agent.unpause();
    }
    let run = RunToExecute {
        state,
        journal_intact: loaded.journal_intact,
        replayed_steps: loaded.replayed_steps,
        resumed: true,
        unsynced: Vec::new(),
    };
    execute(store, run, &arguments.execution, config, timeout, limits, watchdog).await
}
