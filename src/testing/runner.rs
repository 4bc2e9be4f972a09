//! One test: a run of the real workflow loop — the same executors, policies,
//! reminders, implicit transitions, forks, bounds and budget as `baton run` — with
//! the [`ScriptedBackend`] in place of Claude and the test's script stubs, in a
//! temporary project of its own; then its expectations checked against what the
//! run did.
//!
//! Asks are answered as `baton answer` would: the run is started with
//! `--on-ask pause`; when it stops asking, the next of the test's `answers` goes to
//! the earliest ask and the run is resumed from its store, until the answers run
//! out.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{mpsc, watch};

use crate::events::Event;
use crate::events::bus::EventBus;
use crate::executor::context::{StateTimeout, TimeoutSource};
use crate::executor::markdown::MarkdownExecutor;
use crate::executor::script::ScriptExecutor;
use crate::executor::{ExecutionContext, Executors};
use crate::ids::{AgentId, RunId, StateName};
use crate::lint::check::Severity;
use crate::model::agent::{Agent, AgentStatus};
use crate::model::bound::Bound;
use crate::model::on_ask::OnAsk;
use crate::model::run_state::{LaunchParams, NewRun, RunState};
use crate::observers::ConsoleObserver;
use crate::observers::console::Verbosity;
use crate::process::stop_level::StopLevel;
use crate::run::edit::{Edit, edit_agent};
use crate::run::outcome::{RunLimits, RunOutcome};
use crate::run::retry_policy::RetryPolicy;
use crate::run::workflow_loop::WorkflowLoop;
use crate::store::persistence::RunPersistence;
use crate::store::runs::RunStore;
use crate::testing::scripted::{Miss, ScriptedBackend, ScriptedStubs};
use crate::testing::spec::{Expectations, Stop, TestSpec};
use crate::text::count::count;
use crate::transition::task_folder::TaskFolders;
use crate::workflow::manifest::Manifest;
use crate::workflow::resolution::entry_point;

/// Every test's run has this id, in its own `.baton` directory.
const RUN_ID: &str = "test";

/// What a test's run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Observed {
    /// `completed`, `paused`, `failed`, `asking` (or `interrupted`).
    pub(crate) outcome: String,
    /// Why it stopped where it did, for messages: the failed or paused agent and
    /// its error, the bound reached, the question asked.
    pub(crate) detail: Option<String>,
    pub(crate) result: Option<String>,
    /// The states the main agent entered, in order.
    pub(crate) path: Vec<StateName>,
    /// How many times each state was entered, by any agent.
    pub(crate) visits: BTreeMap<StateName, u64>,
    pub(crate) steps: u64,
    pub(crate) cost_usd: f64,
    /// Turns and script visits the test gave nothing for.
    pub(crate) misses: Vec<Miss>,
    /// Answers left over when the run stopped.
    pub(crate) answers_left: usize,
    /// A stop at a breakpoint that was not the one the test expected.
    pub(crate) stop_failures: Vec<String>,
    /// `stops` left over when the run stopped.
    pub(crate) stops_left: usize,
}

/// Entries of states, recorded from the bus: (agent, state), in the order they began.
#[derive(Default)]
struct Entries(Mutex<Vec<(AgentId, StateName)>>);

impl Entries {
    fn attach(self: &Arc<Self>, bus: &EventBus) {
        let entries = Arc::clone(self);
        bus.on_all(Arc::new(move |event: &Event| {
            // A retry of a step is the same visit.
            if let Event::StateStarted { agent_id, state, attempt: 1, .. } = event {
                entries
                    .0
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push((agent_id.clone(), state.clone()));
            }
            Ok(())
        }));
    }

