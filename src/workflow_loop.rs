//! The workflow loop (seed §11): runs every active agent's step concurrently and
//! handles whichever finishes first (`JoinSet::join_next`, the Rust form of
//! asyncio's `FIRST_COMPLETED`).
//!
//! For each finished step, in order (R2.5): update the session, add the cost,
//! apply the transition (a pure function), publish what happened, launch agents
//! that became runnable, and persist a snapshot. A fatal error stops launching but
//! lets running siblings finish and record their step (A14); the failed agent
//! stays at the state that failed, so `baton resume` re-runs exactly that step.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::agent::{Agent, PauseReason};
use crate::apply_transition::{Applied, TransitionEnv, apply_transition};
use crate::events::Event;
use crate::executor::{ExecutionContext, ExecutionResult, Executors, StepInput};
use crate::retry_policy::RetryPolicy;
use crate::run_state::{RunState, RunStatus, TerminatedAgent};
use crate::run_store::{RunStore, StoreError};
use crate::shutdown::ShutdownSignal;
use crate::step_failure::{FailureClass, StepFailure};
use crate::task_folder::TaskFolders;
use crate::transition::Transition;

/// How a run ended, which decides the exit code (A7).
#[derive(Clone, Debug, PartialEq)]
pub enum RunOutcome {
    Completed,
    /// Every remaining agent is paused.
    Paused,
    Failed {
        error: String,
    },
    Interrupted {
        signal: ShutdownSignal,
    },
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

pub struct WorkflowLoop {
    state: RunState,
    store: RunStore,
    context: Arc<ExecutionContext>,
    executors: Executors,
    task_folders: TaskFolders,
    retry: RetryPolicy,
    running: HashSet<String>,
    tasks: JoinSet<StepCompletion>,
    fatal: Option<FatalError>,
    cancel: watch::Sender<bool>,
}

impl WorkflowLoop {
    pub fn new(
        state: RunState,
        store: RunStore,
        context: Arc<ExecutionContext>,
        executors: Executors,
        retry: RetryPolicy,
        cancel: watch::Sender<bool>,
    ) -> WorkflowLoop {
        let task_folders = TaskFolders::new(store.baton_dir(), &state.run_id);
        WorkflowLoop {
            state,
            store,
            context,
            executors,
            task_folders,
            retry,
            running: HashSet::new(),
            tasks: JoinSet::new(),
            fatal: None,
            cancel,
        }
    }

    pub fn state(&self) -> &RunState {
        &self.state
    }

    /// Run until every agent terminated, paused, or the run failed or was interrupted.
    pub async fn run(&mut self, shutdown: impl std::future::Future<Output = ShutdownSignal>) -> RunOutcome {
        let started = Instant::now();
        let steps_at_start = self.state.steps_completed;
        self.state.status = RunStatus::Running;
        self.state.error = None;
        self.save_or_fail();
        tokio::pin!(shutdown);
        let mut interrupted = None;

        loop {
            if self.fatal.is_none() && interrupted.is_none() {
                self.launch_ready();
            }
            if self.tasks.is_empty() {
                break;
            }
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
                signal = &mut shutdown, if interrupted.is_none() => {
                    interrupted = Some(signal);
                    let _ = self.cancel.send(true);
                },
            }
        }
        self.finish(interrupted, started, steps_at_start)
    }

    fn finish(&mut self, interrupted: Option<ShutdownSignal>, started: Instant, steps_at_start: u64) -> RunOutcome {
        let run_id = self.state.run_id.clone();
        let outcome = if let Some(signal) = interrupted {
            self.state.status = RunStatus::Interrupted;
            self.context.bus.emit(Event::WorkflowInterrupted {
                run_id,
                signal: signal.name().to_string(),
            });
            RunOutcome::Interrupted { signal }
        } else if let Some(fatal) = self.fatal.take() {
            self.state.status = RunStatus::Failed;
            self.state.error = Some(fatal.message.clone());
            self.context.bus.emit(Event::RunFailed {
                run_id,
                agent_id: fatal.agent_id,
                state: fatal.state,
                error: fatal.message.clone(),
            });
            RunOutcome::Failed { error: fatal.message }
        } else if self.state.agents.is_empty() {
            self.state.status = RunStatus::Completed;
            self.context.bus.emit(Event::WorkflowCompleted {
                run_id,
                total_cost_usd: self.state.total_cost_usd,
                steps: self.state.steps_completed - steps_at_start,
                duration_ms: started.elapsed().as_millis() as u64,
            });
            RunOutcome::Completed
        } else {
            self.state.status = RunStatus::Paused;
            self.context.bus.emit(Event::WorkflowPaused {
                run_id,
                total_cost_usd: self.state.total_cost_usd,
                paused_agent_count: self.state.paused_agents(),
            });
            RunOutcome::Paused
        };
        if let Err(error) = self.save() {
            return RunOutcome::Failed {
                error: error.to_string(),
            };
        }
        outcome
    }

