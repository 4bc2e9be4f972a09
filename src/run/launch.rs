//! Launching steps: which ready agents start (FIFO under `--max-agents`, R2.5 g)
//! and how a planned step becomes a task in the loop's `JoinSet`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::events::Event;
use crate::executor::StepInput;
use crate::ids::SessionId;
use crate::run::workflow_loop::{FatalError, StepCompletion, WorkflowLoop};
use crate::text::state_name;

/// How long a step that could not start for lack of resources waits before it
/// tries again (a running step has finished by then, or soon will).
const THROTTLED_RETRY_DELAY: Duration = Duration::from_millis(50);

impl WorkflowLoop {
    /// Choose the ready agents to start, oldest first, up to `max_agents` running
    /// (R2.5 g); mark the rest `queued`. The choice is committed before any starts.
    ///
    /// Under `--max-steps N` a step starts only while completed and running steps
    /// are fewer than N, so no more than N steps ever complete, however many agents
    /// a fork spawns (a failed step does not count, and its retry may start).
    pub(super) fn plan_launches(&mut self) -> Vec<(usize, Duration)> {
        let agent_slots = match self.limits.max_agents {
            Some(max) => (max as usize).saturating_sub(self.running.len()),
            None => usize::MAX,
        };
        let step_slots = match self.limits.max_steps {
            Some(max) => {
                let committed = self.state.steps_completed.saturating_add(self.running.len() as u64);
                usize::try_from(max.saturating_sub(committed)).unwrap_or(usize::MAX)
            }
            None => usize::MAX,
        };
        let file_slots = match self.limits.open_files {
            Some(files) => files.max_running.saturating_sub(self.running.len()),
            None => usize::MAX,
        };
        let slots = agent_slots.min(step_slots).min(file_slots);
        let mut planned = Vec::new();
        // Agents that already waited for a slot go first, in the order they became
        // ready; then the newly ready ones.
        while planned.len() < slots {
            let Some(id) = self.queue.pop_front().or_else(|| self.ready.pop_front()) else { break };
            let Some(index) = self.position(&id) else { continue };
            let agent = &mut self.state.agents[index];
            if !agent.is_active() || self.running.contains(&id) {
                continue;
            }
            if self.stop_before(index) {
                continue;
            }
            let agent = &mut self.state.agents[index];
            if let Err(error) = std::fs::create_dir_all(&agent.task_folder) {
                let fatal = FatalError {
                    agent: Some((agent.id.clone(), agent.current_state.clone())),
                    message: format!("cannot create task folder {}: {error}", agent.task_folder.display()),
                };
                self.queue.push_front(id);
                self.record_fatal(fatal);
                return planned;
            }
            agent.steps_started += 1;
            agent.queued = false;
            // A prompt step's new conversation gets its id now, journalled with the launch.
            agent.new_session_id = (!state_name::is_script(&agent.current_state))
                .then(|| SessionId::from(uuid::Uuid::new_v4().to_string()));
            let delay = if self.throttled.remove(&id) {
                THROTTLED_RETRY_DELAY
            } else {
                self.retry.delay_before_retry(agent.retry_count)
            };
            planned.push((index, delay));
            self.changes.touch(agent);
            self.running.insert(id);
            self.dirty = true;
        }
        if planned.len() >= file_slots
            && !(self.queue.is_empty() && self.ready.is_empty())
            && !std::mem::replace(&mut self.throttle_announced, true)
            && let Some(files) = self.limits.open_files
        {
            self.outbox.push(Event::WorkflowThrottled {
                run_id: self.state.run_id.clone(),
                max_running_steps: files.max_running,
                open_file_limit: files.limit,
            });
        }
        // The newly ready that found no slot wait in the queue, marked once: a long
        // queue costs nothing per step after that.
        while let Some(id) = self.ready.pop_front() {
            let Some(index) = self.position(&id) else { continue };
            let agent = &mut self.state.agents[index];
            if !agent.is_active() || self.running.contains(&id) {
                continue;
            }
            if !agent.queued {
                agent.queued = true;
                self.changes.touch(agent);
                self.dirty = true;
            }
            self.queue.push_back(id);
        }
        planned
    }

    /// Start the step of the agent at `index` (already planned and committed).
    pub(super) fn start(&mut self, index: usize, delay: Duration) {
        // A delayed step can be withdrawn until it begins (`run::cancel`).
        let withdrawn = (!delay.is_zero()).then(|| {
            let (withdraw, withdrawn) = oneshot::channel();
            self.delayed.insert(self.state.agents[index].id.clone(), withdraw);
            withdrawn
        });
        let agent = &self.state.agents[index];
        let input = StepInput {
            agent: agent.clone(),
            step: agent.steps_started,
            attempt: agent.retry_count + 1,
            total_cost_at_launch: self.state.total_cost_usd,
        };
        let executor = self.executors.for_state(&agent.current_state);
        let context = Arc::clone(&self.context);
        self.tasks.spawn(async move {
            let agent_id = input.agent.id.clone();
            if let Some(withdrawn) = withdrawn {
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    Ok(()) = withdrawn => return StepCompletion { agent_id, result: None },
                }
            }
            // A worker in its own worktree: make it first if it is not there yet.
            let made = if input.agent.worktree.is_some() {
                let agent = input.agent.clone();
                tokio::task::spawn_blocking(move || super::worktree::ensure_worktree(&agent)).await.unwrap_or(Ok(()))
            } else {
                Ok(())
            };
            let result = match made {
                Ok(()) => executor.execute(input, &context).await,
                Err(failure) => Err(failure),
            };
            StepCompletion { agent_id, result: Some(result) }
        });
    }
}
