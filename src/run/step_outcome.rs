//! Applying a finished step to the run: a success applies its transition (a pure
//! function) and queues the events that describe it; a failure is retried,
//! pauses the agent, or stops the run, as its class says (§10.1, A13, A14).

use std::collections::BTreeMap;

use crate::events::Event;
use crate::executor::ExecutionResult;
use crate::executor::step_failure::{FailureClass, StepFailure};
use crate::ids::{AgentId, BackendName};
use crate::model::agent::{Agent, AgentStatus, PauseReason, PendingAsk, Worktree};
use crate::model::run_state::TerminatedAgent;
use crate::process::git;
use crate::run::outcome::OpenFiles;
use crate::run::workflow_loop::{FatalError, Stop, WorkflowLoop};
use crate::store::journal::StepSummary;
use crate::text::excerpt::cut_bytes;
use crate::transition::Transition;
use crate::transition::apply::{Applied, IsolationBase, TransitionEnv, apply_transition};

impl WorkflowLoop {
    pub(super) fn apply_success(
        &mut self,
        index: usize,
        result: ExecutionResult,
        isolation: Option<IsolationBase>,
    ) -> StepSummary {
        let mut agent = self.state.agents[index].clone();
        if let Some(session_id) = result.session_id {
            agent.session_id = Some(session_id);
            agent.session_message = result.session_message;
            agent.session_backend = result.session_backend.filter(|backend| *backend != BackendName::Claude);
        }
        agent.continue_and_fork = false;
        self.state.total_cost_usd += result.cost_usd;
        let mut env = TransitionEnv {
            task_folders: &self.task_folders,
            fork_counters: &mut self.state.fork_counters,
            now: jiff::Timestamp::now(),
            isolation: isolation.as_ref(),
        };
        let Applied { agent: next, workers, terminated_with } = apply_transition(&agent, &result.transition, &mut env);
        if !workers.is_empty() {
            self.changes.counters.insert(agent.id.clone());
        }
        let summary = StepSummary {
            agent_id: agent.id.clone(),
            from_state: agent.current_state.clone(),
            to_state: next.as_ref().map(|next| next.current_state.clone()),
            transition_type: result.transition.kind_name().to_string(),
            metadata: transition_metadata(&result.transition, &workers),
        };
        self.outbox.push(transition_event(&summary, self.state.journal_commit + 1, false));
        for worker in &workers {
            self.outbox.push(Event::AgentSpawned {
                parent_agent_id: agent.id.clone(),
                new_agent_id: worker.id.clone(),
                initial_state: worker.current_state.clone(),
            });
        }
        let stack_after = next.as_ref().map_or(0, |next| next.stack.len());
        self.changes.stepped(&agent.id, agent.stack.len(), stack_after);
        match next {
            Some(mut next) => {
                next.retry_count = 0;
                // `--prompt-file` replaced this step's prompt only.
                next.prompt_override = None;
                let ready = !matches!(next.status, AgentStatus::Asking | AgentStatus::Joining);
                if next.status == AgentStatus::Asking {
                    self.asked(&mut next);
                } else if next.status == AgentStatus::Joining {
                    self.started_joining(&next);
                }
                self.state.agents[index] = next;
                if ready && !self.stop_after(index, &agent.current_state) {
                    self.ready.push_back(agent.id.clone());
                }
            }
            None => {
                self.remove_agent(index);
            }
        }
        if let Some(result) = terminated_with {
            self.outbox.push(Event::AgentTerminated { agent_id: agent.id.clone(), result: result.clone() });
            // A worker in its own worktree leaves its work committed on its branch,
            // before the termination is journalled (`docs/isolation.md`).
            let diff_stat =
                agent.worktree.as_ref().map(|worktree| commit_worktree(&agent.id, &self.state.run_id, worktree));
            let terminated = TerminatedAgent { id: agent.id, result, worktree: agent.worktree, diff_stat };
            self.changes.terminated.push(terminated.clone());
            self.state.terminated.push(terminated);
        }
        for worker in &workers {
            self.changes.agents.insert(worker.id.clone());
            self.ready.push_back(worker.id.clone());
        }
        self.append_agents(workers);
        self.state.steps_completed += 1;
        summary
    }

