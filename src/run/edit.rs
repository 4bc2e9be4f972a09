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
use crate::model::run_state::RunState;
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
    /// The agent is `running`, `asking` or `joining`, or has `terminated`.
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

/// The refusal for `agent` when it is no longer in `state` because it terminated:
/// a client that continued it first let it run to its end. Not an unknown agent:
/// like any agent that is not paused, it is a conflict.
pub(crate) fn terminated(state: &RunState, agent: &str) -> Option<EditRefusal> {
    state.terminated.iter().any(|done| *done.id == *agent).then_some(EditRefusal::NotPaused { status: "terminated" })
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::model::agent::PauseReason;

    fn stopped_in(workflow: &std::path::Path) -> Agent {
        let mut agent =
            Agent::main("JUDGE.md".into(), workflow.to_path_buf(), PathBuf::from("/work"), PathBuf::from("/tasks"));
        agent.pending_result = Some("draft one".into());
        agent.pause(PauseReason::Breakpoint, "stopped before JUDGE.md (--break-before)".into());
        agent
    }

    fn workflow() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("a directory");
        for (name, text) in [("JUDGE.md", "Judge {{input}}.\n"), ("VERDICT.sh", "echo '<result>ok</result>'\n")] {
            std::fs::write(dir.path().join(name), text).expect("a state");
        }
        dir
    }

    #[test]
    fn an_edit_changes_what_it_names_and_records_each_change_before_and_after() {
        let dir = workflow();
        let mut agent = stopped_in(dir.path());
        let edit = Edit { input: Some("draft two".into()), prompt: Some("Judge harder.".into()), goto: None };
        let events = edit_agent(&mut agent, &edit, "resume", Some("ada".into())).expect("edited");
        assert_eq!(
            (agent.pending_result.as_deref(), agent.prompt_override.as_deref()),
            (Some("draft two"), Some("Judge harder."))
        );
        let changes: Vec<(EditField, Option<String>, Option<String>)> = events
            .into_iter()
            .filter_map(|event| match event {
                Event::AgentEdited { field, before, after, by, user, .. }
                    if by == "resume" && user.as_deref() == Some("ada") =>
                {
                    Some((field, before, after))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            changes,
            [
                (EditField::Input, Some("draft one".into()), Some("draft two".into())),
                (EditField::Prompt, None, Some("Judge harder.".into())),
            ]
        );
    }

    #[test]
    fn a_goto_is_resolved_in_the_agents_workflow_and_clears_the_breakpoint_it_passed() {
        let dir = workflow();
        let mut agent = stopped_in(dir.path());
        agent.breakpoint_passed = true;
        let edit = Edit { goto: Some("VERDICT".into()), ..Edit::default() };
        edit_agent(&mut agent, &edit, "control", None).expect("edited");
        assert_eq!((agent.current_state.as_ref(), agent.breakpoint_passed), ("VERDICT.sh", false));
        let far = Edit { goto: Some("VERDIKT".into()), ..Edit::default() };
        match edit_agent(&mut agent, &far, "control", None) {
            Err(EditRefusal::Unreachable { reason, .. }) => {
                assert!(reason.ends_with("did you mean `VERDICT.sh`?"), "{reason}")
            }
            other => panic!("expected an unreachable goto, got {other:?}"),
        }
    }

    #[test]
    fn an_agent_that_is_not_paused_or_a_prompt_for_a_script_is_refused_and_left_as_it_was() {
        let dir = workflow();
        let mut agent = stopped_in(dir.path());
        agent.unpause();
        let before = agent.clone();
        let edit = Edit { input: Some("x".into()), ..Edit::default() };
        assert_eq!(edit_agent(&mut agent, &edit, "serve", None), Err(EditRefusal::NotPaused { status: "running" }));
        assert_eq!(agent, before);
        let mut agent = stopped_in(dir.path());
        let before = agent.clone();
        let edit = Edit { goto: Some("VERDICT".into()), prompt: Some("p".into()), input: Some("x".into()) };
        assert_eq!(
            edit_agent(&mut agent, &edit, "serve", None),
            Err(EditRefusal::PromptForScript { state: "VERDICT.sh".into() })
        );
        assert_eq!(agent, before, "all or nothing");
    }
}
