//! The workflow loop (seed §11): runs every active agent's step concurrently and
//! handles whichever finishes first (`JoinSet::join_next`, the Rust form of
//! asyncio's `FIRST_COMPLETED`).
//!
//! For each finished step, in order (R2.5): update the session, add the cost,
//! apply the transition (a pure function), commit the change to the journal, and
//! only then publish what happened and launch what became runnable — so nothing
//! observable ever depends on a change a crash could lose. A fatal error stops
//! launching but lets running siblings finish and record their step (A14); the
//! failed agent stays at the state that failed, so `baton resume` re-runs exactly
//! that step.
//!
//! Stopping: a first SIGINT/SIGTERM, or a bound (`--max-steps`, `--time-limit`),
//! stops launching and gives running steps `grace` to finish; then their process
//! groups get SIGTERM, and SIGKILL a few seconds later. A second signal skips to
//! SIGKILL. Steps stopped this way are not failures: they run again on resume.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::events::Event;
use crate::events::error_kind::ErrorKind;
use crate::events::metrics::RunMetrics;
use crate::executor::step_failure::StepFailure;
use crate::executor::{ExecutionContext, ExecutionResult, Executors};
use crate::ids::{AgentId, StateName};
use crate::model::agent::PauseReason;
use crate::model::bound::Bound;
use crate::model::run_state::{RunState, RunStatus};
use crate::process::stop_level::StopLevel;
use crate::run::changes::Changes;
use crate::run::join::{self, JoinWatch};
use crate::run::outcome::{RunLimits, RunOutcome};
use crate::run::questions::Questions;
use crate::run::retry_policy::RetryPolicy;
use crate::run::shutdown::ShutdownSignal;
use crate::store::failpoint;
use crate::store::journal::StepSummary;
use crate::store::persistence::RunPersistence;
use crate::store::syncer::Synced;
use crate::transition::apply::refusal;
use crate::transition::task_folder::TaskFolders;

/// How long process groups get between SIGTERM and SIGKILL.
const TERMINATE_TO_KILL: Duration = Duration::from_secs(5);

pub(super) struct StepCompletion {
    pub(super) agent_id: AgentId,
    /// `None`: the step was withdrawn before it began (its agent was cancelled while
    /// the step waited out a retry's delay); nothing ran.
    pub(super) result: Option<Result<ExecutionResult, StepFailure>>,
}

/// The first fatal error of the run.
pub(super) struct FatalError {
    /// The agent whose step failed, and its state; `None` when the failure is the
    /// run's own (its store, an internal error).
    pub(super) agent: Option<(AgentId, StateName)>,
    pub(super) message: String,
}

/// Why the loop stopped launching steps.
#[derive(Clone, Copy, Debug)]
pub(super) enum Stop {
    Signal(ShutdownSignal),
    Bound(Bound),
    /// An agent asks under `--on-ask pause`: the run drains and exits 2 (R11.4).
    Ask,
}

