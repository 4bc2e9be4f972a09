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
use crate::events::Event;
use crate::ids::AgentId;
use crate::model::run_state::RunState;
use crate::run::edit::{Edit, EditRefusal, check_paused, edit_agent, user_from_environment};
use crate::store::lock::RunLock;
use crate::text::suggestion::did_you_mean;

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
            return Err(match crate::run::edit::terminated(state, &self.agent) {
                Some(refusal) => self.refused(&run_id, refusal),
                None => no_such_agent(state, &self.agent),
            });
        };
        check_paused(agent).map_err(|refusal| self.refused(&run_id, refusal))?;
        // Read only once the agent may be edited, and the file only if it is a prompt.
        let prompt = match &self.prompt_file {
            Some(path) => Some(read_prompt_file(path)?),
            None => None,
        };
        let edit = Edit { input: self.input.clone(), goto: self.goto.clone(), prompt };
        edit_agent(agent, &edit, self.by, user_from_environment()).map_err(|refusal| self.refused(&run_id, refusal))
    }

    fn refused(&self, run_id: &str, refusal: EditRefusal) -> CliError {
        let agent = self.agent.to_string();
        let run_id = run_id.to_string();
        match refusal {
            EditRefusal::NotPaused { status } => EditError::NotPaused { run_id, agent, status: status.to_string() },
            EditRefusal::Unreachable { name, reason } => EditError::Unreachable { agent, name, reason },
            EditRefusal::PromptForScript { state } => EditError::PromptForScript { agent, state: state.to_string() },
        }
        .into()
    }
}

fn read_prompt_file(path: &Path) -> Result<String, CliError> {
    let fail = |reason: String| CliError::from(EditError::PromptFile { path: path.to_path_buf(), reason });
    let file = std::fs::File::open(path).map_err(|error| fail(error.to_string()))?;
    let bytes = read_at_most(file, MAX_INPUT_FILE_BYTES)
        .map_err(|error| fail(error.to_string()))?
        .ok_or_else(|| fail(format!("it is larger than {MAX_INPUT_FILE_BYTES} bytes (32 MiB)")))?;
    String::from_utf8(bytes).map_err(|error| fail(format!("byte {} is not UTF-8", error.utf8_error().valid_up_to())))
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
