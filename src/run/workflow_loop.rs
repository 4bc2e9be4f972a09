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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant as TokioInstant;

use crate::events::Event;
use crate::events::metrics::RunMetrics;
use crate::executor::step_failure::{FailureClass, StepFailure};
use crate::executor::{ExecutionContext, ExecutionResult, Executors, StepInput};
use crate::model::agent::{Agent, PauseReason};
use crate::model::run_state::{RunState, RunStatus, TerminatedAgent};
use crate::process::stop_level::StopLevel;
use crate::run::retry_policy::RetryPolicy;
use crate::run::shutdown::ShutdownSignal;
use crate::store::failpoint;
use crate::store::journal::{AgentUpsert, Commit, RunFields, StepSummary};
use crate::store::persistence::RunPersistence;
use crate::store::runs::StoreError;
use crate::text::duration::format_duration;
use crate::transition::Transition;
use crate::transition::apply::{Applied, TransitionEnv, apply_transition};
use crate::transition::task_folder::TaskFolders;

/// How long process groups get between SIGTERM and SIGKILL.
const TERMINATE_TO_KILL: Duration = Duration::from_secs(5);

/// How a run ended, which decides the exit code (A7).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RunOutcome {
    Completed,
    /// Every remaining agent is paused, or a bound was reached.
    Paused,
    Failed {
        error: String,
    },
    Interrupted {
        signal: ShutdownSignal,
    },
}

/// Limits against runaway workflows, and how stopping treats running steps.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunLimits {
    pub(crate) max_agents: Option<u32>,
    pub(crate) max_steps: Option<u64>,
    pub(crate) time_limit: Option<Duration>,
    /// How long running steps may finish after a stop before they are terminated.
    pub(crate) grace: Duration,
    /// Do not wait out usage limits: pause and exit instead (`--no-wait`).
    pub(crate) no_wait: bool,
    /// Added to a usage limit's reset time before resuming (R10.3: 5 minutes).
    pub(crate) limit_buffer: Duration,
    /// The first wait when a limit's reset time is unknown; doubles up to an hour.
    pub(crate) limit_poll: Duration,
}

impl Default for RunLimits {
    fn default() -> RunLimits {
        RunLimits {
            max_agents: None,
            max_steps: None,
            time_limit: None,
            grace: Duration::from_secs(30),
            no_wait: false,
            limit_buffer: Duration::from_secs(300),
            limit_poll: Duration::from_secs(300),
        }
    }
}

struct StepCompletion {
    agent_id: String,
    result: Result<ExecutionResult, StepFailure>,
}

/// The first fatal error of the run.
struct FatalError {
    agent_id: String,
    state: String,
    message: String,
}

/// Why the loop stopped launching steps.
#[derive(Clone, Debug)]
enum Stop {
    Signal(ShutdownSignal),
    /// A bound was reached; the message says which and how to continue.
    Bound(String),
}

/// What changed since the last commit.
#[derive(Default)]
struct Changes {
    agents: BTreeSet<String>,
    terminated: Vec<TerminatedAgent>,
    counters: BTreeSet<String>,
    /// For agents that existed at the last commit: how many bottom stack frames are
    /// unchanged since then (stacks change only at the top).
    stack_keep: HashMap<String, usize>,
}

impl Changes {
    /// `agent` changed, but not its stack.
    fn touch(&mut self, agent: &Agent) {
        self.agents.insert(agent.id.clone());
        self.stack_keep.entry(agent.id.clone()).or_insert(agent.stack.len());
    }

    /// `agent` stepped from a stack of `before` frames to one of `after`.
    fn stepped(&mut self, id: &str, before: usize, after: usize) {
        self.agents.insert(id.to_string());
        let keep = self.stack_keep.entry(id.to_string()).or_insert(before);
        *keep = (*keep).min(before).min(after);
    }
}