pub(crate) struct WorkflowLoop {
    pub(super) state: RunState,
    pub(super) persistence: RunPersistence,
    pub(super) context: Arc<ExecutionContext>,
    pub(super) executors: Executors,
    pub(super) task_folders: TaskFolders,
    pub(super) retry: RetryPolicy,
    pub(super) limits: RunLimits,
    pub(super) running: HashSet<AgentId>,
    /// Agents ready to launch, in the order they became ready (FIFO under `max_agents`).
    pub(super) ready: VecDeque<AgentId>,
    pub(super) tasks: JoinSet<StepCompletion>,
    pub(super) fatal: Option<FatalError>,
    pub(super) stop: Option<Stop>,
    pub(super) stop_level: watch::Sender<StopLevel>,
    pub(super) changes: Changes,
    /// Something changed since the last commit.
    pub(super) dirty: bool,
    /// The step awaiting its commit.
    pub(super) pending_step: Option<StepSummary>,
    /// Events to publish once the current change is committed.
    pub(super) outbox: Vec<Event>,
    /// Events of a step whose commit failed, published with the commit that saves it.
    pub(super) unsaved: Vec<Event>,
    /// When this invocation started driving the run (tokio's clock, so tests
    /// with paused time see the time they advanced).
    pub(super) started: Instant,
    pub(super) elapsed_at_start: u64,
    /// Where each agent is in `state.agents`, so no step scans them all.
    pub(super) positions: HashMap<AgentId, usize>,
    /// Agents marked `queued`, waiting for a slot, in the order they became ready;
    /// they launch before anything in `ready`.
    pub(super) queue: VecDeque<AgentId>,
    /// Agents whose step could not start for lack of resources; they retry soon.
    pub(super) throttled: HashSet<AgentId>,
    /// The open-file throttle was announced (once per invocation).
    pub(super) throttle_announced: bool,
    /// Usage-limit waits without a known reset time so far (for the backoff).
    pub(super) limit_polls: u32,
    /// How far the journal is durable (`store::syncer`).
    pub(super) synced: watch::Receiver<Synced>,
    /// False once the syncer thread ended (after a failed sync): stop watching it.
    pub(super) syncer_alive: bool,
    /// Asks answered while the run goes on (`--on-ask prompt` or `json`).
    pub(super) questions: Questions,
    /// Running agents cancelled (`run::cancel`): they pause when their step ends.
    pub(super) cancelling: HashSet<AgentId>,
    /// Launched steps still waiting out a delay, and how to withdraw each.
    pub(super) delayed: HashMap<AgentId, oneshot::Sender<()>>,
    /// The joining agents (`run::join`).
    pub(super) joins: BTreeMap<AgentId, JoinWatch>,
    /// Something a join may wait for happened: look at the joins again.
    pub(super) joins_due: bool,
    /// Agents this invocation stopped at a breakpoint (`run::breakpoint`).
    pub(super) stopped: HashSet<AgentId>,
}

impl WorkflowLoop {
    pub(crate) fn new(
        state: RunState,
        persistence: RunPersistence,
        context: Arc<ExecutionContext>,
        executors: Executors,
        retry: RetryPolicy,
        limits: RunLimits,
        stop_level: watch::Sender<StopLevel>,
    ) -> WorkflowLoop {
        let task_folders = TaskFolders::new(&context.baton_dir, &state.run_id);
        let ready = state.agents.iter().filter(|agent| agent.is_active()).map(|agent| agent.id.clone()).collect();
        let positions = state.agents.iter().enumerate().map(|(index, agent)| (agent.id.clone(), index)).collect();
        let elapsed_at_start = state.elapsed_ms;
        let synced = persistence.updates();
        // A resumed run evaluates its joins again before anything else.
        let joins = join::watches(&state.agents);
        let joins_due = !joins.is_empty();
        let questions = Questions::new(limits.answers);
        WorkflowLoop {
            state,
            persistence,
            context,
            executors,
            task_folders,
            retry,
            limits,
            running: HashSet::new(),
            ready,
            tasks: JoinSet::new(),
            fatal: None,
            stop: None,
            stop_level,
            changes: Changes::default(),
            dirty: false,
            pending_step: None,
            outbox: Vec::new(),
            unsaved: Vec::new(),
            started: Instant::now(),
            elapsed_at_start,
            positions,
            queue: VecDeque::new(),
            throttled: HashSet::new(),
            throttle_announced: false,
            limit_polls: 0,
            synced,
            syncer_alive: true,
            questions,
            cancelling: HashSet::new(),
            delayed: HashMap::new(),
            joins,
            joins_due,
            stopped: HashSet::new(),
        }
    }

    pub(crate) fn state(&self) -> &RunState {
        &self.state
    }

    /// What this invocation has cost the orchestrator so far.
    pub(crate) fn metrics(&self) -> RunMetrics {
        RunMetrics::measure(self.persistence.counters())
    }

