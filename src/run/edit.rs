//! Editing a stopped agent before it goes on (issue 24): its pending input, the
//! state it runs next, the prompt its next turn sends. One rule for every front
//! end — `baton resume --agent` (`cli::edit`) and the `continue_agent` control line
//! of a supervisor (`run::control`, `baton serve`).
//!
//! Only a paused agent is edited: one that runs, asks or joins has no settled
//! "next" to replace, and one another client already continued is no longer paused,
//! so of two editors racing for one agent exactly one wins. A `goto` target is
//! resolved in the workflow of the agent's current frame, as lint resolves a
//! `<goto>` written there: a state of another workflow is not reachable from it.
//! Every change is one `AgentEdited` event (before → after), so the trace, `logs`
//! and `report` say that the history was edited.

use crate::events::{EditField, Event};
use crate::ids::StateName;
use crate::model::agent::{Agent, AgentStatus};
use crate::text::state_name;
use crate::workflow::resolution::resolve_state;

/// What to change; `None` leaves it as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Edit {
    pub(crate) input: Option<String>,
    pub(crate) goto: Option<String>,
    /// The next prompt's text, sent as written, once.
    pub(crate) prompt: Option<String>,
}

/// Why an edit was refused; the agent was not changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EditRefusal {
    /// The agent is `running`, `asking` or `joining`.
    NotPaused { status: &'static str },
    /// The `goto` target does not resolve in the agent's workflow (`reason` says why,
    /// with a did-you-mean).
    Unreachable { name: String, reason: String },
    /// A prompt for an agent whose next state is a script.
    PromptForScript { state: StateName },
}

impl EditRefusal {
    /// The refusal in words, for a control line's `ControlIgnored` or an HTTP body.
    pub(crate) fn message(&self, agent: &str) -> String {
        match self {
            EditRefusal::NotPaused { status } => format!("agent `{agent}` is not paused ({status})"),
            EditRefusal::Unreachable { name, reason } => {
                format!("goto {name}: agent `{agent}` cannot reach it from its workflow: {reason}")
            }
            EditRefusal::PromptForScript { state } => {
                format!("a prompt replaces a prompt, but agent `{agent}` runs script `{state}` next")
            }
        }
    }
}

/// Whether `agent` may be edited now.
pub(crate) fn check_paused(agent: &Agent) -> Result<(), EditRefusal> {
    let status = match agent.status {
        AgentStatus::Paused => return Ok(()),
        AgentStatus::Active => "running",
        AgentStatus::Asking => "asking",
        AgentStatus::Joining => "joining",
    };
    Err(EditRefusal::NotPaused { status })
}

/// Apply `edit` to the paused `agent`, all or nothing; the events that record it,
/// made by `by` (as `user`, when known).
pub(crate) fn edit_agent(
    agent: &mut Agent,
    edit: &Edit,
    by: &str,
    user: Option<String>,
) -> Result<Vec<Event>, EditRefusal> {
    check_paused(agent)?;
    let target = match &edit.goto {
        Some(name) => Some(
            resolve_state(&agent.scope_dir, name)
                .map(StateName::from)
                .map_err(|error| EditRefusal::Unreachable { name: name.clone(), reason: error.to_string() })?,
        ),
        None => None,
    };
    let next = target.as_ref().unwrap_or(&agent.current_state);
    if edit.prompt.is_some() && state_name::is_script(next) {
        return Err(EditRefusal::PromptForScript { state: next.clone() });
    }
    let mut events = Vec::new();
    let mut record = |agent: &Agent, field, before: Option<String>, after: Option<String>| {
        events.push(Event::AgentEdited {
            agent_id: agent.id.clone(),
            state: agent.current_state.clone(),
            field,
            before,
            after,
            by: by.to_string(),
            user: user.clone(),
        });
    };
    if let Some(target) = target {
        record(agent, EditField::State, Some(agent.current_state.to_string()), Some(target.to_string()));
        agent.current_state = target;
        // The breakpoint it stopped at was before another state.
        agent.breakpoint_passed = false;
    }
    if let Some(input) = &edit.input {
        record(agent, EditField::Input, agent.pending_result.clone(), Some(input.clone()));
        agent.pending_result = Some(input.clone());
    }
    if let Some(prompt) = &edit.prompt {
        record(agent, EditField::Prompt, agent.prompt_override.clone(), Some(prompt.clone()));
        agent.prompt_override = Some(prompt.clone());
    }
    Ok(events)
}

/// The person editing, when the environment says.
pub(crate) fn user_from_environment() -> Option<String> {
    std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).ok().filter(|user| !user.is_empty())
}