pub(crate) struct WorkflowLoop {
    state: RunState,
    persistence: RunPersistence,
    context: Arc<ExecutionContext>,
    executors: Executors,
    task_folders: TaskFolders,
    retry: RetryPolicy,
    limits: RunLimits,
    running: HashSet<String>,
    /// Agents ready to launch, in the order they became ready (FIFO under `max_agents`).
    ready: VecDeque<String>,
    tasks: JoinSet<StepCompletion>,
    fatal: Option<FatalError>,
    stop: Option<Stop>,
    stop_level: watch::Sender<StopLevel>,
    changes: Changes,
    /// Something changed since the last commit.
    dirty: bool,
    /// The step awaiting its commit.
    pending_step: Option<StepSummary>,
    /// Events to publish once the current change is committed.
    outbox: Vec<Event>,
    started: Instant,
    elapsed_at_start: u64,
    /// Usage-limit waits without a known reset time so far (for the backoff).
    limit_polls: u32,
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
        let elapsed_at_start = state.elapsed_ms;
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
            started: Instant::now(),
            elapsed_at_start,
            limit_polls: 0,
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
        self.state.pause_message = None;
        self.commit_or_fail(None);
        let far = TokioInstant::now() + Duration::from_secs(60 * 60 * 24 * 365);
        let time_limit_at = match self.limits.time_limit {
            Some(limit) => {
                let used = Duration::from_millis(self.elapsed_at_start);
                TokioInstant::now() + limit.saturating_sub(used)
            }
            None => far,
        };
        let (mut terminate_at, mut kill_at) = (far, far);
        let mut signals_open = true;

