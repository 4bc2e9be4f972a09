//! The workflow loop as a whole, with scripted executors: retries, pauses,
//! fatal errors, shutdown and bounds. Every test checks that the state on disk
//! equals the state in memory when the loop returns.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::{Notify, mpsc, watch};

use crate::events::Event;
use crate::events::bus::EventBus;
use crate::events::error_kind::ErrorKind;
use crate::executor::context::{StateTimeout, TimeoutSource};
use crate::executor::step_failure::StepFailure;
use crate::executor::{ExecutionContext, ExecutionResult, Executors, StepInput};
use crate::executor::{StateExecutor, StepFuture};
use crate::model::agent::{Agent, AgentStatus, PauseReason};
use crate::model::bound::Bound;
use crate::model::run_state::{LaunchParams, NewRun};
use crate::model::run_state::{RunState, RunStatus};
use crate::process::stop_level::StopLevel;
use crate::run::outcome::{RunLimits, RunOutcome};
use crate::run::retry_policy::RetryPolicy;
use crate::run::shutdown::ShutdownSignal;
use crate::run::workflow_loop::WorkflowLoop;
use crate::store::persistence::RunPersistence;
use crate::store::runs::RunStore;
use crate::transition::Transition;

/// Replies with scripted results per state name, in order; records every call.
/// A step of `SLOW` runs until `gate` opens: the harness opens it when the loop
/// announces a stop or handles a failure, so "a step was still running when …"
/// holds by construction, not by a race against the clock.
struct ScriptedExecutor {
    replies: Mutex<HashMap<String, VecDeque<Result<ExecutionResult, StepFailure>>>>,
    calls: Mutex<Vec<(String, u32)>>,
    gate: Notify,
    /// Notified when a `SLOW` step begins.
    slow_started: Notify,
    /// The agent of every step, as the executor received it, and when it started.
    agents: Mutex<Vec<(Agent, tokio::time::Instant)>>,
}

impl ScriptedExecutor {
    fn new(replies: Vec<(&str, Result<Transition, StepFailure>)>) -> Arc<ScriptedExecutor> {
        let mut map: HashMap<String, VecDeque<_>> = HashMap::new();
        for (state, reply) in replies {
            let reply = reply.map(|transition| ExecutionResult {
                transition,
                session_id: None,
                session_message: None,
                session_backend: None,
                cost_usd: 0.25,
            });
            map.entry(state.to_string()).or_default().push_back(reply);
        }
        Arc::new(ScriptedExecutor {
            replies: Mutex::new(map),
            calls: Mutex::new(Vec::new()),
            gate: Notify::new(),
            slow_started: Notify::new(),
            agents: Mutex::new(Vec::new()),
        })
    }
}