    /// Run until every agent terminated or paused, a bound was reached, the run
    /// failed, or `signals` asked it to stop.
    pub(crate) async fn run(&mut self, mut signals: mpsc::UnboundedReceiver<ShutdownSignal>) -> RunOutcome {
        let steps_at_start = self.state.steps_completed;
        self.state.status = RunStatus::Running;
        self.state.error = None;
        self.state.paused_by = None;
        // Committed with the first launches.
        self.dirty = true;
        self.questions.start();
        // Asks left from an earlier invocation are asked again where they are answered.
        if self.questions.live() {
            self.ask_again();
        }
        let far = Instant::now() + Duration::from_secs(60 * 60 * 24 * 365);
        let time_limit_at = match self.limits.time_limit {
            Some(limit) => {
                let used = Duration::from_millis(self.elapsed_at_start);
                Instant::now() + limit.saturating_sub(used)
            }
            None => far,
        };
        let (mut terminate_at, mut kill_at) = (far, far);
        let mut signals_open = true;

        loop {
            if self.fatal.is_none() && self.stop.is_none() {
                self.check_step_bound();
            }
            // A join that is over is committed with this turn and its agent starts in it.
            self.settle_joins();
            // Decide what launches, commit that together with the last step's
            // changes, publish, and only then start the planned steps.
            let launches = if self.fatal.is_none() && self.stop.is_none() { self.plan_launches() } else { Vec::new() };
            if self.dirty {
                let step = self.pending_step.take();
                self.commit_or_fail(step);
                self.publish();
                if self.persistence.compaction_due() {
                    self.compact();
                }
            }
            if self.fatal.is_none() {
                for (index, delay) in launches {
                    self.start(index, delay);
                }
            }
            self.show_question();
            // An ask answered while the run goes on keeps it going, unless it is stopping.
            let waiting_for_answer =
                (self.questions.pending() || self.held_at_breakpoints()) && self.stop.is_none() && self.fatal.is_none();
            if self.tasks.is_empty() && !waiting_for_answer {
                match self.usage_limit_wait() {
                    Some(wait) if self.wait_out_limit(wait, &mut signals).await => continue,
                    _ => break,
                }
            }
            let level = *self.stop_level.borrow();
            let (question_deadline, countdown_at) = self.questions.clocks(far);
            let asking = self.questions.pending();
            let listening = self.questions.listening();
            let join_deadline = self.next_join_deadline();
            tokio::select! {
                joined = self.tasks.join_next(), if !self.tasks.is_empty() => match joined {
                    Some(Ok(completion)) => self.handle(completion),
                    Some(Err(join_error)) => self.record_fatal(FatalError {
                        agent: None,
                        message: format!("internal error: a step task failed: {join_error}"),
                    }),
                    None => break,
                },
                line = self.questions.next_line(), if listening => match line {
                    Some(line) => self.heard(line),
                    None => self.input_ended(),
                },
                () = tokio::time::sleep_until(question_deadline), if asking => self.question_timed_out(),
                () = tokio::time::sleep_until(countdown_at), if asking => self.count_down(),
                () = tokio::time::sleep_until(join_deadline.unwrap_or(far)), if join_deadline.is_some() => {
                    self.join_timed_out();
                }
                changed = self.synced.changed(), if self.syncer_alive => match changed {
                    Ok(()) => self.synced(),
                    Err(_) => self.syncer_alive = false,
                },
                signal = signals.recv(), if signals_open => match signal {
                    None => signals_open = false,
                    // A second signal: stop running steps at once.
                    Some(_) if matches!(self.stop, Some(Stop::Signal(_))) => self.escalate(StopLevel::Kill),
                    Some(signal) => {
                        self.stop = Some(Stop::Signal(signal));
                        terminate_at = Instant::now() + self.limits.grace;
                        self.announce_stop(Some(signal), None);
                    }
                },
                () = tokio::time::sleep_until(time_limit_at), if self.stop.is_none() => {
                    let bound = Bound::Time { limit: self.limits.time_limit.unwrap_or_default() };
                    self.stop = Some(Stop::Bound(bound));
                    terminate_at = Instant::now() + self.limits.grace;
                    self.announce_stop(None, Some(bound));
                },
                () = tokio::time::sleep_until(terminate_at), if level == StopLevel::Run && self.stop.is_some() => {
                    self.escalate(StopLevel::Terminate);
                    kill_at = Instant::now() + TERMINATE_TO_KILL;
                },
                () = tokio::time::sleep_until(kill_at), if level == StopLevel::Terminate => {
                    self.escalate(StopLevel::Kill);
                },
            }
        }
        self.finish(steps_at_start)
    }