    fn take(&self) -> Vec<(AgentId, StateName)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// Run `spec` against the workflow `scope`. `Err` when the run could not even be
/// set up (the workflow is unreadable or has lint errors, the store cannot be
/// written).
/// Run one test; with `console`, its run is shown on stderr as `baton run` shows it.
pub(crate) async fn run_test(scope: &Path, spec: Arc<TestSpec>, console: bool) -> Result<Observed, String> {
    let initial_state = match &spec.start {
        Some(state) => state.to_string(),
        None => entry_point(scope).map_err(|error| error.to_string())?,
    };
    refuse_lint_errors(scope, spec.start.as_deref())?;
    let manifest = Manifest::of(scope).map_err(|error| error.to_string())?;
    let project = tempfile::Builder::new()
        .prefix("baton-test-")
        .tempdir()
        .map_err(|error| format!("cannot create a temporary directory: {error}"))?;
    let work = project.path().join("work");
    std::fs::create_dir_all(&work).map_err(|error| format!("cannot create {}: {error}", work.display()))?;
    if spec.repository {
        init_repository(&work)?;
    }
    let store = RunStore::new(project.path().join(".baton"));
    let run_id = RunId::from(RUN_ID);

    let mut environment = manifest.as_ref().map(Manifest::environment_now).unwrap_or_default();
    environment.extend(spec.env.clone());
    let launch_params = LaunchParams {
        timeout_seconds: spec.timeout,
        max_steps: spec.max_steps,
        on_ask: Some(OnAsk::Pause),
        environment,
        breakpoints: spec.breakpoints.clone(),
        ..LaunchParams::default()
    };
    let task_folder = TaskFolders::new(store.baton_dir(), &run_id).folder_for(&AgentId::main(), 0);
    let mut main = Agent::main(StateName::from(initial_state.as_str()), scope.to_path_buf(), work.clone(), task_folder);
    main.pending_result = spec.input.clone();
    let budget_usd = spec.budget.or(manifest.as_ref().and_then(|manifest| manifest.default_budget)).unwrap_or(0.0);
    let mut state = RunState::new(NewRun {
        run_id: run_id.clone(),
        scope_dir: scope.to_path_buf(),
        scope_url: None,
        initial_state: initial_state.into(),
        launch_cwd: work,
        budget_usd,
        main,
        launch_params,
    });
    let store_error = |error: crate::store::runs::StoreError| format!("cannot write the test's run: {error}");
    let mut journal_intact = store.create(&state).map_err(store_error)?.journal_intact;
    // Whether the run was reloaded (as `baton resume` would): its journal is folded.
    let mut reloaded = false;

    let backend = Arc::new(ScriptedBackend::new(Arc::clone(&spec)));
    let stubs = Arc::new(ScriptedStubs::new(Arc::clone(&spec)));
    let executors = Executors {
        script: Arc::new(ScriptExecutor::stubbed(Arc::clone(&stubs) as _)),
        markdown: Arc::new(MarkdownExecutor::new(crate::backend::Backends::every_name(Arc::clone(&backend) as _))),
    };
    let entries = Arc::new(Entries::default());
    let timeout = match spec.timeout {
        Some(seconds) => StateTimeout::from_seconds(seconds, TimeoutSource::Flag),
        None => StateTimeout::from_seconds(StateTimeout::DEFAULT_SECONDS, TimeoutSource::Default),
    };
    let mut answers = spec.answers.iter();
    let mut stops = spec.stops.iter();
    let mut stop_failures = Vec::new();
    // The edits of the last stop, published once the edited state is saved.
    let mut edits: Vec<Event> = Vec::new();
    let mut failed_at = None;
    let (outcome, state) = loop {
        let mut persistence = RunPersistence::begin(store.clone(), &state, journal_intact).map_err(store_error)?;
        if reloaded {
            persistence.fold(&state).map_err(store_error)?;
        }
        let bus = Arc::new(EventBus::new());
        if console {
            Arc::new(ConsoleObserver::new(Box::new(std::io::stderr()), Verbosity::Normal, false)).attach(&bus);
        }
        entries.attach(&bus);
        for edit in edits.drain(..) {
            bus.emit(edit);
        }
        let failure = Arc::new(Mutex::new(None));
        let failure_seen = Arc::clone(&failure);
        bus.on_all(Arc::new(move |event: &Event| {
            if let Event::RunFailed { agent_id: Some(agent), state: Some(state), .. } = event {
                *failure_seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) =
                    Some((agent.clone(), state.clone()));
            }
            Ok(())
        }));
        let (stop_sender, stop) = watch::channel(StopLevel::Run);
        let context = Arc::new(ExecutionContext {
            environment: state.launch_params.environment.clone(),
            run_id: run_id.clone(),
            baton_dir: store.baton_dir().to_path_buf(),
            inputs_dir: store.run_dir(&run_id).join("inputs"),
            bus,
            timeout: timeout.clone(),
            stop,
            watchdog: None,
            budget_usd: state.budget_usd,
            default_model: None,
            default_backend: crate::ids::BackendName::Claude,
            default_effort: None,
            borrowed_sessions: state.borrowed_sessions.clone(),
            telemetry: None,
        });
        let limits = RunLimits {
            max_steps: spec.max_steps,
            grace: Duration::from_secs(5),
            no_wait: true,
            ..RunLimits::default()
        };
        let retry = RetryPolicy { max_attempts: 3, base_delay: Duration::from_millis(10) };
        let mut workflow =
            WorkflowLoop::new(state, persistence, context, executors.clone(), retry, limits, stop_sender);
        // No signal stops a test's run from here: Ctrl-C ends `baton test` itself.
        let (_signals_sender, signals) = mpsc::unbounded_channel();
        let outcome = workflow.run(signals).await;
        failed_at = failure.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take().or(failed_at);
        let stopped = workflow.state().clone();
        drop(workflow);
        // A stop at a breakpoint is continued by the test's next `stops` entry.
        let at_breakpoint = outcome == RunOutcome::Paused && stopped.agents.iter().any(Agent::is_at_breakpoint);
        if at_breakpoint {
            let Some(expected) = stops.next() else { break (outcome, stopped) };
            // As `baton resume --agent`: reload the run, check and edit, go on.
            let loaded = store.load_run(RUN_ID).map_err(store_error)?;
            state = loaded.state;
            journal_intact = loaded.journal_intact;
            reloaded = true;
            match continue_stop(&mut state, expected, spec.stops.len() - stops.len()) {
                Ok(made) => edits = made,
                Err(failure) => {
                    stop_failures.push(failure);
                    break (outcome, stopped);
                }
            }
            continue;
        }
        // An answer is used only when the run asks.
        let next = if outcome == RunOutcome::Asking { answers.next() } else { None };
        let Some(answer) = next else { break (outcome, stopped) };
        // As `baton answer`: reload the run from its store, answer the earliest ask.
        let loaded = store.load_run(RUN_ID).map_err(store_error)?;
        state = loaded.state;
        journal_intact = loaded.journal_intact;
        reloaded = true;
        let asking = state.asking_agents().first().map(|agent| agent.id.clone());
        if let Some(agent) = state.agents.iter_mut().find(|agent| Some(&agent.id) == asking.as_ref()) {
            agent.answer(answer.clone());
        }
    };
    let answers_left = answers.len();
    let stops_left = stops.len();
    let entries = entries.take();
    let mut visits = BTreeMap::new();
    for (_, state) in &entries {
        *visits.entry(state.clone()).or_insert(0) += 1;
    }
    let mut misses = backend.misses();
    misses.extend(stubs.misses());
    Ok(Observed {
        outcome: outcome_name(&outcome).to_string(),
        detail: detail(&outcome, &state, failed_at.as_ref()),
        result: state.main_result().map(str::to_string),
        path: entries.iter().filter(|(agent, _)| agent.is_main()).map(|(_, state)| state.clone()).collect(),
        visits,
        steps: state.steps_completed,
        cost_usd: state.total_cost_usd,
        misses,
        answers_left,
        stop_failures,
        stops_left,
    })
}

