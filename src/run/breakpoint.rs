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

use crate::model::agent::PauseReason;
use crate::model::breakpoints::BreakpointHit;
use crate::run::step_outcome::paused_event;
use crate::run::workflow_loop::WorkflowLoop;

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
    pub(super) fn stop_after(&mut self, index: usize, from: &crate::ids::StateName) -> bool {
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
        self.dirty = true;
        // A stopped worker has ended for now, for its parent's join.
        self.joins_due |= !self.joins.is_empty();
    }
}
