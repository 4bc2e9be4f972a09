//! Cancelling one agent of a live run (`{"cancel_agent": ID}` under `--on-ask json`,
//! `run::control`) while the rest of the run goes on.
//!
//! A cancelled agent is paused (`cancelled`): it keeps everything it has done, and
//! `baton resume` continues it like any paused agent. Nothing committed is undone and
//! no step is killed: an agent whose step runs finishes it, the step's outcome is
//! committed as usual, and only then is the agent paused instead of going on — so a
//! cancel never leaves half-done work that a resume would have to guess about. A step
//! that still waits out a retry's delay has not begun, so it is withdrawn at once.
//!
//! An agent with no step running is paused at once: one ready or queued for a slot, one
//! waiting for a usage limit's reset, one joining (it joins again on resume), and one
//! asking — its ask no longer waits and is dropped as a timed-out one is, so a resume
//! runs the state that asked again.

use crate::ids::AgentId;
use crate::model::agent::{AgentStatus, PauseReason};
use crate::run::step_outcome::paused_event;
use crate::run::workflow_loop::WorkflowLoop;

/// What a cancelled agent's `AgentPaused` event and `baton status` say.
const CANCELLED: &str = "cancelled by request";

impl WorkflowLoop {
    /// Cancel agent `id`: pause it now, or once its running step ends. `Err` says
    /// why nothing was done.
    pub(super) fn cancel_agent(&mut self, id: &AgentId) -> Result<(), String> {
        if self.running.contains(id) {
            if !self.cancelling.insert(id.clone()) {
                return Err(format!("agent `{id}` is already cancelled: it pauses when its step ends"));
            }
            // A step waiting out a retry's delay has not begun: withdraw it.
            if let Some(withdraw) = self.delayed.remove(id) {
                let _ = withdraw.send(());
            }
            return Ok(());
        }
        if self.position(id).is_none() {
            return Err(if self.state.terminated.iter().any(|agent| &agent.id == id) {
                format!("agent `{id}` has terminated")
            } else {
                format!("no agent `{id}` in this run")
            });
        }
        self.pause_cancelled(id)
    }

    /// The step of cancelled agent `id` ended and its outcome was applied: pause the
    /// agent, unless it terminated or the step paused it already.
    pub(super) fn cancel_after_step(&mut self, id: &AgentId) {
        if self.position(id).is_some() {
            let _ = self.pause_cancelled(id);
        }
    }

    /// Pause agent `id`, which runs no step, as cancelled.
    fn pause_cancelled(&mut self, id: &AgentId) -> Result<(), String> {
        let Some(index) = self.position(id) else {
            return Err(format!("no agent `{id}` in this run"));
        };
        let agent = &self.state.agents[index];
        let status = agent.status;
        match (status, agent.pause_reason) {
            // Paused for good until a resume: nothing to cancel. (A usage limit's
            // pause ends by itself when the limit resets, so that one is cancelled.)
            (AgentStatus::Paused, Some(reason)) if reason != PauseReason::UsageLimit => {
                return Err(format!("agent `{id}` is already paused ({reason})"));
            }
            (AgentStatus::Asking, _) => self.questions.forget(id),
            (AgentStatus::Joining, _) => {
                self.joins.remove(id);
            }
            _ => {}
        }
        self.throttled.remove(id);
        let agent = &mut self.state.agents[index];
        agent.queued = false;
        if status == AgentStatus::Asking {
            agent.drop_ask(PauseReason::Cancelled, CANCELLED.to_string());
        } else {
            agent.pause(PauseReason::Cancelled, CANCELLED.to_string());
        }
        self.changes.touch(agent);
        self.outbox.extend(paused_event(agent));
        self.dirty = true;
        // A paused worker has ended, for its parent's join.
        self.joins_due |= !self.joins.is_empty();
        Ok(())
    }
}
