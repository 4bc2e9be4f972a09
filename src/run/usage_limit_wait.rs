//! Waiting out a usage limit (R10.3, A15): when every remaining agent is paused
//! by one, the run sleeps until the latest known reset plus a buffer — or polls
//! with backoff when a reset time is unknown — then un-pauses them.

use std::time::Duration;

use tokio::sync::mpsc;

use crate::events::Event;
use crate::model::agent::{Agent, AgentStatus, PauseReason};
use crate::run::shutdown::ShutdownSignal;
use crate::run::workflow_loop::{Stop, WorkflowLoop};

impl WorkflowLoop {
    /// How long to wait when every remaining agent is paused by a usage limit and
    /// waiting is allowed (R10.3, A15): until the latest known reset plus the buffer,
    /// or, when some reset time is unknown, a poll that backs off to an hour.
    pub(super) fn usage_limit_wait(&self) -> Option<Duration> {
        if self.limits.no_wait || self.fatal.is_some() || self.stop.is_some() || self.state.agents.is_empty() {
            return None;
        }
        let limited = |agent: &Agent| agent.pause_reason == Some(PauseReason::UsageLimit);
        // A joining agent waits for its workers, which are among the others.
        let joining = |agent: &Agent| agent.status == AgentStatus::Joining;
        if !self.state.agents.iter().all(|agent| joining(agent) || (!agent.is_active() && limited(agent)))
            || self.state.agents.iter().all(joining)
        {
            return None;
        }
        let now = jiff::Timestamp::now().as_second();
        let resets: Option<Vec<i64>> =
            self.state.agents.iter().filter(|agent| !joining(agent)).map(|agent| agent.limit_resets_at).collect();
        Some(match resets {
            Some(resets) => {
                let latest = resets.into_iter().max().unwrap_or(now);
                Duration::from_secs(latest.saturating_sub(now).max(0) as u64) + self.limits.limit_buffer
            }
            None => self.limits.limit_poll.saturating_mul(1 << self.limit_polls.min(8)).min(Duration::from_secs(3600)),
        })
    }

    /// Wait `wait`, then un-pause the limited agents. False when a signal cut the wait short.
    pub(super) async fn wait_out_limit(
        &mut self,
        wait: Duration,
        signals: &mut mpsc::UnboundedReceiver<ShutdownSignal>,
    ) -> bool {
        let until = jiff::Timestamp::now() + jiff::SignedDuration::try_from(wait).unwrap_or_default();
        self.outbox.push(Event::WorkflowWaiting {
            run_id: self.state.run_id.clone(),
            until: until.to_string(),
            wait_seconds: wait.as_secs(),
        });
        self.commit_or_fail(None);
        self.publish();
        self.settle();
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            Some(signal) = signals.recv() => {
                self.stop = Some(Stop::Signal(signal));
                return false;
            }
        }
        // An agent stopped at a breakpoint stays stopped: its author continues it.
        let paused = |agent: &Agent| agent.status == AgentStatus::Paused && !agent.is_at_breakpoint();
        if self.state.agents.iter().filter(|agent| paused(agent)).any(|agent| agent.limit_resets_at.is_none()) {
            self.limit_polls += 1;
        }
        self.outbox.push(Event::WorkflowResuming { run_id: self.state.run_id.clone() });
        for agent in self.state.agents.iter_mut().filter(|agent| paused(agent)) {
            agent.unpause();
            self.changes.touch(agent);
            self.ready.push_back(agent.id.clone());
        }
        self.dirty = true;
        true
    }
}