impl StateExecutor for ScriptedExecutor {
    fn execute<'a>(&'a self, input: StepInput, _context: &'a ExecutionContext) -> StepFuture<'a> {
        Box::pin(async move {
            let state = input.agent.current_state.to_string();
            self.calls.lock().unwrap().push((state.clone(), input.attempt));
            self.agents.lock().unwrap().push((input.agent.clone(), tokio::time::Instant::now()));
            // A fork worker given `delay_ms` takes that long (on tokio's clock).
            if let Some(delay) = input.agent.fork_attributes.get("delay_ms").and_then(|ms| ms.parse().ok()) {
                tokio::time::sleep(Duration::from_millis(delay)).await;
            }
            if state == "SLOW" {
                self.slow_started.notify_one();
                self.gate.notified().await;
            }
            // `W`: a worker that answers with its `item`.
            if state == "W" {
                let item = input.agent.fork_attributes.get("item").cloned().unwrap_or_default();
                let transition = Transition::Result { payload: format!("done {item}") };
                return Ok(ExecutionResult {
                    transition,
                    session_id: None,
                    session_message: None,
                    session_backend: None,
                    cost_usd: 0.0,
                });
            }
            let reply = self.replies.lock().unwrap().get_mut(&state).and_then(VecDeque::pop_front);
            reply.unwrap_or_else(|| {
                Err(StepFailure::fatal(ErrorKind::ScriptError, format!("no scripted reply for {state}")))
            })
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
    Err(StepFailure::retryable(PauseReason::ClaudeError, ErrorKind::ClaudeCodeError, "claude exited with 1"))
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
    let state = RunState::new(NewRun {
        run_id: "r".into(),
        scope_dir: PathBuf::from("/wf"),
        scope_url: None,
        initial_state: "START".into(),
        launch_cwd: dir.path().to_path_buf(),
        budget_usd: 0.0,
        main,
        launch_params: LaunchParams::default(),
    });
    let created = store.create(&state).unwrap();
    let persistence = RunPersistence::begin(store.clone(), &state, created.journal_intact).unwrap();
    let executor = ScriptedExecutor::new(replies);
    let executors = Executors { script: executor.clone(), markdown: executor.clone() };
    let bus = Arc::new(EventBus::new());
    let gate_keeper = Arc::clone(&executor);
    bus.on_all_passing(Arc::new(move |event: &Event| {
        if let Event::WorkflowStopping { .. } | Event::ErrorOccurred { .. } = event {
            // notify_one keeps the permit if SLOW has not started waiting yet.
            gate_keeper.gate.notify_one();
        }
        Ok(())
    }));
    let (stop_sender, stop) = watch::channel(StopLevel::Run);
    let context = Arc::new(ExecutionContext {
        environment: BTreeMap::new(),
        run_id: "r".into(),
        baton_dir: dir.path().join(".baton"),
        inputs_dir: dir.path().join("inputs"),
        bus: Arc::clone(&bus),
        timeout: StateTimeout::from_seconds(0.0, TimeoutSource::Default),
        stop,
        watchdog: None,
        budget_usd: 0.0,
        default_model: None,
        default_backend: crate::ids::BackendName::Claude,
        default_effort: None,
        borrowed_sessions: Default::default(),
        telemetry: None,
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
    let mut harness =
        harness(vec![("START", retryable()), ("START", retryable()), ("START", goto("END")), ("END", result("ok"))]);
    assert_eq!(run(&mut harness).await, RunOutcome::Completed);
    let calls = harness.executor.calls.lock().unwrap().clone();
    assert_eq!(calls, [("START".into(), 1), ("START".into(), 2), ("START".into(), 3), ("END".into(), 1)]);
    assert_eq!(harness.workflow.state().main_result(), Some("ok"));
    assert_eq!(harness.workflow.state().total_cost_usd, 0.5);
}

/// A run whose end is on disk is never resumed, so the last step's events must reach
/// a record a resume would complete (the trace) before the end is written. With no
/// such record, the step's commit and the run's end share one sync.
#[tokio::test]
async fn the_run_end_waits_for_the_last_steps_events_only_where_a_record_keeps_them() {
    for records in [true, false] {
        let mut harness = harness(vec![("START", result("ok"))]);
        let journal = harness.store.journal_path("r");
        let end_written = Arc::new(Mutex::new(None));
        let sink = Arc::clone(&end_written);
        let handler: crate::events::bus::Handler = Arc::new(move |event: &Event| {
            if let Event::TransitionOccurred { .. } = event {
                let text = String::from_utf8_lossy(&std::fs::read(&journal).unwrap()).into_owned();
                *sink.lock().unwrap() = Some(text.contains("\"status\":\"completed\""));
            }
            Ok(())
        });
        if records {
            harness.bus.on_all(handler);
        } else {
            harness.bus.on_all_passing(handler);
        }
        assert_eq!(harness.bus.keeps_records(), records);
        assert_eq!(run(&mut harness).await, RunOutcome::Completed);
        assert_eq!(*end_written.lock().unwrap(), Some(!records), "records: {records}");
    }
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

/// Paused tokio time: the clock only moves when every task waits, so the wait
/// measured is the one the loop asked for, whatever the machine is doing.
#[tokio::test(start_paused = true)]
async fn a13_retries_wait_with_backoff() {
    let mut harness = harness(vec![("START", retryable()), ("START", result("ok"))]);
    harness.workflow.retry.base_delay = Duration::from_secs(60);
    let started = tokio::time::Instant::now();
    assert_eq!(run(&mut harness).await, RunOutcome::Completed);
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(48) && waited <= Duration::from_secs(73), "base_delay ± 20 %: {waited:?}");
}

#[tokio::test]
async fn a14_fatal_error_lets_running_siblings_finish_their_step() {
    let fork = Transition::MultiFork {
        workers: vec![crate::transition::ForkSpec {
            target: "SLOW".into(),
            cd: None,
            input: None,
            task: crate::transition::TaskMode::New,
            isolation: crate::transition::Isolation::Shared,
            attributes: BTreeMap::new(),
            workflow: None,
        }],
        continuation: "FAIL".into(),
        join: None,
    };
    let mut harness = harness(vec![
        ("START", Ok(fork)),
        ("FAIL", Err(StepFailure::fatal(ErrorKind::ScriptError, "boom"))),
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
    assert!(!harness.executor.calls.lock().unwrap().iter().any(|(state, _)| state == "AFTER"), "nothing new launched");
    assert_eq!(state.status, RunStatus::Failed);
    assert_eq!(state.error.as_deref(), Some("boom"));
}

#[tokio::test]
async fn validation_failure_pauses_without_retry() {
    let mut harness = harness(vec![(
        "START",
        Err(StepFailure::pause(PauseReason::ValidationError, ErrorKind::InvalidMultiFork, "bad multi-fork")),
    )]);
    assert_eq!(run(&mut harness).await, RunOutcome::Paused);
    assert_eq!(harness.executor.calls.lock().unwrap().len(), 1);
    assert_eq!(harness.workflow.state().agents[0].error.as_deref(), Some("bad multi-fork"));
}

#[tokio::test]
async fn shutdown_signal_stops_launching_records_the_running_step_and_interrupts() {
    let mut harness = harness(vec![("START", goto("SLOW")), ("SLOW", goto("AFTER")), ("AFTER", result("no"))]);
    // The signal is sent once SLOW has started, and SLOW runs until the loop has
    // handled it (the gate): it is in flight when the stop begins.
    let (signals, receiver) = mpsc::unbounded_channel();
    let executor = Arc::clone(&harness.executor);
    tokio::spawn(async move {
        executor.slow_started.notified().await;
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
        isolation: crate::transition::Isolation::Shared,
        attributes: BTreeMap::new(),
        workflow: None,
    };
    let mut harness = harness(vec![
        (
            "START",
            Ok(Transition::MultiFork {
                workers: vec![fork("A"), fork("B"), fork("C")],
                continuation: "END".into(),
                join: None,
            }),
        ),
        ("END", result("main")),
        ("A", result("a")),
        ("B", result("b")),
        ("C", result("c")),
    ]);
    harness.workflow.limits.max_agents = Some(1);
    assert_eq!(run(&mut harness).await, RunOutcome::Completed);
    let order: Vec<String> = harness.executor.calls.lock().unwrap().iter().map(|(state, _)| state.clone()).collect();
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
    assert_eq!(state.paused_by, Some(Bound::Steps { max: 2 }));
}

#[tokio::test(start_paused = true)]
async fn time_limit_pauses_the_run_after_running_steps_finish() {
    let mut harness = harness(vec![("START", goto("SLOW")), ("SLOW", goto("END")), ("END", result("no"))]);
    harness.workflow.limits.time_limit = Some(Duration::from_secs(60));
    harness.workflow.limits.grace = Duration::from_secs(300);
    assert_eq!(run(&mut harness).await, RunOutcome::Paused);
    let state = harness.workflow.state();
    assert_eq!(state.agents[0].current_state, "END", "SLOW finished within the grace period");
    assert!(state.elapsed_ms >= 60_000, "the clock counts the time spent: {}", state.elapsed_ms);
    assert_eq!(state.paused_by, Some(Bound::Time { limit: Duration::from_secs(60) }));
}

/// A worker of `W` (or `target`) with `item` and `delay_ms` attributes.
fn worker(target: &str, item: &str, delay_ms: u64) -> crate::transition::ForkSpec {
    crate::transition::ForkSpec {
        target: target.into(),
        cd: None,
        input: None,
        task: crate::transition::TaskMode::New,
        isolation: crate::transition::Isolation::Shared,
        attributes: BTreeMap::from([
            ("item".to_string(), item.to_string()),
            ("delay_ms".to_string(), delay_ms.to_string()),
        ]),
        workflow: None,
    }
}

fn fork_and_join(
    workers: Vec<crate::transition::ForkSpec>,
    timeout: Option<Duration>,
) -> Result<Transition, StepFailure> {
    Ok(Transition::MultiFork {
        workers,
        continuation: "AGG".into(),
        join: Some(crate::transition::JoinSpec { next: "AGG".into(), timeout }),
    })
}

/// The agent as it ran state `state` (the last time).
fn ran(harness: &Harness, state: &str) -> Agent {
    ran_at(harness, state).0
}

/// The agent as it ran state `state` (the last time), and when.
fn ran_at(harness: &Harness, state: &str) -> (Agent, tokio::time::Instant) {
    let agents = harness.executor.agents.lock().unwrap();
    agents.iter().rev().find(|(agent, _)| agent.current_state == state).cloned().expect("the state ran")
}

fn statuses(agent: &Agent) -> Vec<(String, &'static str, Option<String>)> {
    let results = agent.join_results.as_ref().expect("join results");
    results.iter().map(|result| (result.agent_id.to_string(), result.status.as_str(), result.result.clone())).collect()
}

#[tokio::test(start_paused = true)]
async fn join_results_arrive_in_fork_order_whatever_the_finishing_order() {
    let mut harness = harness(vec![
        ("START", fork_and_join(vec![worker("W", "a", 300), worker("W", "b", 200), worker("W", "c", 100)], None)),
        ("AGG", result("aggregated")),
    ]);
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    harness.bus.on_all(Arc::new(move |event: &Event| {
        if let Event::AgentTerminated { agent_id, .. } | Event::JoinCompleted { agent_id, .. } = event {
            sink.lock().unwrap().push(agent_id.to_string());
        }
        Ok(())
    }));
    assert_eq!(run(&mut harness).await, RunOutcome::Completed);
    assert_eq!(
        *events.lock().unwrap(),
        ["main_w3", "main_w2", "main_w1", "main", "main"],
        "the workers finish in reverse order; main joins after the last, then terminates"
    );
    let (_, joined_at) = ran_at(&harness, "AGG");
    let (_, last_done) = ran_at(&harness, "W");
    assert!(joined_at >= last_done + Duration::from_millis(300), "AGG starts after the slowest worker");
    let agg = ran(&harness, "AGG");
    assert_eq!(
        statuses(&agg),
        [
            ("main_w1".to_string(), "terminated", Some("done a".to_string())),
            ("main_w2".to_string(), "terminated", Some("done b".to_string())),
            ("main_w3".to_string(), "terminated", Some("done c".to_string())),
        ]
    );
    assert_eq!(
        agg.pending_result.as_deref(),
        Some(
            "Joined 3 workers: 3 terminated, 0 paused, 0 still running.\n\n[main_w1] terminated:\ndone a\n\n\
             [main_w2] terminated:\ndone b\n\n[main_w3] terminated:\ndone c\n"
        )
    );
    assert_eq!(agg.session_id, None, "the parent's own session (none here) is kept");
    assert_eq!(harness.workflow.state().main_result(), Some("aggregated"));
}

#[tokio::test(start_paused = true)]
async fn a_join_reports_a_paused_worker_and_goes_on() {
    let paused = Err(StepFailure::pause(PauseReason::ValidationError, ErrorKind::InvalidMultiFork, "bad output"));
    let mut harness = harness(vec![
        ("START", fork_and_join(vec![worker("W", "a", 100), worker("BAD", "b", 0)], None)),
        ("BAD", paused),
        ("AGG", result("aggregated")),
    ]);
    assert_eq!(run(&mut harness).await, RunOutcome::Paused, "the paused worker remains");
    let agg = ran(&harness, "AGG");
    let results = agg.join_results.clone().unwrap();
    assert_eq!(
        statuses(&agg),
        [("main_w1".to_string(), "terminated", Some("done a".to_string())), ("main_bad2".to_string(), "paused", None)]
    );
    assert_eq!(results[1].error.as_deref(), Some("bad output"));
    assert_eq!(harness.workflow.state().main_result(), Some("aggregated"));
    assert_eq!(harness.workflow.state().agents.len(), 1, "only the paused worker is left");
}

#[tokio::test(start_paused = true)]
async fn a_join_timeout_continues_with_what_has_arrived() {
    let mut harness = harness(vec![
        (
            "START",
            fork_and_join(
                vec![worker("W", "fast", 1_000), worker("W", "slow", 3_600_000)],
                Some(Duration::from_secs(60)),
            ),
        ),
        ("AGG", result("partial")),
    ]);
    let started = tokio::time::Instant::now();
    let timed_out = Arc::new(Mutex::new(None));
    let sink = Arc::clone(&timed_out);
    harness.bus.on_all(Arc::new(move |event: &Event| {
        if let Event::JoinCompleted { timed_out, .. } = event {
            *sink.lock().unwrap() = Some(*timed_out);
        }
        Ok(())
    }));
    assert_eq!(run(&mut harness).await, RunOutcome::Completed);
    assert_eq!(*timed_out.lock().unwrap(), Some(true));
    // AGG started after the timeout, and before the slow worker ended (its status
    // below is still `running`). No upper bound on the time: the journal syncs on a
    // real thread, and paused time may jump ahead while the runtime waits for it
    // (this test once failed under load with a bound of 61 s).
    let (_, at) = ran_at(&harness, "AGG");
    let waited = at - started;
    assert!(waited >= Duration::from_secs(60), "{waited:?}");
    let agg = ran(&harness, "AGG");
    assert_eq!(
        statuses(&agg),
        [
            ("main_w1".to_string(), "terminated", Some("done fast".to_string())),
            ("main_w2".to_string(), "running", None)
        ]
    );
    assert!(started.elapsed() >= Duration::from_secs(3600), "the run still waits for the slow worker to end");
}

#[tokio::test]
async fn a_join_with_nothing_forked_continues_at_once_with_no_results() {
    let join = Ok(Transition::Join(crate::transition::JoinSpec { next: "AGG".into(), timeout: None }));
    let mut harness = harness(vec![("START", join), ("AGG", result("alone"))]);
    assert_eq!(run(&mut harness).await, RunOutcome::Completed);
    let agg = ran(&harness, "AGG");
    assert_eq!(agg.join_results, Some(Vec::new()));
    assert_eq!(agg.pending_result.as_deref(), Some("No workers to join.\n"));
}

#[tokio::test(start_paused = true)]
async fn a_join_waits_only_for_the_workers_forked_since_the_last_join() {
    // main forks w1 and joins it, then forks w2 and joins again: the second join
    // waits for w2 only.
    let mut harness = harness(vec![
        ("START", fork_and_join(vec![worker("W", "first", 10)], None)),
        (
            "AGG",
            Ok(Transition::MultiFork {
                workers: vec![worker("W", "second", 10)],
                continuation: "AGG2".into(),
                join: Some(crate::transition::JoinSpec { next: "AGG2".into(), timeout: None }),
            }),
        ),
        ("AGG2", result("twice")),
    ]);
    assert_eq!(run(&mut harness).await, RunOutcome::Completed);
    assert_eq!(
        statuses(&ran(&harness, "AGG2")),
        [("main_w2".to_string(), "terminated", Some("done second".to_string()))]
    );
}

/// Under `--on-ask json`: `react` sees every event with the control-line sender and
/// the executor (whose `gate` lets a `SLOW` step finish).
fn supervise(
    harness: &mut Harness,
    react: impl Fn(&Event, &mpsc::UnboundedSender<Vec<u8>>, &ScriptedExecutor) + Send + Sync + 'static,
) {
    let lines = harness.workflow.control_lines();
    let executor = Arc::clone(&harness.executor);
    harness.bus.on_all(Arc::new(move |event: &Event| {
        react(event, &lines, &executor);
        Ok(())
    }));
}

fn send(lines: &mpsc::UnboundedSender<Vec<u8>>, line: &str) {
    lines.send(line.as_bytes().to_vec()).unwrap();
}

fn agent<'a>(harness: &'a Harness, id: &str) -> &'a Agent {
    harness.workflow.state().agents.iter().find(|agent| agent.id == id).expect("the agent is in the run")
}

/// A retry waiting out its delay has not begun: a cancel withdraws it at once.
#[tokio::test]
async fn a_cancelled_retry_is_withdrawn_at_once_and_its_agent_paused() {
    let mut harness = harness(vec![("START", retryable()), ("START", result("never"))]);
    harness.workflow.retry.base_delay = Duration::from_secs(60);
    supervise(&mut harness, |event, lines, _| {
        if let Event::ErrorOccurred { .. } = event {
            send(lines, r#"{"cancel_agent": "main"}"#);
        }
    });
    let started = tokio::time::Instant::now();
    assert_eq!(run(&mut harness).await, RunOutcome::Paused);
    assert!(started.elapsed() < Duration::from_secs(30), "the retry's delay was not waited out");
    assert_eq!(harness.executor.calls.lock().unwrap().len(), 1, "the retry never ran");
    let main = agent(&harness, "main");
    assert_eq!(
        (main.pause_reason, main.error.as_deref()),
        (Some(PauseReason::Cancelled), Some("cancelled by request"))
    );
    assert_eq!(main.current_state, "START", "a resume runs the step again");
}

/// A worker cancelled during its step finishes it (committed), then pauses; for
/// its parent's join it has ended, paused.
#[tokio::test]
async fn a_cancelled_worker_finishes_its_step_then_pauses_and_its_join_goes_on() {
    let mut harness = harness(vec![
        ("START", fork_and_join(vec![worker("SLOW", "a", 0)], None)),
        ("SLOW", goto("Y")),
        ("Y", result("never")),
        ("AGG", result("aggregated")),
    ]);
    supervise(&mut harness, |event, lines, executor| match event {
        // Lines are obeyed in order: once the marker is ignored, the cancel was taken.
        Event::JoinWaiting { .. } => {
            send(lines, r#"{"cancel_agent": "main_slow1"}"#);
            send(lines, "marker");
        }
        Event::ControlIgnored { line, .. } if line == "marker" => executor.gate.notify_one(),
        _ => {}
    });
    assert_eq!(run(&mut harness).await, RunOutcome::Paused, "the cancelled worker remains, paused");
    let worker = agent(&harness, "main_slow1");
    assert_eq!((worker.current_state.as_ref(), worker.pause_reason), ("Y", Some(PauseReason::Cancelled)));
    assert!(!harness.executor.calls.lock().unwrap().iter().any(|(state, _)| state == "Y"), "Y never launched");
    let agg = ran(&harness, "AGG");
    assert_eq!(statuses(&agg), [("main_slow1".to_string(), "paused", None)]);
    assert_eq!(agg.join_results.unwrap()[0].error.as_deref(), Some("cancelled by request"));
    assert_eq!(harness.workflow.state().main_result(), Some("aggregated"));
}

/// A joining agent runs no step: it pauses at once, keeping its join for a resume.
#[tokio::test]
async fn a_cancelled_joining_agent_pauses_at_once_and_keeps_its_join() {
    let mut harness = harness(vec![
        ("START", fork_and_join(vec![worker("SLOW", "a", 0)], None)),
        ("SLOW", result("w")),
        ("AGG", result("never")),
    ]);
    supervise(&mut harness, |event, lines, executor| match event {
        Event::JoinWaiting { .. } => send(lines, r#"{"cancel_agent": "main"}"#),
        Event::AgentPaused { agent_id, .. } if agent_id == "main" => executor.gate.notify_one(),
        _ => {}
    });
    assert_eq!(run(&mut harness).await, RunOutcome::Paused);
    let main = agent(&harness, "main");
    assert_eq!((main.status, main.pause_reason), (AgentStatus::Paused, Some(PauseReason::Cancelled)));
    assert!(main.join.is_some(), "it joins again on resume");
    assert!(!harness.executor.calls.lock().unwrap().iter().any(|(state, _)| state == "AGG"));
    assert!(harness.workflow.state().terminated.iter().any(|agent| agent.id == "main_slow1"), "the worker went on");
}