    fn escalate(&self, level: StopLevel) {
        self.stop_level.send_if_modified(|current| {
            let raise = level > *current;
            if raise {
                *current = level;
            }
            raise
        });
    }

    fn announce_stop(&self, signal: Option<ShutdownSignal>, bound: Option<Bound>) {
        self.context.bus.emit(Event::WorkflowStopping {
            run_id: self.state.run_id.clone(),
            signal: signal.map(|signal| signal.name().to_string()),
            bound,
            running_steps: self.running.len(),
            grace_ms: self.limits.grace.as_millis() as u64,
        });
    }

    /// Stop launching once `--max-steps` steps have completed.
    fn check_step_bound(&mut self) {
        if let Some(max) = self.limits.max_steps
            && self.state.steps_completed >= max
        {
            self.stop = Some(Stop::Bound(Bound::Steps { max }));
        }
    }

    fn finish(&mut self, steps_at_start: u64) -> RunOutcome {
        let run_id = self.state.run_id.clone();
        // Every agent terminated: the run is complete, even if a stop was requested
        // while its last steps were finishing.
        let outcome = if self.state.agents.is_empty() && self.fatal.is_none() {
            self.state.status = RunStatus::Completed;
            RunOutcome::Completed
        } else if let Some(Stop::Signal(signal)) = self.stop {
            self.state.status = RunStatus::Interrupted;
            if let Some(fatal) = self.fatal.take() {
                self.state.error = Some(fatal.message);
            }
            self.outbox.push(Event::WorkflowInterrupted { run_id, signal: signal.name().to_string() });
            RunOutcome::Interrupted { signal }
        } else if self.fatal.is_none()
            && let Some((agent_id, ask_id)) = self.first_ask()
            && self.state.launch_params.on_ask.unwrap_or_default().lets_agents_ask()
        {
            let pending_count = self.state.asking_agents().len() - 1;
            self.state.status = RunStatus::Asking;
            self.outbox.push(Event::WorkflowAsking { run_id, agent_id, ask_id, pending_count });
            RunOutcome::Asking
        } else if let Some(fatal) = self.fatal.take() {
            self.state.status = RunStatus::Failed;
            self.state.error = Some(fatal.message.clone());
            let (agent_id, state) = fatal.agent.unzip();
            self.outbox.push(Event::RunFailed { run_id, agent_id, state, error: fatal.message.clone() });
            RunOutcome::Failed { error: fatal.message }
        } else {
            let bound = match self.stop {
                Some(Stop::Bound(bound)) => Some(bound),
                _ => None,
            };
            self.state.status = RunStatus::Paused;
            self.state.paused_by = bound;
            self.outbox.push(Event::WorkflowPaused {
                run_id,
                total_cost_usd: self.state.total_cost_usd,
                paused_agent_count: self.state.paused_agents(),
                bound,
            });
            RunOutcome::Paused
        };
        // Every step's events reach the trace before the run's end is written: a
        // run whose end is on disk is never resumed, so nothing could restore them.
        // With no such record (`--no-debug`, no export) the last step's commit and
        // the run's end share one sync, and its events wait for that.
        if self.context.bus.keeps_records() {
            self.settle();
        }
        let step = self.pending_step.take();
        let saved = self.commit(step).and_then(|()| self.persistence.close(&self.state));
        match &saved {
            Ok(seq) => self.context.bus.reached(*seq),
            Err(_) => self.context.bus.open(),
        }
        if outcome == RunOutcome::Completed {
            self.outbox.push(Event::WorkflowCompleted {
                run_id: self.state.run_id.clone(),
                total_cost_usd: self.state.total_cost_usd,
                steps: self.state.steps_completed - steps_at_start,
                duration_ms: self.started.elapsed().as_millis() as u64,
                metrics: RunMetrics::measure(self.persistence.counters()),
            });
        }
        self.publish();
        match saved {
            Ok(_) => outcome,
            Err(error) => {
                // The run's end could not be saved: say why where `status` will look.
                let message = match outcome {
                    RunOutcome::Failed { error: first } => first,
                    _ => error.to_string(),
                };
                self.persistence.note_failure(&self.state, &message);
                RunOutcome::Failed { error: message }
            }
        }
    }

