//! `baton resume RUN --agent A` with `--input`, `--goto` or `--prompt-file`:
//! change what a stopped agent does next before it goes on (issue 24).
//!
//! Only a paused agent is edited: one that runs, asks or joins has no "next" a
//! person could safely replace, and one a second client already continued is no
//! longer paused — that client lost the race, is told so with its own exit code
//! (`exit_code::CONFLICT`), and nothing is changed. A `--goto` target is resolved in
//! the workflow of the agent's current frame, as lint resolves a `<goto>` there: a
//! state of another workflow is not reachable from it. Each edit becomes one
//! `AgentEdited` event (before → after), published once the edited state is
//! durable, so `report`, `logs` and the trace say the history was edited.

use std::path::{Path, PathBuf};

use super::CliError;
use crate::bounded_read::read_at_most;
use crate::cli::input_file::MAX_INPUT_FILE_BYTES;
use crate::events::{EditField, Event};
use crate::ids::{AgentId, StateName};
use crate::model::agent::{Agent, AgentStatus};
use crate::model::run_state::RunState;
use crate::store::lock::RunLock;
use crate::text::state_name;
use crate::text::suggestion::did_you_mean;
use crate::workflow::resolution::resolve_state;

/// What one client asks to change of one stopped agent.
pub(crate) struct AgentEdit {
    pub(crate) agent: AgentId,
    pub(crate) input: Option<String>,
    pub(crate) goto: Option<String>,
    pub(crate) prompt_file: Option<PathBuf>,
    /// Who edits: `resume`, `serve`, `control`, `test`.
    pub(crate) by: &'static str,
}

/// Why an edit was refused; nothing was changed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EditError {
    #[error(
        "agent `{agent}` of run `{run_id}` is not paused ({status}), so it cannot be edited: only an agent stopped \
         at a breakpoint or paused can be (another client may have continued it first); `baton status {run_id}` \
         shows where it is"
    )]
    NotPaused { run_id: String, agent: String, status: String },
    #[error(
        "run `{run_id}` is being driven by baton pid {pid}, which may be continuing agent `{agent}`: nothing was \
         edited; try again once it has stopped"
    )]
    Busy { run_id: String, agent: String, pid: String },
    #[error("--goto {name}: agent `{agent}` cannot reach it from its workflow: {reason}")]
    Unreachable { agent: String, name: String, reason: String },
    #[error(
        "--prompt-file replaces a prompt, but agent `{agent}` runs script `{state}` next; edit its input instead (or \
         --goto a prompt state)"
    )]
    PromptForScript { agent: String, state: String },
    #[error("cannot read --prompt-file {}: {reason}", .path.display())]
    PromptFile { path: PathBuf, reason: String },
}

impl AgentEdit {
    /// Refuse the edit while another process drives the run (it may continue the
    /// agent before this one saves): checked before anything is changed.
    pub(crate) fn check_not_driven(&self, run_dir: &Path, run_id: &str) -> Result<(), CliError> {
        match RunLock::holder(run_dir) {
            Some(pid) => Err(EditError::Busy { run_id: run_id.to_string(), agent: self.agent.to_string(), pid }.into()),
            None => Ok(()),
        }
    }

    /// Apply the edit to `state` (in memory: the caller saves it before the run
    /// goes on); the events that record it.
    pub(crate) fn apply(&self, state: &mut RunState) -> Result<Vec<Event>, CliError> {
        let run_id = state.run_id.to_string();
        let Some(agent) = state.agents.iter_mut().find(|agent| agent.id == self.agent) else {
            return Err(no_such_agent(state, &self.agent));
        };
        if agent.status != AgentStatus::Paused {
            let status = match agent.status {
                AgentStatus::Active => "running",
                AgentStatus::Asking => "asking",
                AgentStatus::Joining => "joining",
                AgentStatus::Paused => "paused",
            };
            return Err(
                EditError::NotPaused { run_id, agent: self.agent.to_string(), status: status.to_string() }.into()
            );
        }
        let target = match &self.goto {
            Some(name) => Some(reachable(agent, name)?),
            None => None,
        };
        let next_state = target.clone().unwrap_or_else(|| agent.current_state.clone());
        let prompt = match &self.prompt_file {
            Some(_) if state_name::is_script(&next_state) => {
                return Err(EditError::PromptForScript {
                    agent: self.agent.to_string(),
                    state: next_state.to_string(),
                }
                .into());
            }
            Some(path) => Some(read_prompt_file(path)?),
            None => None,
        };
        let mut events = Vec::new();
        let mut record = |agent: &Agent, field, before: Option<String>, after: Option<String>| {
            events.push(Event::AgentEdited {
                agent_id: agent.id.clone(),
                state: agent.current_state.clone(),
                field,
                before,
                after,
                by: self.by.to_string(),
                user: user(),
            });
        };
        if let Some(target) = target {
            let before = agent.current_state.to_string();
            record(agent, EditField::State, Some(before), Some(target.to_string()));
            agent.current_state = target;
            // The breakpoint it stopped at was before another state.
            agent.breakpoint_passed = false;
        }
        if let Some(input) = &self.input {
            record(agent, EditField::Input, agent.pending_result.clone(), Some(input.clone()));
            agent.pending_result = Some(input.clone());
        }
        if let Some(prompt) = prompt {
            record(agent, EditField::Prompt, agent.prompt_override.clone(), Some(prompt.clone()));
            agent.prompt_override = Some(prompt);
        }
        Ok(events)
    }
}

/// `name` resolved in the workflow of `agent`'s current frame.
fn reachable(agent: &Agent, name: &str) -> Result<StateName, CliError> {
    resolve_state(&agent.scope_dir, name).map(StateName::from).map_err(|error| {
        EditError::Unreachable { agent: agent.id.to_string(), name: name.to_string(), reason: error.to_string() }.into()
    })
}

fn read_prompt_file(path: &Path) -> Result<String, CliError> {
    let fail = |reason: String| CliError::from(EditError::PromptFile { path: path.to_path_buf(), reason });
    let file = std::fs::File::open(path).map_err(|error| fail(error.to_string()))?;
    let bytes = read_at_most(file, MAX_INPUT_FILE_BYTES)
        .map_err(|error| fail(error.to_string()))?
        .ok_or_else(|| fail(format!("it is larger than {MAX_INPUT_FILE_BYTES} bytes (32 MiB)")))?;
    String::from_utf8(bytes).map_err(|error| fail(format!("byte {} is not UTF-8", error.utf8_error().valid_up_to())))
}

/// The person editing, when the environment says.
fn user() -> Option<String> {
    std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).ok().filter(|user| !user.is_empty())
}

pub(crate) fn no_such_agent(state: &RunState, wanted: &AgentId) -> CliError {
    let known: Vec<&str> = state.agents.iter().map(|agent| &*agent.id).collect();
    let suggestion = did_you_mean(wanted, known.iter().copied())
        .map(|found| format!(" (did you mean `{found}`?)"))
        .unwrap_or_default();
    CliError::NoSuchAgent {
        run_id: state.run_id.to_string(),
        agent: wanted.to_string(),
        suggestion,
        known: if known.is_empty() { "none".to_string() } else { known.join(", ") },
    }
}
