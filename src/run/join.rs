//! Joins (`docs/join.md`): an agent that emitted `<join>` is `joining` — never
//! launched — until every worker it forked since its last join has ended
//! (terminated, or paused), or its timeout passed; then it continues at the
//! join's `next` with the workers' outcomes, in fork order, as its input.
//!
//! Completing a join is a change like any other: it is committed with the loop
//! turn that made it, before the agent's next step starts, and nothing about it
//! lives only in memory — a resumed run finds the agent `joining` with the same
//! workers and evaluates the join again.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use tokio::time::Instant;

use crate::events::{Event, JoinedWorker};
use crate::ids::AgentId;
use crate::model::agent::{Agent, AgentStatus, JoinResult, JoinedStatus, PauseReason};
use crate::run::workflow_loop::WorkflowLoop;

/// What the loop keeps in memory about one joining agent (rebuilt from the state
/// on resume).
#[derive(Clone, Debug, Default)]
pub(super) struct JoinWatch {
    /// When its timeout passes, on tokio's clock (so paused-time tests see it).
    deadline: Option<Instant>,
    /// How many of its first workers are known to have terminated: termination
    /// is final, so they are not looked at again.
    terminated_prefix: usize,
}

impl JoinWatch {
    /// The watch of an agent that is joining, its deadline counted from the wall
    /// clock it was persisted with.
    pub(super) fn of(agent: &Agent) -> JoinWatch {
        let deadline = agent.join.as_ref().and_then(|join| join.deadline.as_deref()).map(|deadline| {
            let left = deadline
                .parse::<jiff::Timestamp>()
                .ok()
                .and_then(|deadline| {
                    std::time::Duration::try_from(deadline.duration_since(jiff::Timestamp::now())).ok()
                })
                .unwrap_or_default();
            Instant::now() + left
        });
        JoinWatch { deadline, terminated_prefix: 0 }
    }
}

/// The joining agents of `agents`, for a loop that starts driving them.
pub(super) fn watches(agents: &[Agent]) -> BTreeMap<AgentId, JoinWatch> {
    agents
        .iter()
        .filter(|agent| agent.status == AgentStatus::Joining)
        .map(|agent| (agent.id.clone(), JoinWatch::of(agent)))
        .collect()
}

impl WorkflowLoop {
    /// `agent` (already in the run at `agents[index]`) just emitted a join: watch it.
    pub(super) fn started_joining(&mut self, agent: &Agent) {
        let Some(join) = &agent.join else { return };
        let watch = JoinWatch::of(agent);
        let timeout_ms = watch.deadline.map(|deadline| deadline.duration_since(Instant::now()).as_millis() as u64);
        self.outbox.push(Event::JoinWaiting {
            agent_id: agent.id.clone(),
            workers: join.workers.clone(),
            next_state: join.next.clone(),
            timeout_ms,
        });
        self.joins.insert(agent.id.clone(), watch);
        self.joins_due = true;
    }

    /// The earliest join timeout, if any join has one.
    pub(super) fn next_join_deadline(&self) -> Option<Instant> {
        self.joins.values().filter_map(|watch| watch.deadline).min()
    }

    /// A join's timeout passed: look at the joins again.
    pub(super) fn join_timed_out(&mut self) {
        self.joins_due = true;
    }

    /// Continue every join whose workers have all ended or whose timeout passed.
    pub(super) fn settle_joins(&mut self) {
        if !std::mem::replace(&mut self.joins_due, false) {
            return;
        }
        let now = Instant::now();
        let ids: Vec<AgentId> = self.joins.keys().cloned().collect();
        for id in ids {
            let Some(index) = self.position(&id) else {
                self.joins.remove(&id);
                continue;
            };
            if self.state.agents[index].status != AgentStatus::Joining {
                self.joins.remove(&id);
                continue;
            }
            let timed_out = self.joins[&id].deadline.is_some_and(|deadline| deadline <= now);
            if let Some(results) = self.gather(&id, index, timed_out) {
                self.joins.remove(&id);
                self.complete_join(index, results, timed_out);
            }
        }
    }