        loop {
            if self.fatal.is_none() && self.stop.is_none() {
                self.check_step_bound();
            }
            // Decide what launches, commit that together with the last step's
            // changes, publish, and only then start the planned steps.
            let launches = if self.fatal.is_none() && self.stop.is_none() { self.plan_launches() } else { Vec::new() };
            if self.dirty {
                let step = self.pending_step.take();
                self.commit_or_fail(step);
                self.publish();
                if let Err(error) = self.persistence.compact_if_due(&self.state) {
                    self.record_store_failure(error);
                }
            }
            if self.fatal.is_none() {
                for (index, delay) in launches {
                    self.start(index, delay);
                }
            }
            if self.tasks.is_empty() {
                match self.usage_limit_wait() {
                    Some(wait) if self.wait_out_limit(wait, &mut signals).await => continue,
                    _ => break,
                }
            }
            let level = *self.stop_level.borrow();
            tokio::select! {
                joined = self.tasks.join_next() => match joined {
                    Some(Ok(completion)) => self.handle(completion),
                    Some(Err(join_error)) => self.record_fatal(FatalError {
                        agent_id: String::from("?"),
                        state: String::new(),
                        message: format!("internal error: a step task failed: {join_error}"),
                    }),
                    None => break,
                },
                signal = signals.recv(), if signals_open => match signal {
                    None => signals_open = false,
                    // A second signal: stop running steps at once.
                    Some(_) if matches!(self.stop, Some(Stop::Signal(_))) => self.escalate(StopLevel::Kill),
                    Some(signal) => {
                        self.stop = Some(Stop::Signal(signal));
                        terminate_at = TokioInstant::now() + self.limits.grace;
                        self.announce_stop(signal.name());
                    }
                },
                () = tokio::time::sleep_until(time_limit_at), if self.stop.is_none() => {
                    let limit = self.limits.time_limit.unwrap_or_default();
                    self.stop = Some(Stop::Bound(format!(
                        "time limit of {} reached; continue with `baton resume {} --time-limit <longer>`",
                        format_duration(limit),
                        self.state.run_id
                    )));
                    terminate_at = TokioInstant::now() + self.limits.grace;
                    self.announce_stop("the time limit");
                },
                () = tokio::time::sleep_until(terminate_at), if level == StopLevel::Run && self.stop.is_some() => {
                    self.escalate(StopLevel::Terminate);
                    kill_at = TokioInstant::now() + TERMINATE_TO_KILL;
                },
                () = tokio::time::sleep_until(kill_at), if level == StopLevel::Terminate => {
                    self.escalate(StopLevel::Kill);
                },
            }
        }
        self.finish(steps_at_start)
    }

    /// How long to wait when every remaining agent is paused by a usage limit and
    /// waiting is allowed (R10.3, A15): until the latest known reset plus the buffer,
    /// or, when some reset time is unknown, a poll that backs off to an hour.
    fn usage_limit_wait(&self) -> Option<Duration> {
        if self.limits.no_wait || self.fatal.is_some() || self.stop.is_some() || self.state.agents.is_empty() {
            return None;
        }
        let limited = |agent: &Agent| agent.pause_reason == Some(PauseReason::UsageLimit);
        if !self.state.agents.iter().all(|agent| !agent.is_active() && limited(agent)) {
            return None;
        }
        let now = jiff::Timestamp::now().as_second();
        let resets: Option<Vec<i64>> = self.state.agents.iter().map(|agent| agent.limit_resets_at).collect();
        Some(match resets {
            Some(resets) => {
                let latest = resets.into_iter().max().unwrap_or(now);
                Duration::from_secs(latest.saturating_sub(now).max(0) as u64) + self.limits.limit_buffer
            }
            None => self.limits.limit_poll.saturating_mul(1 << self.limit_polls.min(8)).min(Duration::from_secs(3600)),
        })
    }

    /// Wait `wait`, then un-pause the limited agents. False when a signal cut the wait short.
    async fn wait_out_limit(&mut self, wait: Duration, signals: &mut mpsc::UnboundedReceiver<ShutdownSignal>) -> bool {
        let until = jiff::Timestamp::now() + jiff::SignedDuration::try_from(wait).unwrap_or_default();
        self.outbox.push(Event::WorkflowWaiting {
            run_id: self.state.run_id.clone(),
            until: until.to_string(),
            wait_seconds: wait.as_secs(),
        });
        self.commit_or_fail(None);
        self.publish();
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            Some(signal) = signals.recv() => {
                self.stop = Some(Stop::Signal(signal));
                return false;
            }
        }
        if self.state.agents.iter().any(|agent| agent.limit_resets_at.is_none()) {
            self.limit_polls += 1;
        }
        self.outbox.push(Event::WorkflowResuming { run_id: self.state.run_id.clone() });
        for agent in &mut self.state.agents {
            agent.unpause();
            self.changes.touch(agent);
            self.ready.push_back(agent.id.clone());
        }
        self.dirty = true;
        true
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

    fn announce_stop(&self, cause: &str) {
        self.context.bus.emit(Event::WorkflowStopping {
            run_id: self.state.run_id.clone(),
            cause: cause.to_string(),
            running_steps: self.running.len(),
            grace_ms: self.limits.grace.as_millis() as u64,
        });
    }

    /// Stop launching once `--max-steps` steps have completed.
    fn check_step_bound(&mut self) {
        if let Some(max) = self.limits.max_steps
            && self.state.steps_completed >= max
        {
            self.stop = Some(Stop::Bound(format!(
                "step limit of {max} reached; continue with `baton resume {} --max-steps <more>`",
                self.state.run_id
            )));
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
        } else if let Some(fatal) = self.fatal.take() {
            self.state.status = RunStatus::Failed;
            self.state.error = Some(fatal.message.clone());
            self.outbox.push(Event::RunFailed {
                run_id,
                agent_id: fatal.agent_id,
                state: fatal.state,
                error: fatal.message.clone(),
            });
            RunOutcome::Failed { error: fatal.message }
        } else {
            let reason = match &self.stop {
                Some(Stop::Bound(message)) => Some(message.clone()),
                _ => None,
            };
            self.state.status = RunStatus::Paused;
            self.state.pause_message = reason.clone();
            self.outbox.push(Event::WorkflowPaused {
                run_id,
                total_cost_usd: self.state.total_cost_usd,
                paused_agent_count: self.state.paused_agents(),
                reason,
            });
            RunOutcome::Paused
        };
        let step = self.pending_step.take();
        let saved = self.commit(step).and_then(|()| self.persistence.compact(&self.state));
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
            Ok(()) => outcome,
            Err(error) => RunOutcome::Failed { error: error.to_string() },
        }
    }

    /// Choose the ready agents to start, oldest first, up to `max_agents` running
    /// (R2.5 g); mark the rest `queued`. The choice is committed before any starts.
    fn plan_launches(&mut self) -> Vec<(usize, Duration)> {
        let slots = match self.limits.max_agents {
            Some(max) => (max as usize).saturating_sub(self.running.len()),
            None => usize::MAX,
        };
        let mut planned = Vec::new();
        let mut waiting = VecDeque::new();
        while let Some(id) = self.ready.pop_front() {
            let Some(index) = self.state.agents.iter().position(|agent| agent.id == id) else { continue };
            let agent = &mut self.state.agents[index];
            if !agent.is_active() || self.running.contains(&id) {
                continue;
            }
            if planned.len() >= slots {
                if !agent.queued {
                    agent.queued = true;
                    self.changes.touch(agent);
                    self.dirty = true;
                }
                waiting.push_back(id);
                continue;
            }
            if let Err(error) = std::fs::create_dir_all(&agent.task_folder) {
                let fatal = FatalError {
                    agent_id: agent.id.clone(),
                    state: agent.current_state.clone(),
                    message: format!("cannot create task folder {}: {error}", agent.task_folder.display()),
                };
                self.record_fatal(fatal);
                waiting.push_back(id);
                break;
            }
            agent.steps_started += 1;
            agent.queued = false;
            planned.push((index, self.retry.delay_before_retry(agent.retry_count)));
            self.changes.touch(agent);
            self.running.insert(id);
            self.dirty = true;
        }
        waiting.append(&mut self.ready);
        self.ready = waiting;
        planned
    }

    /// Start the step of the agent at `index` (already planned and committed).
    fn start(&mut self, index: usize, delay: Duration) {
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
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            let agent_id = input.agent.id.clone();
            let result = executor.execute(input, &context).await;
            StepCompletion { agent_id, result }
        });
    }

    fn handle(&mut self, completion: StepCompletion) {
        failpoint::hit("after_step_exit");
        self.running.remove(&completion.agent_id);
        let Some(index) = self.state.agents.iter().position(|agent| agent.id == completion.agent_id) else {
            return;
        };
        self.dirty = true;
        match completion.result {
            Ok(result) => self.pending_step = Some(self.apply_success(index, result)),
            // A step stopped by the shutdown is not a failure: it runs again on resume.
            Err(_) if *self.stop_level.borrow() > StopLevel::Run => {}
            Err(failure) => self.apply_failure(index, failure),
        }
    }

    fn apply_success(&mut self, index: usize, result: ExecutionResult) -> StepSummary {
        let mut agent = self.state.agents[index].clone();
        if let Some(session_id) = result.session_id {
            agent.session_id = Some(session_id);
        }
        agent.continue_and_fork = false;
        self.state.total_cost_usd += result.cost_usd;
        let mut env = TransitionEnv { task_folders: &self.task_folders, fork_counters: &mut self.state.fork_counters };
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
                self.ready.push_back(next.id.clone());
                self.state.agents[index] = next;
            }
            None => {
                self.state.agents.remove(index);
            }
        }
        if let Some(result) = terminated_with {
            self.outbox.push(Event::AgentTerminated { agent_id: agent.id.clone(), result: result.clone() });
            let terminated = TerminatedAgent { id: agent.id, result };
            self.changes.terminated.push(terminated.clone());
            self.state.terminated.push(terminated);
        }
        for worker in &workers {
            self.changes.agents.insert(worker.id.clone());
            self.ready.push_back(worker.id.clone());
        }
        self.state.agents.extend(workers);
        self.state.steps_completed += 1;
        summary
    }

    fn apply_failure(&mut self, index: usize, failure: StepFailure) {
        let max_attempts = self.retry.max_attempts;
        self.state.total_cost_usd += failure.cost_usd;
        let agent = &mut self.state.agents[index];
        self.changes.touch(agent);
        self.outbox.push(Event::ErrorOccurred {
            agent_id: agent.id.clone(),
            error_type: failure.error_type.to_string(),
            message: failure.message.clone(),
            state: agent.current_state.clone(),
            is_retryable: failure.is_retryable(),
            retry_count: agent.retry_count + u32::from(failure.is_retryable()),
            max_retries: if failure.is_retryable() { max_attempts } else { 0 },
        });
        let pause = match failure.class {
            FailureClass::Fatal => {
                let fatal = FatalError {
                    agent_id: agent.id.clone(),
                    state: agent.current_state.clone(),
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
        };
        agent.pause(pause, failure.message.clone());
        self.outbox.push(Event::AgentPaused {
            agent_id: agent.id.clone(),
            state: agent.current_state.clone(),
            reason: pause.to_string(),
            message: failure.message,
        });
    }

    fn record_fatal(&mut self, fatal: FatalError) {
        if self.fatal.is_none() {
            self.fatal = Some(fatal);
        }
    }

    /// Journal everything that changed since the last commit (O(changed agents)).
    fn commit(&mut self, step: Option<StepSummary>) -> Result<(), StoreError> {
        let changes = std::mem::take(&mut self.changes);
        self.dirty = false;
        let upsert: Vec<AgentUpsert> = self
            .state
            .agents
            .iter()
            .filter(|agent| changes.agents.contains(&agent.id))
            .map(|agent| AgentUpsert::new(agent, changes.stack_keep.get(&agent.id).copied()))
            .collect();
        let remove =
            changes.agents.iter().filter(|id| !upsert.iter().any(|entry| &entry.agent.id == *id)).cloned().collect();
        let fork_counters: BTreeMap<String, u64> = changes
            .counters
            .iter()
            .filter_map(|parent| self.state.fork_counters.get(parent).map(|count| (parent.clone(), *count)))
            .collect();
        self.state.elapsed_ms = self.elapsed_at_start + self.started.elapsed().as_millis() as u64;
        self.state.updated_at = jiff::Timestamp::now().to_string();
        self.state.journal_commit += 1;
        if let Some(step) = &step {
            self.state.last_step = Some((self.state.journal_commit, step.clone()));
        }
        let entry = Commit {
            commit: self.state.journal_commit,
            run: RunFields::of(&self.state),
            upsert,
            remove,
            terminated: changes.terminated,
            fork_counters,
            step,
        };
        self.persistence.commit(&entry)
    }

    /// A change that cannot be made durable is fatal (§10.1): continuing would run
    /// steps that a resume could not know about.
    fn commit_or_fail(&mut self, step: Option<StepSummary>) {
        if let Err(error) = self.commit(step) {
            self.record_store_failure(error);
        }
    }

    fn record_store_failure(&mut self, error: StoreError) {
        let fatal = FatalError { agent_id: String::new(), state: String::new(), message: error.to_string() };
        self.record_fatal(fatal);
    }

    fn publish(&mut self) {
        for event in self.outbox.drain(..) {
            self.context.bus.emit(event);
        }
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

fn transition_metadata(transition: &Transition, workers: &[Agent]) -> BTreeMap<String, String> {
    let mut metadata = BTreeMap::new();
    match transition {
        Transition::Goto { input, .. } | Transition::Reset { input, .. } => {
            if let Some(input) = input {
                metadata.insert("input".to_string(), input.clone());
            }
        }
        Transition::Call { return_state, input, .. } | Transition::Function { return_state, input, .. } => {
            metadata.insert("return".to_string(), return_state.clone());
            if let Some(input) = input {
                metadata.insert("input".to_string(), input.clone());
            }
        }
        Transition::Result { payload } => {
            metadata.insert("payload".to_string(), payload.clone());
        }
        Transition::Fork { .. } | Transition::MultiFork { .. } => {}
    }
    if !workers.is_empty() {
        let ids: Vec<&str> = workers.iter().map(|worker| worker.id.as_str()).collect();
        metadata.insert("workers".to_string(), ids.join(","));
    }
    metadata
}
#[cfg(test)]
mod tests {
    use std::collections::{HashMap, VecDeque};
    use std::path::PathBuf;
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;
    use crate::events::bus::EventBus;
    use crate::executor::context::{StateTimeout, TimeoutSource};
    use crate::executor::{StateExecutor, StepFuture};
    use crate::model::run_state::{LaunchParams, STATE_VERSION};
    use crate::store::runs::RunStore;

    /// Replies with scripted results per state name, in order; records every call.
    struct ScriptedExecutor {
        replies: Mutex<HashMap<String, VecDeque<Result<ExecutionResult, StepFailure>>>>,
        calls: Mutex<Vec<(String, u32)>>,
        delay: Duration,
    }

    impl ScriptedExecutor {
        fn new(replies: Vec<(&str, Result<Transition, StepFailure>)>, delay: Duration) -> Arc<ScriptedExecutor> {
            let mut map: HashMap<String, VecDeque<_>> = HashMap::new();
            for (state, reply) in replies {
                let reply = reply.map(|transition| ExecutionResult { transition, session_id: None, cost_usd: 0.25 });
                map.entry(state.to_string()).or_default().push_back(reply);
            }
            Arc::new(ScriptedExecutor { replies: Mutex::new(map), calls: Mutex::new(Vec::new()), delay })
        }
    }

    impl StateExecutor for ScriptedExecutor {
        fn execute<'a>(&'a self, input: StepInput, _context: &'a ExecutionContext) -> StepFuture<'a> {
            Box::pin(async move {
                let state = input.agent.current_state.clone();
                self.calls.lock().unwrap().push((state.clone(), input.attempt));
                if state == "SLOW" {
                    tokio::time::sleep(self.delay).await;
                }
                let reply = self.replies.lock().unwrap().get_mut(&state).and_then(VecDeque::pop_front);
                reply.unwrap_or_else(|| Err(StepFailure::fatal("Test", format!("no scripted reply for {state}"))))
            })
        }
    }

    fn goto(target: &str) -> Result<Transition, StepFailure> {
        Ok(Transition::Goto { target: target.into(), input: None })
    }

    fn result(payload: &str) -> Result<Transition, StepFailure> {
        Ok(Transition::Result { payload: payload.into() })
    }

    fn retryable() -> Result<Transition, StepFailure> {
        Err(StepFailure::retryable(PauseReason::ClaudeError, "ClaudeCodeError", "claude exited with 1"))
    }

    struct Harness {
        workflow: WorkflowLoop,
        store: RunStore,
        executor: Arc<ScriptedExecutor>,
        bus: Arc<EventBus>,
        _dir: tempfile::TempDir,
    }

    fn harness(replies: Vec<(&str, Result<Transition, StepFailure>)>) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::new(dir.path().join(".baton"));
        let task_folder = dir.path().join("task");
        let main = Agent::main("START".into(), PathBuf::from("/wf"), dir.path().to_path_buf(), task_folder);
        let state = RunState {
            version: STATE_VERSION,
            run_id: "r".into(),
            scope_dir: PathBuf::from("/wf"),
            initial_state: "START".into(),
            launch_cwd: dir.path().to_path_buf(),
            status: RunStatus::Running,
            created_at: String::new(),
            updated_at: String::new(),
            total_cost_usd: 0.0,
            budget_usd: 0.0,
            steps_completed: 0,
            agents: vec![main],
            terminated: Vec::new(),
            fork_counters: BTreeMap::new(),
            launch_params: LaunchParams::default(),
            error: None,
            pause_message: None,
            elapsed_ms: 0,
            journal_commit: 0,
            last_step: None,
        };
        store.create(&state).unwrap();
        let persistence = RunPersistence::begin(store.clone(), &state, 0).unwrap();
        let executor = ScriptedExecutor::new(replies, Duration::from_millis(200));
        let executors = Executors { script: executor.clone(), markdown: executor.clone() };
        let bus = Arc::new(EventBus::new());
        let (stop_sender, stop) = watch::channel(StopLevel::Run);
        let context = Arc::new(ExecutionContext {
            run_id: "r".into(),
            baton_dir: dir.path().join(".baton"),
            bus: Arc::clone(&bus),
            timeout: StateTimeout::from_seconds(0.0, TimeoutSource::Default),
            stop,
            watchdog: None,
            budget_usd: 0.0,
            default_model: None,
            default_effort: None,
        });
        let retry = RetryPolicy { max_attempts: 3, base_delay: Duration::from_millis(1) };
        let limits = RunLimits { grace: Duration::from_millis(50), ..RunLimits::default() };
        let workflow = WorkflowLoop::new(state, persistence, context, executors, retry, limits, stop_sender);
        Harness { workflow, store, executor, bus, _dir: dir }
    }

    async fn run(harness: &mut Harness) -> RunOutcome {
        let (_signals, receiver) = mpsc::unbounded_channel();
        let outcome = harness.workflow.run(receiver).await;
        // Whatever happened, the state on disk is the state in memory.
        assert_eq!(&harness.store.load("r").unwrap(), harness.workflow.state());
        outcome
    }

    #[tokio::test]
    async fn r10_1_retryable_failures_are_retried_then_succeed_with_retry_count_reset() {
        let mut harness = harness(vec![
            ("START", retryable()),
            ("START", retryable()),
            ("START", goto("END")),
            ("END", result("ok")),
        ]);
        assert_eq!(run(&mut harness).await, RunOutcome::Completed);
        let calls = harness.executor.calls.lock().unwrap().clone();
        assert_eq!(calls, [("START".into(), 1), ("START".into(), 2), ("START".into(), 3), ("END".into(), 1)]);
        assert_eq!(harness.workflow.state().main_result(), Some("ok"));
        assert_eq!(harness.workflow.state().total_cost_usd, 0.5);
    }

    #[tokio::test]
    async fn r10_1_exhausted_retries_pause_the_agent_with_the_reason() {
        let mut harness = harness(vec![("START", retryable()), ("START", retryable()), ("START", retryable())]);
        let paused = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&paused);
        harness.bus.on_all(Arc::new(move |event: &Event| {
            if let Event::AgentPaused { .. } = event {
                sink.lock().unwrap().push(event.clone());
            }
            Ok(())
        }));
        assert_eq!(run(&mut harness).await, RunOutcome::Paused);
        let agent = &harness.workflow.state().agents[0];
        assert_eq!(agent.pause_reason, Some(PauseReason::ClaudeError));
        assert_eq!(agent.retry_count, 3);
        assert_eq!(harness.executor.calls.lock().unwrap().len(), 3);
        assert_eq!(paused.lock().unwrap().len(), 1);
        assert_eq!(harness.workflow.state().status, RunStatus::Paused);
    }

    #[tokio::test]
    async fn a13_retries_wait_with_backoff() {
        let mut harness = harness(vec![("START", retryable()), ("START", result("ok"))]);
        harness.workflow.retry.base_delay = Duration::from_millis(150);
        let started = Instant::now();
        assert_eq!(run(&mut harness).await, RunOutcome::Completed);
        assert!(started.elapsed() >= Duration::from_millis(120), "the retry waited about base_delay");
    }

    #[tokio::test]
    async fn a14_fatal_error_lets_running_siblings_finish_their_step() {
        let fork = Transition::MultiFork {
            workers: vec![crate::transition::ForkSpec {
                target: "SLOW".into(),
                cd: None,
                input: None,
                task: crate::transition::TaskMode::New,
                attributes: BTreeMap::new(),
            }],
            continuation: "FAIL".into(),
        };
        let mut harness = harness(vec![
            ("START", Ok(fork)),
            ("FAIL", Err(StepFailure::fatal("ScriptError", "boom"))),
            ("SLOW", goto("AFTER")),
            ("AFTER", result("never runs")),
        ]);
        let outcome = run(&mut harness).await;
        assert_eq!(outcome, RunOutcome::Failed { error: "boom".into() });
        let state = harness.workflow.state();
        let worker = state.agents.iter().find(|agent| agent.id == "main_slow1").expect("worker kept");
        assert_eq!(worker.current_state, "AFTER", "the sibling's step was recorded");
        let main = state.agents.iter().find(|agent| agent.id == "main").unwrap();
        assert_eq!(main.current_state, "FAIL", "the failed agent stays at the failed state");
        assert!(
            !harness.executor.calls.lock().unwrap().iter().any(|(state, _)| state == "AFTER"),
            "nothing new launched"
        );
        assert_eq!(state.status, RunStatus::Failed);
        assert_eq!(state.error.as_deref(), Some("boom"));
    }

    #[tokio::test]
    async fn validation_failure_pauses_without_retry() {
        let mut harness = harness(vec![(
            "START",
            Err(StepFailure::pause(PauseReason::ValidationError, "InvalidMultiFork", "bad multi-fork")),
        )]);
        assert_eq!(run(&mut harness).await, RunOutcome::Paused);
        assert_eq!(harness.executor.calls.lock().unwrap().len(), 1);
        assert_eq!(harness.workflow.state().agents[0].error.as_deref(), Some("bad multi-fork"));
    }

    #[tokio::test]
    async fn shutdown_signal_stops_launching_records_the_running_step_and_interrupts() {
        let mut harness = harness(vec![("START", goto("SLOW")), ("SLOW", goto("AFTER")), ("AFTER", result("no"))]);
        let (signals, receiver) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let _ = signals.send(ShutdownSignal::Interrupt);
        });
        let outcome = harness.workflow.run(receiver).await;
        assert_eq!(outcome, RunOutcome::Interrupted { signal: ShutdownSignal::Interrupt });
        let state = harness.workflow.state();
        assert_eq!(state.status, RunStatus::Interrupted);
        assert_eq!(state.agents[0].current_state, "AFTER", "the running step finished and was recorded");
        assert!(!harness.executor.calls.lock().unwrap().iter().any(|(state, _)| state == "AFTER"), "nothing launched");
        assert_eq!(&harness.store.load("r").unwrap(), state);
    }

    #[tokio::test]
    async fn max_agents_queues_forks_in_fifo_order() {
        let fork = |target: &str| crate::transition::ForkSpec {
            target: target.into(),
            cd: None,
            input: None,
            task: crate::transition::TaskMode::New,
            attributes: BTreeMap::new(),
        };
        let mut harness = harness(vec![
            (
                "START",
                Ok(Transition::MultiFork {
                    workers: vec![fork("A"), fork("B"), fork("C")],
                    continuation: "END".into(),
                }),
            ),
            ("END", result("main")),
            ("A", result("a")),
            ("B", result("b")),
            ("C", result("c")),
        ]);
        harness.workflow.limits.max_agents = Some(1);
        assert_eq!(run(&mut harness).await, RunOutcome::Completed);
        let order: Vec<String> =
            harness.executor.calls.lock().unwrap().iter().map(|(state, _)| state.clone()).collect();
        assert_eq!(order, ["START", "END", "A", "B", "C"], "one at a time, in the order they became ready");
    }

    #[tokio::test]
    async fn max_steps_pauses_the_run_with_the_reason() {
        let mut harness = harness(vec![("START", goto("B")), ("B", goto("C")), ("C", result("done"))]);
        harness.workflow.limits.max_steps = Some(2);
        assert_eq!(run(&mut harness).await, RunOutcome::Paused);
        let state = harness.workflow.state();
        assert_eq!(state.steps_completed, 2);
        assert_eq!(state.agents[0].current_state, "C");
        assert_eq!(
            state.pause_message.as_deref(),
            Some("step limit of 2 reached; continue with `baton resume r --max-steps <more>`")
        );
    }

    #[tokio::test]
    async fn time_limit_pauses_the_run_after_running_steps_finish() {
        let mut harness = harness(vec![("START", goto("SLOW")), ("SLOW", goto("END")), ("END", result("no"))]);
        harness.workflow.limits.time_limit = Some(Duration::from_millis(50));
        harness.workflow.limits.grace = Duration::from_secs(5);
        assert_eq!(run(&mut harness).await, RunOutcome::Paused);
        let state = harness.workflow.state();
        assert_eq!(state.agents[0].current_state, "END", "SLOW finished within the grace period");
        assert!(state.elapsed_ms >= 50);
        assert_eq!(
            state.pause_message.as_deref(),
            Some("time limit of 50ms reached; continue with `baton resume r --time-limit <longer>`")
        );
    }
}