    /// Start a step for every active agent that has none running (R2.5 g).
    fn launch_ready(&mut self) {
        let ready: Vec<usize> = (0..self.state.agents.len())
            .filter(|&index| {
                let agent = &self.state.agents[index];
                agent.is_active() && !self.running.contains(&agent.id)
            })
            .collect();
        for index in ready {
            let agent = &mut self.state.agents[index];
            if let Err(error) = std::fs::create_dir_all(&agent.task_folder) {
                let fatal = FatalError {
                    agent_id: agent.id.clone(),
                    state: agent.current_state.clone(),
                    message: format!("cannot create task folder {}: {error}", agent.task_folder.display()),
                };
                self.record_fatal(fatal);
                return;
            }
            agent.steps_started += 1;
            let input = StepInput {
                agent: agent.clone(),
                step: agent.steps_started,
                attempt: agent.retry_count + 1,
                total_cost_at_launch: self.state.total_cost_usd,
            };
            let delay = self.retry.delay_before_retry(agent.retry_count);
            let executor = self.executors.for_state(&agent.current_state);
            let context = Arc::clone(&self.context);
            self.running.insert(agent.id.clone());
            self.tasks.spawn(async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                let agent_id = input.agent.id.clone();
                let result = executor.execute(input, &context).await;
                StepCompletion { agent_id, result }
            });
        }
    }

    fn handle(&mut self, completion: StepCompletion) {
        self.running.remove(&completion.agent_id);
        let Some(index) = self
            .state
            .agents
            .iter()
            .position(|agent| agent.id == completion.agent_id)
        else {
            return;
        };
        match completion.result {
            Ok(result) => self.apply_success(index, result),
            Err(failure) => self.apply_failure(index, failure),
        }
        self.save_or_fail();
    }

    fn apply_success(&mut self, index: usize, result: ExecutionResult) {
        let mut agent = self.state.agents[index].clone();
        if let Some(session_id) = result.session_id {
            agent.session_id = Some(session_id);
        }
        self.state.total_cost_usd += result.cost_usd;
        let mut env = TransitionEnv {
            task_folders: &self.task_folders,
            fork_counters: &mut self.state.fork_counters,
        };
        let Applied {
            agent: next,
            workers,
            terminated_with,
        } = apply_transition(&agent, &result.transition, &mut env);
        self.context.bus.emit(Event::TransitionOccurred {
            agent_id: agent.id.clone(),
            from_state: agent.current_state.clone(),
            to_state: next.as_ref().map(|next| next.current_state.clone()),
            transition_type: result.transition.kind_name().to_string(),
            metadata: transition_metadata(&result.transition, &workers),
        });
        for worker in &workers {
            self.context.bus.emit(Event::AgentSpawned {
                parent_agent_id: agent.id.clone(),
                new_agent_id: worker.id.clone(),
                initial_state: worker.current_state.clone(),
            });
        }
        match next {
            Some(mut next) => {
                next.retry_count = 0;
                self.state.agents[index] = next;
            }
            None => {
                self.state.agents.remove(index);
            }
        }
        if let Some(result) = terminated_with {
            self.context.bus.emit(Event::AgentTerminated {
                agent_id: agent.id.clone(),
                result: result.clone(),
            });
            self.state.terminated.push(TerminatedAgent { id: agent.id, result });
        }
        self.state.agents.extend(workers);
        self.state.steps_completed += 1;
    }

    fn apply_failure(&mut self, index: usize, failure: StepFailure) {
        let max_attempts = self.retry.max_attempts;
        let agent = &mut self.state.agents[index];
        self.context.bus.emit(Event::ErrorOccurred {
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
                    return;
                }
                reason
            }
            FailureClass::UsageLimit { .. } => PauseReason::UsageLimit,
            FailureClass::Pause(reason) => reason,
        };
        agent.pause(pause, failure.message.clone());
        self.context.bus.emit(Event::AgentPaused {
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

    fn save(&mut self) -> Result<(), StoreError> {
        self.state.updated_at = jiff::Timestamp::now().to_string();
        self.store.save(&self.state)
    }

    /// A snapshot that cannot be written is fatal (§10.1): continuing would run
    /// steps that a resume could not know about.
    fn save_or_fail(&mut self) {
        if let Err(error) = self.save() {
            let fatal = FatalError {
                agent_id: String::new(),
                state: String::new(),
                message: error.to_string(),
            };
            self.record_fatal(fatal);
        }
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
        Transition::Call {
            return_state, input, ..
        }
        | Transition::Function {
            return_state, input, ..
        } => {
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
    use crate::event_bus::EventBus;
    use crate::events::EventKind;
    use crate::executor::context::{StateTimeout, TimeoutSource};
    use crate::executor::{StateExecutor, StepFuture};
    use crate::run_state::{LaunchParams, STATE_VERSION};

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
                let reply = reply.map(|transition| ExecutionResult {
                    transition,
                    session_id: None,
                    cost_usd: 0.25,
                });
                map.entry(state.to_string()).or_default().push_back(reply);
            }
            Arc::new(ScriptedExecutor {
                replies: Mutex::new(map),
                calls: Mutex::new(Vec::new()),
                delay,
            })
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
                let reply = self
                    .replies
                    .lock()
                    .unwrap()
                    .get_mut(&state)
                    .and_then(VecDeque::pop_front);
                reply.unwrap_or_else(|| Err(StepFailure::fatal("Test", format!("no scripted reply for {state}"))))
            })
        }
    }

    fn goto(target: &str) -> Result<Transition, StepFailure> {
        Ok(Transition::Goto {
            target: target.into(),
            input: None,
        })
    }

    fn result(payload: &str) -> Result<Transition, StepFailure> {
        Ok(Transition::Result {
            payload: payload.into(),
        })
    }

    fn retryable() -> Result<Transition, StepFailure> {
        Err(StepFailure::retryable(
            PauseReason::ClaudeError,
            "ClaudeCodeError",
            "claude exited with 1",
        ))
    }

    struct Harness {
        workflow: WorkflowLoop,
        executor: Arc<ScriptedExecutor>,
        bus: Arc<EventBus>,
        _dir: tempfile::TempDir,
    }

    fn harness(replies: Vec<(&str, Result<Transition, StepFailure>)>) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = RunStore::new(dir.path().join(".baton"));
        let task_folder = dir.path().join("task");
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
            agents: vec![Agent::main(
                "START".into(),
                PathBuf::from("/wf"),
                dir.path().to_path_buf(),
                task_folder,
            )],
            terminated: Vec::new(),
            fork_counters: BTreeMap::new(),
            launch_params: LaunchParams::default(),
            error: None,
        };
        store.create(&state).unwrap();
        let executor = ScriptedExecutor::new(replies, Duration::from_millis(200));
        let executors = Executors {
            script: executor.clone(),
            markdown: executor.clone(),
        };
        let bus = Arc::new(EventBus::new());
        let (cancel, cancel_receiver) = watch::channel(false);
        let context = Arc::new(ExecutionContext {
            run_id: "r".into(),
            bus: Arc::clone(&bus),
            timeout: StateTimeout::from_seconds(0.0, TimeoutSource::Default),
            cancel: cancel_receiver,
            run_dir: dir.path().to_path_buf(),
        });
        let retry = RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(1),
        };
        Harness {
            workflow: WorkflowLoop::new(state, store, context, executors, retry, cancel),
            executor,
            bus,
            _dir: dir,
        }
    }

    async fn run(harness: &mut Harness) -> RunOutcome {
        harness.workflow.run(std::future::pending()).await
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
        assert_eq!(
            calls,
            [
                ("START".into(), 1),
                ("START".into(), 2),
                ("START".into(), 3),
                ("END".into(), 1)
            ]
        );
        assert_eq!(harness.workflow.state().main_result(), Some("ok"));
        assert_eq!(harness.workflow.state().total_cost_usd, 0.5);
    }

    #[tokio::test]
    async fn r10_1_exhausted_retries_pause_the_agent_with_the_reason() {
        let mut harness = harness(vec![
            ("START", retryable()),
            ("START", retryable()),
            ("START", retryable()),
        ]);
        let paused = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&paused);
        harness.bus.on(
            EventKind::AgentPaused,
            Arc::new(move |event: &Event| {
                sink.lock().unwrap().push(event.clone());
                Ok(())
            }),
        );
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
        assert!(
            started.elapsed() >= Duration::from_millis(120),
            "the retry waited about base_delay"
        );
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
        let worker = state
            .agents
            .iter()
            .find(|agent| agent.id == "main_slow1")
            .expect("worker kept");
        assert_eq!(worker.current_state, "AFTER", "the sibling's step was recorded");
        let main = state.agents.iter().find(|agent| agent.id == "main").unwrap();
        assert_eq!(main.current_state, "FAIL", "the failed agent stays at the failed state");
        assert!(
            !harness
                .executor
                .calls
                .lock()
                .unwrap()
                .iter()
                .any(|(state, _)| state == "AFTER"),
            "nothing new launched"
        );
        assert_eq!(state.status, RunStatus::Failed);
        assert_eq!(state.error.as_deref(), Some("boom"));
    }

    #[tokio::test]
    async fn validation_failure_pauses_without_retry() {
        let mut harness = harness(vec![(
            "START",
            Err(StepFailure::pause(
                PauseReason::ValidationError,
                "InvalidMultiFork",
                "bad multi-fork",
            )),
        )]);
        assert_eq!(run(&mut harness).await, RunOutcome::Paused);
        assert_eq!(harness.executor.calls.lock().unwrap().len(), 1);
        assert_eq!(
            harness.workflow.state().agents[0].error.as_deref(),
            Some("bad multi-fork")
        );
    }

    #[tokio::test]
    async fn shutdown_signal_interrupts_and_marks_the_run() {
        let mut harness = harness(vec![("START", goto("SLOW")), ("SLOW", result("late"))]);
        let outcome = harness
            .workflow
            .run(async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                ShutdownSignal::Interrupt
            })
            .await;
        assert_eq!(
            outcome,
            RunOutcome::Interrupted {
                signal: ShutdownSignal::Interrupt
            }
        );
        assert_eq!(harness.workflow.state().status, RunStatus::Interrupted);
    }
}