    /// `agent` just asked (R11.3, R11.4): where asks are answered while the run goes
    /// on (`run::questions`) it waits for its answer; under `--on-ask pause` (or once
    /// that source's input ended) launching stops so the run can drain and exit 2;
    /// otherwise the ask is refused and the agent paused.
    fn asked(&mut self, agent: &mut Agent) {
        let Some(ask) = agent.ask.clone() else { return };
        if !ask.display_files().is_empty()
            && let Err(problem) = stage_display_files(agent, &ask)
        {
            let message = format!("{}: cannot stage its display_files: {problem}", ask.id);
            agent.drop_ask(PauseReason::AskStageError, message);
            self.outbox.extend(paused_event(agent));
            return;
        }
        let answered_live = self.questions.live();
        if answered_live || self.state.launch_params.on_ask.unwrap_or_default().lets_agents_ask() {
            if answered_live {
                self.questions.wait_for(agent.id.clone(), &ask);
            } else if self.stop.is_none() {
                self.stop = Some(Stop::Ask);
            }
            self.outbox.push(Event::AgentAsking {
                agent_id: agent.id.clone(),
                ask_id: ask.id,
                prompt: ask.prompt,
                next_state: ask.next,
            });
            return;
        }
        let message = format!(
            "state `{}` produced <ask> but --on-ask=reject is in effect; resume with `baton resume {} --on-ask pause` \
             to let the workflow ask",
            agent.current_state, self.state.run_id
        );
        agent.drop_ask(PauseReason::AskRejected, message);
        self.outbox.extend(paused_event(agent));
    }

    pub(super) fn apply_failure(&mut self, index: usize, failure: StepFailure) {
        if failure.class == FailureClass::Throttled {
            return self.throttle(index, failure);
        }
        let max_attempts = self.retry.max_attempts;
        self.state.total_cost_usd += failure.cost_usd;
        let agent = &mut self.state.agents[index];
        self.changes.touch(agent);
        self.outbox.push(Event::ErrorOccurred {
            agent_id: agent.id.clone(),
            error_type: failure.kind,
            message: failure.message.clone(),
            state: agent.current_state.clone(),
            is_retryable: failure.is_retryable(),
            retry_count: agent.retry_count + u32::from(failure.is_retryable()),
            max_retries: if failure.is_retryable() { max_attempts } else { 0 },
        });
        let pause = match failure.class {
            FailureClass::Fatal => {
                let fatal = FatalError {
                    agent: Some((agent.id.clone(), agent.current_state.clone())),
                    message: failure.message,
                };
                self.record_fatal(fatal);
                return;
            }
            FailureClass::Retryable(reason) => {
                agent.retry_count += 1;
                if agent.retry_count < max_attempts {
                    self.ready.push_back(agent.id.clone());
                    return;
                }
                reason
            }
            FailureClass::UsageLimit { resets_at } => {
                agent.limit_resets_at = resets_at;
                PauseReason::UsageLimit
            }
            FailureClass::Pause(reason) => reason,
            FailureClass::Throttled => return,
        };
        agent.pause(pause, failure.message);
        self.outbox.extend(paused_event(agent));
    }
}

/// Commit everything in a terminating worker's worktree on its branch (as Baton,
/// `baton: <agent> (<run>)`), and say what the branch changed since its base: the
/// diff summary, or why there is none.
fn commit_worktree(id: &AgentId, run_id: &crate::ids::RunId, worktree: &Worktree) -> String {
    let message = format!("baton: {id} ({run_id})");
    match git::commit_all(&worktree.path, &message).and_then(|()| git::diff_stat(&worktree.path, &worktree.base)) {
        Ok(stat) => stat,
        Err(error) => format!("baton could not commit the worktree's changes: {error}"),
    }
}

/// The `AgentPaused` event of a paused `agent`: its reason and message, as
/// `Agent::pause` recorded them (`None` if it is not paused).
pub(crate) fn paused_event(agent: &Agent) -> Option<Event> {
    Some(Event::AgentPaused {
        agent_id: agent.id.clone(),
        state: agent.current_state.clone(),
        reason: agent.pause_reason?.to_string(),
        message: agent.error.clone()?,
    })
}