/// The test's `expected` stop, checked against the stopped run and continued: the
/// agent stands before `at` (its next prompt containing `prompt_contains`), gets its
/// edits, and every agent stopped at a breakpoint goes on, as `baton resume` does.
fn continue_stop(state: &mut RunState, expected: &Stop, number: usize) -> Result<Vec<Event>, String> {
    let stopped: Vec<String> = state
        .agents
        .iter()
        .filter(|agent| agent.is_at_breakpoint())
        .map(|agent| format!("{} before {}", agent.id, agent.current_state))
        .collect();
    let Some(agent) = state.agents.iter().find(|agent| *agent.id == *expected.agent && agent.is_at_breakpoint()) else {
        return Err(format!(
            "stop {number}: expected agent {} stopped before {}, but the run stopped with {}",
            expected.agent,
            expected.at,
            stopped.join(", ")
        ));
    };
    if agent.current_state != expected.at {
        return Err(format!(
            "stop {number}: expected agent {} stopped before {}, but it stopped before {}",
            expected.agent, expected.at, agent.current_state
        ));
    }
    if let Some(part) = &expected.prompt_contains {
        let next = crate::inspect::next_step::describe(state, agent)
            .map_err(|reason| format!("stop {number}: its next step cannot be shown: {reason}"))?;
        if !next.text.contains(part.as_str()) {
            return Err(format!(
                "stop {number}: expected {}'s next prompt before {} to contain {part:?}, got {:?}",
                expected.agent, expected.at, next.text
            ));
        }
    }
    let edit = Edit {
        input: expected.input.clone(),
        goto: expected.goto.as_ref().map(|state| state.to_string()),
        prompt: expected.prompt.clone(),
    };
    let Some(agent) = state.agents.iter_mut().find(|agent| *agent.id == *expected.agent) else { return Ok(Vec::new()) };
    let events = edit_agent(agent, &edit, "test", None)
        .map_err(|refusal| format!("stop {number}: {}", refusal.message(&expected.agent)))?;
    for agent in state.agents.iter_mut().filter(|agent| agent.is_at_breakpoint()) {
        agent.unpause();
    }
    Ok(events)
}

