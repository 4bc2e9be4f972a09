//! Stopping an agent at a breakpoint (`model::breakpoints`): only the agent that
//! reached it stops; the others go on, first-completed as always, and the run ends
//! paused (exit 3) once nothing else can run — or, when its supervisor continues
//! agents while it goes on (`--on-ask json`, `run::control`), stays live.
//!
//! A stop is a pause (`PauseReason::Breakpoint`) committed with the loop's next
//! commit, before its `AgentPaused` event is published or anything else launches,
//! so a crash leaves it where `baton resume` finds it. Every stop is *before* a
//! state: `--break-after` and `--step` stop the agent before its next state, so
//! what it would run next can always be shown (`baton logs --next`).

use crate::ids::StateName;
use crate::model::agent::{AgentStatus, PauseReason};
use crate::model::breakpoints::{BreakpointHit, Breakpoints};
use crate::run::control::{BreakpointLine, ContinueAgent};
use crate::run::edit::{Edit, edit_agent};
use crate::run::step_outcome::paused_event;
use crate::run::workflow_loop::WorkflowLoop;
use crate::workflow::resolution::resolve_states;

impl WorkflowLoop {
    /// The agent at `index` is about to launch: stop it at a `--break-before` on its
    /// state, unless it was just continued from there. Returns whether it stopped.
    pub(super) fn stop_before(&mut self, index: usize) -> bool {
        let agent = &mut self.state.agents[index];
        if std::mem::take(&mut agent.breakpoint_passed) {
            self.changes.touch(agent);
            return false;
        }
        match self.state.launch_params.breakpoints.before(&agent.current_state) {
            Some(hit) => {
                self.stop_at(index, &hit);
                true
            }
            None => false,
        }
    }

    /// The agent at `index` completed a step at `from` and is ready for its next:
    /// stop it at a `--break-after` on `from`, or under `--step`. Returns whether
    /// it stopped.
    pub(super) fn stop_after(&mut self, index: usize, from: &StateName) -> bool {
        match self.state.launch_params.breakpoints.after(from) {
            Some(hit) => {
                self.stop_at(index, &hit);
                true
            }
            None => false,
        }
    }

    fn stop_at(&mut self, index: usize, hit: &BreakpointHit) {
        let agent = &mut self.state.agents[index];
        agent.queued = false;
        agent.pause(PauseReason::Breakpoint, hit.message());
        self.changes.touch(agent);
        self.outbox.extend(paused_event(agent));
        self.stopped.insert(agent.id.clone());
        self.dirty = true;
    }

    /// The run stays live for agents stopped at breakpoints: its supervisor may
    /// continue them (`continue_agent` lines under `--on-ask json`).
    pub(super) fn held_at_breakpoints(&self) -> bool {
        !self.stopped.is_empty() && self.questions.supervised()
    }

    /// `{"continue_agent": …}`: edit the paused agent as asked, then run it on.
    pub(super) fn continue_agent(&mut self, line: ContinueAgent) -> Result<(), String> {
        let id = line.agent_id;
        let Some(index) = self.position(&id) else {
            return Err(match crate::run::edit::terminated(&self.state, &id) {
                Some(refusal) => refusal.message(&id),
                None => format!("no agent `{id}` in this run"),
            });
        };
        let edit = Edit { input: line.input, goto: line.goto, prompt: line.prompt };
        let by = line.by.unwrap_or_else(|| "control".to_string());
        let agent = &mut self.state.agents[index];
        // A usage limit's pause ends by itself; a continue would run into the limit.
        if agent.status == AgentStatus::Paused && agent.pause_reason == Some(PauseReason::UsageLimit) {
            return Err(format!("agent `{id}` waits for its usage limit to reset"));
        }
        let events = edit_agent(agent, &edit, &by, line.user).map_err(|refusal| refusal.message(&id))?;
        agent.unpause();
        self.changes.touch(agent);
        // Published once the edit and the continue are committed.
        self.outbox.extend(events);
        self.stopped.remove(&id);
        self.ready.push_back(id);
        self.dirty = true;
        Ok(())
    }

    /// `{"breakpoints": …}`: the run's breakpoints from now on, saved (a snapshot)
    /// before any agent reaches them. A name that does not resolve refuses the line.
    pub(super) fn set_breakpoints(&mut self, line: BreakpointLine) -> Result<(), String> {
        let scope = self.state.scope_dir.clone();
        let resolve = |names: &[String]| {
            resolve_states(&scope, names)
                .map(|states| states.into_iter().collect())
                .map_err(|(_, error)| error.to_string())
        };
        let breakpoints = Breakpoints { before: resolve(&line.before)?, after: resolve(&line.after)?, step: line.step };
        self.state.launch_params.breakpoints = breakpoints;
        self.compact();
        Ok(())
    }
}