impl WorkflowLoop {
    /// A step that could not start for lack of resources (too many open files):
    /// it waits for a running step to finish and tries again, and at most as many
    /// steps as are running now run from here on. With nothing running, waiting
    /// cannot help: that is fatal.
    fn throttle(&mut self, index: usize, failure: StepFailure) {
        let agent = &self.state.agents[index];
        if self.running.is_empty() {
            let fatal = FatalError {
                agent: Some((agent.id.clone(), agent.current_state.clone())),
                message: format!("{} (and no other step is running to make room)", failure.message),
            };
            return self.record_fatal(fatal);
        }
        let limit = self.limits.open_files.map_or(0, |files| files.limit);
        let max_running = self.running.len();
        if self.limits.open_files.is_none_or(|files| max_running < files.max_running) {
            self.limits.open_files = Some(OpenFiles { limit, max_running });
            self.throttle_announced = false;
        }
        self.throttled.insert(agent.id.clone());
        self.queue.push_front(agent.id.clone());
    }
}

/// The trace event of a committed step (`recovered` when re-published after a crash).
pub(crate) fn transition_event(step: &StepSummary, commit: u64, recovered: bool) -> Event {
    Event::TransitionOccurred {
        agent_id: step.agent_id.clone(),
        from_state: step.from_state.clone(),
        to_state: step.to_state.clone(),
        transition_type: step.transition_type.clone(),
        metadata: step.metadata.clone(),
        commit,
        recovered,
    }
}

/// How much of an input or a payload a step's summary keeps: the whole value is
/// in the agent (or its result) already, and the summary is journaled, kept in
/// the snapshot and traced, so a large value must not be stored twice.
const METADATA_VALUE_BYTES: usize = 4096;

fn transition_metadata(transition: &Transition, workers: &[Agent]) -> BTreeMap<String, String> {
    let mut metadata = BTreeMap::new();
    match transition {
        Transition::Goto { input, .. } | Transition::Reset { input, .. } => {
            if let Some(input) = input {
                metadata.insert("input".to_string(), cut_bytes(input, METADATA_VALUE_BYTES));
            }
        }
        Transition::Call { return_state, input, .. } | Transition::Function { return_state, input, .. } => {
            metadata.insert("return".to_string(), return_state.to_string());
            if let Some(input) = input {
                metadata.insert("input".to_string(), cut_bytes(input, METADATA_VALUE_BYTES));
            }
        }
        Transition::Result { payload } => {
            metadata.insert("payload".to_string(), cut_bytes(payload, METADATA_VALUE_BYTES));
        }
        Transition::CallWorkflow { callee: entry, return_state, input, .. } => {
            metadata.insert("return".to_string(), return_state.to_string());
            metadata.insert("workflow".to_string(), entry.scope_dir.display().to_string());
            if let Some(input) = input {
                metadata.insert("input".to_string(), cut_bytes(input, METADATA_VALUE_BYTES));
            }
        }
        Transition::ResetWorkflow { entry, input, .. } => {
            metadata.insert("workflow".to_string(), entry.scope_dir.display().to_string());
            if let Some(input) = input {
                metadata.insert("input".to_string(), cut_bytes(input, METADATA_VALUE_BYTES));
            }
        }
        Transition::Ask { next, .. } => {
            metadata.insert("next".to_string(), next.to_string());
        }
        Transition::Join(join) | Transition::MultiFork { join: Some(join), .. } => {
            metadata.insert("join".to_string(), join.next.to_string());
            if let Some(timeout) = join.timeout {
                metadata.insert("timeout".to_string(), crate::text::duration::format_duration(timeout));
            }
        }
        Transition::Fork { .. } | Transition::MultiFork { .. } => {}
    }
    if !workers.is_empty() {
        let ids: Vec<&str> = workers.iter().map(|worker| &*worker.id).collect();
        metadata.insert("workers".to_string(), ids.join(","));
    }
    metadata
}

/// R3.29: copy an ask's `display_files` (relative to the agent's directory) into
/// `<task_folder>/asks/<ask_id>/`, each under its label or name.
fn stage_display_files(agent: &Agent, ask: &PendingAsk) -> Result<(), String> {
    let folder = agent.task_folder.join("asks").join(&ask.id);
    std::fs::create_dir_all(&folder).map_err(|error| format!("{}: {error}", folder.display()))?;
    for file in ask.display_files() {
        let from = agent.cwd.join(&file.source);
        std::fs::copy(&from, folder.join(&file.name)).map_err(|error| format!("{}: {error}", from.display()))?;
    }
    Ok(())
}