    /// The first asking agent and its ask's id (R11.5's order).
    fn first_ask(&self) -> Option<(AgentId, String)> {
        let asking = self.state.asking_agents();
        let first = asking.first()?;
        Some((first.id.clone(), first.ask.as_ref().map(|ask| ask.id.clone()).unwrap_or_default()))
    }

    fn handle(&mut self, completion: StepCompletion) {
        failpoint::hit("after_step_exit");
        self.running.remove(&completion.agent_id);
        self.delayed.remove(&completion.agent_id);
        let cancelled = self.cancelling.remove(&completion.agent_id);
        let Some(index) = self.position(&completion.agent_id) else {
            return;
        };
        self.dirty = true;
        // The agent may have ended (terminated, paused): a join may be over.
        self.joins_due |= !self.joins.is_empty();
        match completion.result {
            // Withdrawn before it began: the agent is where it was.
            None => {}
            Some(Ok(result)) => match refusal(&self.state.agents[index], &result.transition) {
                // R3.30: the agent pauses at the state that asked for too deep a call.
                Some(reason) => self.apply_failure(
                    index,
                    StepFailure::pause(PauseReason::ValidationError, ErrorKind::CrossWorkflowError, reason)
                        .with_cost(result.cost_usd),
                ),
                None => match self.isolation_base(index, &result.transition) {
                    // A worktree fork outside a repository: the parent pauses at its state.
                    Err(reason) => self.apply_failure(
                        index,
                        StepFailure::pause(PauseReason::ValidationError, ErrorKind::TransitionError, reason)
                            .with_cost(result.cost_usd),
                    ),
                    Ok(isolation) => self.pending_step = Some(self.apply_success(index, result, isolation)),
                },
            },
            // A step stopped by the shutdown is not a failure: it runs again on resume.
            Some(Err(_)) if *self.stop_level.borrow() > StopLevel::Run => {}
            Some(Err(failure)) => self.apply_failure(index, failure),
        }
        // Its outcome is committed as any other; the agent pauses instead of going on.
        if cancelled {
            self.cancel_after_step(&completion.agent_id);
        }
    }

    /// The index of agent `id` in `state.agents`.
    pub(super) fn position(&self, id: &AgentId) -> Option<usize> {
        self.positions.get(id).copied()
    }

    /// Remove the agent at `index` in O(1): the last agent takes its place (the
    /// journal's replay removes the same way, `store::journal::Commit::apply`).
    pub(super) fn remove_agent(&mut self, index: usize) {
        let removed = self.state.agents.swap_remove(index);
        self.positions.remove(&removed.id);
        if let Some(moved) = self.state.agents.get(index) {
            self.positions.insert(moved.id.clone(), index);
        }
    }

    /// Append new agents (fork workers) at the end.
    pub(super) fn append_agents(&mut self, agents: Vec<crate::model::agent::Agent>) {
        for agent in agents {
            self.positions.insert(agent.id.clone(), self.state.agents.len());
            self.state.agents.push(agent);
        }
    }

    pub(super) fn record_fatal(&mut self, fatal: FatalError) {
        if self.fatal.is_none() {
            self.fatal = Some(fatal);
        }
    }
}