    /// The outcomes of the workers agent `agents[index]` joins, in fork order, or
    /// `None` while one has not ended and the timeout has not passed.
    fn gather(&mut self, id: &AgentId, index: usize, timed_out: bool) -> Option<Vec<JoinResult>> {
        let workers = self.state.agents[index].join.as_ref().map(|join| join.workers.clone()).unwrap_or_default();
        // Workers are removed from the run when they terminate, so a worker still
        // present has not; the prefix known terminated is not looked at again.
        let mut prefix = self.joins[id].terminated_prefix;
        while prefix < workers.len() && self.position(&workers[prefix]).is_none() {
            prefix += 1;
        }
        if let Some(watch) = self.joins.get_mut(id) {
            watch.terminated_prefix = prefix;
        }
        let mut outcomes = Vec::with_capacity(workers.len());
        for worker in &workers[prefix..] {
            match self.position(worker).map(|at| &self.state.agents[at]) {
                None => outcomes.push(None),
                Some(agent) if self.counts_as_paused(agent) => outcomes.push(Some(JoinResult {
                    agent_id: worker.clone(),
                    status: JoinedStatus::Paused,
                    result: None,
                    error: agent.error.clone(),
                    branch: branch_of(agent),
                    diff_stat: None,
                })),
                Some(agent) if timed_out => outcomes.push(Some(JoinResult {
                    agent_id: worker.clone(),
                    status: JoinedStatus::Running,
                    result: None,
                    error: None,
                    branch: branch_of(agent),
                    diff_stat: None,
                })),
                Some(_) => return None,
            }
        }
        // Everything ended (or the timeout passed): look up the terminated workers'
        // results once, newest first (a worker terminates once).
        let mut results = Vec::with_capacity(workers.len());
        let terminated = |worker: &AgentId| {
            let entry = self.state.terminated.iter().rev().find(|agent| &agent.id == worker);
            JoinResult {
                agent_id: worker.clone(),
                status: JoinedStatus::Terminated,
                result: entry.map(|agent| agent.result.clone()),
                error: None,
                branch: entry.and_then(|agent| agent.worktree.as_ref()).map(|worktree| worktree.branch.clone()),
                diff_stat: entry.and_then(|agent| agent.diff_stat.clone()),
            }
        };
        results.extend(workers[..prefix].iter().map(terminated));
        for (worker, outcome) in workers[prefix..].iter().zip(outcomes) {
            results.push(outcome.unwrap_or_else(|| terminated(worker)));
        }
        Some(results)
    }

    /// A paused worker has ended, for a join — unless it waits out a usage limit,
    /// which the run does by itself (R10.3) unless `--no-wait` was given, or it is
    /// stopped at a breakpoint, where its author continues it (issue 24).
    fn counts_as_paused(&self, agent: &Agent) -> bool {
        agent.status == AgentStatus::Paused
            && agent.pause_reason != Some(PauseReason::Breakpoint)
            && (agent.pause_reason != Some(PauseReason::UsageLimit) || self.limits.no_wait)
    }

    /// The agent at `index` goes on at its join's `next`, its input the workers'
    /// outcomes (`results` for `$BATON_RESULTS`, a summary for `{{input}}`).
    fn complete_join(&mut self, index: usize, results: Vec<JoinResult>, timed_out: bool) {
        let agent = &mut self.state.agents[index];
        let Some(join) = agent.join.take() else { return };
        agent.status = AgentStatus::Active;
        agent.current_state = join.next.clone();
        agent.pending_result = Some(summary(&results));
        let workers = results
            .iter()
            .map(|result| JoinedWorker { agent_id: result.agent_id.clone(), status: result.status })
            .collect();
        agent.join_results = Some(results);
        self.changes.touch(agent);
        self.outbox.push(Event::JoinCompleted {
            agent_id: agent.id.clone(),
            next_state: join.next,
            workers,
            timed_out,
        });
        self.ready.push_back(agent.id.clone());
        self.dirty = true;
    }
}

/// The branch of a worker in its own worktree (`docs/isolation.md`).
fn branch_of(agent: &Agent) -> Option<String> {
    agent.worktree.as_ref().map(|worktree| worktree.branch.clone())
}

/// The `{{input}}` of the state after a join: one paragraph per worker, in fork
/// order, each with its result or why it has none.
pub(crate) fn summary(results: &[JoinResult]) -> String {
    if results.is_empty() {
        return "No workers to join.\n".to_string();
    }
    let count = |status: JoinedStatus| results.iter().filter(|result| result.status == status).count();
    let mut text = format!(
        "Joined {} {}: {} terminated, {} paused, {} still running.\n",
        results.len(),
        if results.len() == 1 { "worker" } else { "workers" },
        count(JoinedStatus::Terminated),
        count(JoinedStatus::Paused),
        count(JoinedStatus::Running),
    );
    for result in results {
        let _ = write!(text, "\n[{}] {}", result.agent_id, result.status.as_str());
        match (&result.result, &result.error) {
            (Some(payload), _) => {
                let _ = write!(text, ":\n{}\n", payload.trim_end());
            }
            (None, Some(error)) => {
                let _ = writeln!(text, ": {}", error.trim_end());
            }
            (None, None) => text.push('\n'),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, status: JoinedStatus, payload: Option<&str>, error: Option<&str>) -> JoinResult {
        JoinResult {
            agent_id: id.into(),
            status,
            result: payload.map(str::to_string),
            error: error.map(str::to_string),
            branch: None,
            diff_stat: None,
        }
    }

    #[test]
    fn the_summary_lists_every_worker_in_order_with_its_result_or_why_not() {
        let results = [
            result("main_w1", JoinedStatus::Terminated, Some("alpha\n"), None),
            result("main_w2", JoinedStatus::Paused, None, Some("claude exited with 1")),
            result("main_w3", JoinedStatus::Running, None, None),
        ];
        assert_eq!(
            summary(&results),
            "Joined 3 workers: 1 terminated, 1 paused, 1 still running.\n\n[main_w1] terminated:\nalpha\n\n\
             [main_w2] paused: claude exited with 1\n\n[main_w3] running\n"
        );
        assert_eq!(summary(&[]), "No workers to join.\n");
    }
}