fn outcome_name(outcome: &RunOutcome) -> &'static str {
    match outcome {
        RunOutcome::Completed => "completed",
        RunOutcome::Paused => "paused",
        RunOutcome::Failed { .. } => "failed",
        RunOutcome::Asking => "asking",
        RunOutcome::Interrupted { .. } => "interrupted",
    }
}

/// Where and why the run stopped, as a message puts it in parentheses.
fn detail(outcome: &RunOutcome, state: &RunState, failed_at: Option<&(AgentId, StateName)>) -> Option<String> {
    match outcome {
        RunOutcome::Completed | RunOutcome::Interrupted { .. } => None,
        RunOutcome::Failed { error } => Some(match failed_at {
            Some((agent, at)) => format!("agent {agent} at {at}: {error}"),
            None => error.clone(),
        }),
        RunOutcome::Paused => {
            let paused = state.agents.iter().find(|agent| agent.status == AgentStatus::Paused);
            match (state.paused_by, paused) {
                (Some(Bound::Steps { max }), _) => Some(format!("the step limit of {max} was reached")),
                (Some(Bound::Time { .. }), _) => Some("the time limit was reached".to_string()),
                (None, Some(agent)) => Some(format!(
                    "agent {} at {}: {}",
                    agent.id,
                    agent.current_state,
                    agent.error.as_deref().unwrap_or("paused")
                )),
                (None, None) => None,
            }
        }
        RunOutcome::Asking => state
            .asking_agents()
            .first()
            .and_then(|agent| Some(format!("agent {} asks: {}", agent.id, agent.ask.as_ref()?.prompt.trim()))),
    }
}

/// As `baton run` does, a workflow with lint errors is refused before any step.
fn refuse_lint_errors(scope: &Path, start: Option<&str>) -> Result<(), String> {
    let Ok(found) = crate::lint::lint_from(scope, &crate::lint::shown(scope), start) else { return Ok(()) };
    let errors: Vec<String> = found
        .iter()
        .filter(|diagnostic| diagnostic.severity == Severity::Error)
        .map(|diagnostic| format!("{}: {}", diagnostic.place(), diagnostic.message))
        .collect();
    match errors.as_slice() {
        [] => Ok(()),
        errors => Err(format!("the workflow has lint errors (`baton lint` shows them): {}", errors.join("; "))),
    }
}

/// What the test expected and the run did not do, one message each; empty when it passed.
pub(crate) fn check(expect: &Expectations, observed: &Observed) -> Vec<String> {
    // What else went wrong follows from a missing reply or stub: that is the failure.
    if !observed.misses.is_empty() {
        return observed.misses.iter().map(|miss| miss.message.clone()).collect();
    }
    // A stop that was not the one expected: where the run went from there follows.
    if !observed.stop_failures.is_empty() {
        return observed.stop_failures.clone();
    }
    let mut failures = Vec::new();
    if observed.outcome != expect.outcome.as_str() {
        let detail = observed.detail.as_ref().map_or_else(String::new, |detail| format!(" ({detail})"));
        failures.push(format!("expected outcome {}, got {}{detail}", expect.outcome.as_str(), observed.outcome));
    }
    let result = observed.result.as_deref();
    if let Some(expected) = &expect.result
        && result != Some(expected.as_str())
    {
        failures.push(format!("expected result {expected:?}, got {}", shown_result(result)));
    }
    if let Some(part) = &expect.result_contains
        && !result.is_some_and(|result| result.contains(part.as_str()))
    {
        failures.push(format!("expected a result containing {part:?}, got {}", shown_result(result)));
    }
    if let Some(path) = &expect.path
        && *path != observed.path
    {
        failures.push(format!("expected path {}, got {}", states(path), states(&observed.path)));
    }
    if let Some(visited) = &expect.visited {
        let seen: Vec<StateName> = observed.visits.keys().cloned().collect();
        let expected: Vec<StateName> = visited.iter().cloned().collect();
        if expected != seen {
            failures.push(format!("expected visited states {}, got {}", states(&expected), states(&seen)));
        }
    }
    if let Some(steps) = expect.steps
        && steps != observed.steps
    {
        failures.push(format!("expected {}, got {}", count(steps, "step", "steps"), observed.steps));
    }
    for (state, times) in &expect.visits {
        let seen = observed.visits.get(state).copied().unwrap_or(0);
        if seen != *times {
            failures.push(format!("expected {state} to be entered {}, got {seen}", count(*times, "time", "times")));
        }
    }
    if let Some(cost) = expect.cost_usd
        && (cost - observed.cost_usd).abs() > 1e-9
    {
        failures.push(format!("expected a total cost of ${cost}, got ${}", observed.cost_usd));
    }
    if observed.stops_left > 0 {
        failures.push(format!(
            "the run stopped at fewer breakpoints than the test continues: {} stop(s) left unused",
            observed.stops_left
        ));
    }
    if observed.answers_left > 0 {
        failures.push(format!(
            "the run asked fewer questions than the test answers: {} answer(s) left unused",
            observed.answers_left
        ));
    }
    failures
}

fn shown_result(result: Option<&str>) -> String {
    result.map_or_else(|| "no result".to_string(), |result| format!("{result:?}"))
}

fn states(states: &[StateName]) -> String {
    format!("[{}]", states.iter().map(|state| &**state).collect::<Vec<_>>().join(", "))
}

/// `repository: true`: the working directory becomes a git repository with one
/// empty commit, so `HEAD` exists for worktrees and scripts.
fn init_repository(work: &Path) -> Result<(), String> {
    let steps: [&[&str]; 2] = [
        &["init", "--quiet"],
        &[
            "-c",
            "user.name=baton test",
            "-c",
            "user.email=test@baton.invalid",
            "commit",
            "--quiet",
            "--allow-empty",
            "-m",
            "start",
        ],
    ];
    for arguments in steps {
        let output = std::process::Command::new("git")
            .args(arguments)
            .current_dir(work)
            .output()
            .map_err(|error| format!("`repository: true` needs git: {error}"))?;
        if !output.status.success() {
            return Err(format!(
                "`repository: true`: git {} failed: {}",
                arguments.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
    }
    Ok(())
}
