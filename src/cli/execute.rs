//! What `run` and `resume` share: take the run's lock, wire the bus, observers,
//! persistence and executors around its state, drive the workflow loop, and report
//! the outcome (A7, A8).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::watch;

use super::CliError;
use super::arguments::ExecutionArguments;
use super::otel_export;
use crate::backend::{Backends, CliPaths};
use crate::cli::config::{Config, check_effort, check_model};
use crate::distributed::carry::files_mode::FilesMode;
use crate::distributed::engine::Engine;
use crate::distributed::ingress::Ingress;
use crate::distributed::remote_executor::RemoteExecutor;
use crate::events::Event;
use crate::events::bus::EventBus;
use crate::events::metrics::RunMetrics;
use crate::executor::context::{StateTimeout, TimeoutSource};
use crate::executor::script::input_files_dir;
use crate::executor::{ExecutionContext, Executors};
use crate::exit_code;
use crate::ids::{BackendName, RunId};
use crate::model::agent::AgentStatus;
use crate::model::on_ask::OnAsk;
use crate::model::run_state::{LaunchParams, RunState};
use crate::observers::console::Verbosity;
use crate::observers::{ConsoleObserver, DebugObserver};
use crate::process::limits::{raise_open_file_limit, steps_within};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::run::outcome::{AnswerSource, OpenFiles, RunLimits, RunOutcome};
use crate::run::retry_policy::RetryPolicy;
use crate::run::shutdown::shutdown_signals;
use crate::run::step_outcome::{paused_event, transition_event};
use crate::run::workflow_loop::WorkflowLoop;
use crate::store::journal::StepSummary;
use crate::store::lock::RunLock;
use crate::store::persistence::RunPersistence;
use crate::store::runs::{CreatedRun, RunStore};
use crate::text::duration::{MAX_DURATION, number_text, parse_duration, seconds};

fn invalid(flag: &'static str, value: impl ToString, expected: impl Into<String>) -> CliError {
    CliError::InvalidValue { flag, value: value.to_string(), expected: expected.into() }
}

/// Validate `--budget`: a finite, non-negative number of dollars (R9.1).
pub(crate) fn check_budget(budget: Option<f64>) -> Result<Option<f64>, CliError> {
    match budget {
        Some(value) if !value.is_finite() || value < 0.0 => Err(invalid(
            "budget",
            value,
            "expected a non-negative amount in US dollars, such as 5 or 0.50 (0 means unlimited)",
        )),
        other => Ok(other),
    }
}

/// The effective timeout: the flag, else the one the run was launched with (A10),
/// else the config file's, else 600 s (R7.12).
pub(crate) fn timeout_of(
    flag: Option<f64>,
    launched_with: Option<f64>,
    config: &Config,
) -> Result<StateTimeout, CliError> {
    if let Some(value) = flag
        && let Err(error) = seconds(value)
    {
        return Err(invalid("timeout", number_text(value), format!("{error} (0 disables the timeout)")));
    }
    Ok(match (flag, launched_with, config.timeout) {
        (Some(seconds), _, _) => StateTimeout::from_seconds(seconds, TimeoutSource::Flag),
        (None, Some(seconds), _) => StateTimeout::from_seconds(seconds, TimeoutSource::LaunchFlag),
        (None, None, Some(seconds)) => StateTimeout::from_seconds(seconds, TimeoutSource::Config),
        (None, None, None) => StateTimeout::from_seconds(StateTimeout::DEFAULT_SECONDS, TimeoutSource::Default),
    })
}

/// Fold the flags into the run's launch parameters: a flag overrides what the run
/// was started with, so `resume --max-steps 500` raises the bound (A10, R8.12).
pub(crate) fn apply_launch_options(
    options: &ExecutionArguments,
    params: &mut LaunchParams,
    config: &Config,
) -> Result<(), CliError> {
    if let Some(name) = &options.backend {
        params.backend = Some(BackendName::parse(name).map_err(|error| invalid("backend", name, error.to_string()))?);
    }
    let backend = run_backend(params, config);
    // The problem without its `invalid model `x`: ` lead (the flag's message names
    // the value), and a hint worded for the command line.
    let reason = |what: &str, value: &str, problem: String| {
        let lead = format!("invalid {what} `{value}`: ");
        problem.strip_prefix(&lead).unwrap_or(&problem).replace("`backend: ", "`--backend ")
    };
    if let Some(model) = &options.model {
        params.model = Some(
            check_model(backend, model).map_err(|problem| invalid("model", model, reason("model", model, problem)))?,
        );
    }
    if let Some(effort) = &options.effort {
        params.effort = Some(
            check_effort(backend, effort)
                .map_err(|problem| invalid("effort", effort, reason("effort", effort, problem)))?,
        );
    }
    if let Some(skip) = options.dangerously_skip_permissions {
        params.dangerously_skip_permissions = Some(skip);
    }
    if options.no_wait {
        params.no_wait = true;
    }
    if let Some(mode) = options.on_ask {
        params.on_ask = Some(mode);
    }
    if let Some(max) = options.max_agents {
        params.max_agents = Some(max);
    }
    if let Some(max) = options.max_steps {
        params.max_steps = Some(max);
    }
    if let Some(text) = &options.time_limit {
        let limit = parse_duration(text).map_err(|error| invalid("time-limit", text, error.to_string()))?;
        params.time_limit_ms = Some(limit.as_millis() as u64);
    }
    Ok(())
}

/// `--engine`'s (or config's) engine, checked.
fn parse_engine(text: &str) -> Result<Engine, CliError> {
    Engine::parse(text).map_err(|error| invalid("engine", text, error.to_string()))
}

/// A new run's engine: `--engine`, else config's `engine`, else local; kept in
/// its launch parameters (absent for local, as in runs from before engines).
pub(crate) fn engine_for_new_run(
    options: &ExecutionArguments,
    params: &mut LaunchParams,
    config: &Config,
) -> Result<Engine, CliError> {
    let engine = match options.engine.as_deref().or(config.engine.as_deref()) {
        Some(text) => parse_engine(text)?,
        None => Engine::Local,
    };
    params.engine = (engine != Engine::Local).then(|| engine.to_string());
    files_for(options, params)?;
    Ok(engine)
}

/// `--files` and `--repo` into the run's launch parameters (a resume keeps the
/// run's unless it names them); shipped files need the restate engine.
fn files_for(options: &ExecutionArguments, params: &mut LaunchParams) -> Result<(), CliError> {
    if options.files.is_some() || options.repo.is_some() {
        let shown = options.files.as_deref().unwrap_or("shared");
        match FilesMode::parse(options.files.as_deref(), options.repo.as_deref())
            .map_err(|error| invalid("files", shown, error.to_string()))?
        {
            FilesMode::Shared => (params.files, params.repo) = (None, None),
            FilesMode::Shipped { repo } => (params.files, params.repo) = (Some("shipped".to_string()), repo),
        }
    }
    if params.files.is_some() && params.engine.is_none() {
        return Err(invalid(
            "files",
            "shipped",
            "shipped files travel to `baton worker`s; add `--engine restate=INGRESS_URL`",
        ));
    }
    Ok(())
}

/// A stored run's engine: the one it started with. `--engine` may move a resumed
/// run to another server of the same engine (a new URL), never to the other
/// engine; a rerun (`may_switch`: a new run, nothing of it in flight) may take either.
fn engine_for_stored_run(
    options: &ExecutionArguments,
    state: &mut RunState,
    may_switch: bool,
) -> Result<Engine, CliError> {
    let started = match state.launch_params.engine.as_deref() {
        Some(text) => parse_engine(text)?,
        None => Engine::Local,
    };
    let Some(text) = options.engine.as_deref() else { return Ok(started) };
    let given = parse_engine(text)?;
    if given.kind() != started.kind() && !may_switch {
        return Err(CliError::EngineMismatch {
            run_id: state.run_id.to_string(),
            started: started.described(),
            given: format!("--engine {given}"),
            started_flag: started.to_string(),
        });
    }
    state.launch_params.engine = (given != Engine::Local).then(|| given.to_string());
    Ok(given)
}

/// Before any step: the engine's server answers and can run steps.
pub(crate) async fn check_engine(params: &LaunchParams) -> Result<(), CliError> {
    match params.engine.as_deref().map(parse_engine).transpose()? {
        Some(Engine::Restate { ingress }) => Ok(Ingress::new(&ingress).check().await?),
        Some(Engine::Local) | None => Ok(()),
    }
}

/// The run's backend: `--backend` when the run was launched or resumed with one,
/// else config's, else Claude.
pub(crate) fn run_backend(params: &LaunchParams, config: &Config) -> BackendName {
    params
        .backend
        .or_else(|| config.backend.as_deref().and_then(|name| BackendName::parse(name).ok()))
        .unwrap_or_default()
}

/// Seconds from an environment variable (operations and tests tune waits with them).
fn seconds_from_env(name: &str) -> Option<Duration> {
    seconds(std::env::var(name).ok()?.parse::<f64>().ok()?).ok()
}

/// A stored run continued by `resume` or `rerun`: this invocation's `--budget`,
/// `--timeout` and launch flags folded into its state, and the timeout and limits
/// the continuation runs under.
pub(crate) fn continue_with_options(
    state: &mut RunState,
    budget: Option<f64>,
    options: &ExecutionArguments,
    config: &Config,
    may_switch_engine: bool,
) -> Result<(StateTimeout, RunLimits), CliError> {
    if let Some(budget) = check_budget(budget)? {
        state.budget_usd = budget;
    }
    let timeout = timeout_of(options.timeout, state.launch_params.timeout_seconds, config)?;
    if let Some(seconds) = options.timeout {
        state.launch_params.timeout_seconds = Some(seconds);
    }
    apply_launch_options(options, &mut state.launch_params, config)?;
    super::breakpoints::apply_breakpoints(options, &mut state.launch_params, &state.scope_dir)?;
    engine_for_stored_run(options, state, may_switch_engine)?;
    files_for(options, &mut state.launch_params)?;
    let limits = limits(options, &state.launch_params, config)?;
    Ok((timeout, limits))
}

/// The run's limits from its launch parameters and this invocation's flags;
/// checked before a run is created or touched.
pub(crate) fn limits(
    options: &ExecutionArguments,
    params: &LaunchParams,
    config: &Config,
) -> Result<RunLimits, CliError> {
    let grace =
        seconds(options.grace).map_err(|error| invalid("grace", number_text(options.grace), error.to_string()))?;
    let defaults = RunLimits::default();
    Ok(RunLimits {
        max_agents: params.max_agents,
        max_steps: params.max_steps,
        // A bound from an older state file may be out of range: hold it to the maximum.
        time_limit: params.time_limit_ms.map(|ms| Duration::from_millis(ms).min(MAX_DURATION)),
        grace,
        no_wait: params.no_wait || config.no_wait.unwrap_or(false),
        limit_buffer: seconds_from_env("BATON_LIMIT_BUFFER_SECS").unwrap_or(defaults.limit_buffer),
        limit_poll: seconds_from_env("BATON_LIMIT_POLL_SECS").unwrap_or(defaults.limit_poll),
        open_files: raise_open_file_limit().map(|limit| OpenFiles { limit, max_running: steps_within(limit) }),
        answers: answer_source(params.on_ask.unwrap_or_default()),
    })
}

/// Where asks are answered while the run goes on, under `mode`.
fn answer_source(mode: OnAsk) -> Option<AnswerSource> {
    match mode {
        // Without a terminal to ask at, `prompt` behaves as `pause`.
        OnAsk::Prompt if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() => {
            Some(AnswerSource::Terminal)
        }
        OnAsk::Json => Some(AnswerSource::ControlLines),
        OnAsk::Reject | OnAsk::Pause | OnAsk::Prompt => None,
    }
}

/// The first retry's delay; tests shorten it with `BATON_RETRY_BASE_MS`.
fn retry_policy(attempts: u32) -> RetryPolicy {
    let base_delay = std::env::var("BATON_RETRY_BASE_MS")
        .ok()
        .and_then(|value| value.parse::<u64>().ok())
        .map_or(RetryPolicy::default().base_delay, Duration::from_millis);
    RetryPolicy { max_attempts: attempts, base_delay }
}

/// A run ready to be driven: its state and what recovery found.
pub(crate) struct RunToExecute {
    pub(crate) state: RunState,
    pub(crate) journal_intact: u64,
    /// Steps the journal replayed on load (a resume re-publishes them for the trace).
    pub(crate) replayed_steps: Vec<(u64, StepSummary)>,
    pub(crate) resumed: bool,
    /// Files of a new run still to be synced (`RunStore::create`).
    pub(crate) unsynced: Vec<PathBuf>,
    /// Edits of stopped agents made by this resume (`AgentEdited`), published once
    /// the edited state is durable.
    pub(crate) edits: Vec<Event>,
}

impl RunToExecute {
    /// A run `RunStore::create` just wrote (`baton run`, `baton rerun`): nothing
    /// replayed, its journal's entries start after the snapshot line.
    pub(crate) fn created(state: RunState, created: CreatedRun, edits: Vec<Event>) -> RunToExecute {
        RunToExecute {
            state,
            journal_intact: created.journal_intact,
            replayed_steps: Vec::new(),
            resumed: false,
            unsynced: created.unsynced,
            edits,
        }
    }
}

pub(crate) async fn execute(
    store: RunStore,
    run: RunToExecute,
    options: &ExecutionArguments,
    config: &Config,
    timeout: StateTimeout,
    limits: RunLimits,
    watchdog: Watchdog,
) -> Result<i32, CliError> {
    let RunToExecute { state, journal_intact, replayed_steps, resumed, unsynced, edits } = run;
    let run_dir = store.run_dir(&state.run_id);
    check_engine(&state.launch_params).await?;
    // The handlers go in before the lock is taken: whoever finds this process
    // as the lock's holder (the daemon's cancel) may signal it at once, and the
    // default SIGINT would kill it with the run still marked running.
    let signals = shutdown_signals();
    let _lock = RunLock::acquire(&run_dir, &state.run_id)?;

    let bus = Arc::new(EventBus::new());
    let trace = if options.no_debug || config.no_debug.unwrap_or(false) {
        None
    } else {
        let observer =
            DebugObserver::open(&run_dir).map_err(|source| CliError::Trace { path: run_dir.clone(), source })?;
        let observer = Arc::new(observer);
        Arc::clone(&observer).attach(&bus);
        Some(observer)
    };
    let verbosity = if options.quiet { Verbosity::Quiet } else { Verbosity::Normal };
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    Arc::new(ConsoleObserver::new(Box::new(std::io::stderr()), verbosity, colour)).attach(&bus);
    let otel = otel_export::start(options.otel.as_deref(), config, &state.run_id);
    if let Some((observer, _)) = &otel {
        Arc::clone(observer).attach(&bus);
    }

    let baton_dir = store.baton_dir().to_path_buf();
    let mut persistence = RunPersistence::begin(store, &state, journal_intact)?;
    if !unsynced.is_empty() {
        // Nothing is said about the run (not even that it started) before it is durable.
        if let Some(seq) = persistence.sync_files(unsynced) {
            bus.hold_until(seq);
        }
    }
    let inputs_dir = input_files_dir(&run_dir, &state.run_id);
    watchdog.guard(&state.run_id, &inputs_dir);
    let watchdog = Arc::new(watchdog);
    let (stop_sender, stop) = watch::channel(StopLevel::Run);
    let context = Arc::new(ExecutionContext {
        environment: state.launch_params.environment.clone(),
        run_id: state.run_id.clone(),
        baton_dir,
        inputs_dir: inputs_dir.clone(),
        bus: Arc::clone(&bus),
        timeout,
        stop,
        watchdog: Some(Arc::clone(&watchdog)),
        budget_usd: state.budget_usd,
        default_backend: run_backend(&state.launch_params, config),
        default_model: state.launch_params.model.clone().or_else(|| config.model.clone()),
        default_effort: state.launch_params.effort.clone().or_else(|| config.effort.clone()),
        borrowed_sessions: state.borrowed_sessions.clone(),
        telemetry: otel.as_ref().map(|(_, telemetry)| telemetry.clone()),
    });
    let skip_permissions =
        state.launch_params.dangerously_skip_permissions.or(config.dangerously_skip_permissions).unwrap_or(true);
    let backends = Backends::installed(
        &CliPaths { claude: options.claude_bin.clone(), pi: options.pi_bin.clone(), codex: options.codex_bin.clone() },
        &CliPaths { claude: config.claude_bin.clone(), pi: config.pi_bin.clone(), codex: config.codex_bin.clone() },
        skip_permissions,
        &context.baton_dir,
    );
    if let Some(name) = options.name.as_ref().or(config.name.as_ref()) {
        set_terminal_title(name, &state.run_id);
    }
    bus.emit(Event::WorkflowStarted {
        run_id: state.run_id.clone(),
        scope_dir: state.scope_dir.clone(),
        run_dir: run_dir.clone(),
        initial_state: state.agents.first().map_or_else(|| state.initial_state.clone(), |a| a.current_state.clone()),
        resumed,
        rerun_of: state.rerun_of.clone(),
    });
    // A crash right after a commit, or a trace that could not be written (a full
    // disk), may have kept committed steps out of the trace: the journal's steps and
    // the snapshot's last one are published again, and the trace keeps those it
    // lacks (`observers::trace`).
    if resumed {
        let last = state.last_step.iter().filter(|(commit, _)| replayed_steps.last().is_none_or(|(c, _)| c < commit));
        for (commit, step) in replayed_steps.iter().chain(last) {
            bus.emit(transition_event(step, *commit, true));
        }
        // Only now: a crash after this keeps just the snapshot's last step to re-publish.
        persistence.fold(&state)?;
        // `resume` un-pauses every agent first, so an agent paused now was paused by
        // the resume itself (an ask that timed out with no usable `timeout_next`):
        // say why, as the loop says it for the pauses it makes.
        for agent in state.agents.iter().filter(|agent| agent.status == AgentStatus::Paused) {
            if let Some(event) = paused_event(agent) {
                bus.emit(event);
            }
        }
    }
    // The edits are in the snapshot now (a resume's fold, a new run's creation): say
    // what changed, before anything runs.
    for edit in edits {
        bus.emit(edit);
    }
    let retry = retry_policy(options.attempts);
    let executors = match state.launch_params.engine.as_deref().map(parse_engine).transpose()? {
        Some(Engine::Restate { ingress }) => {
            let files = FilesMode::parse(state.launch_params.files.as_deref(), state.launch_params.repo.as_deref())
                .map_err(|error| {
                    invalid("files", state.launch_params.files.as_deref().unwrap_or(""), error.to_string())
                })?;
            let remote = RemoteExecutor::new(Ingress::new(&ingress), &run_dir, skip_permissions).with_files(files);
            Executors::remote(Arc::new(remote))
        }
        Some(Engine::Local) | None => Executors::standard(backends),
    };
    let mut workflow = WorkflowLoop::new(state, persistence, context, executors, retry, limits, stop_sender);
    let outcome = workflow.run(signals).await;
    watchdog.disarm();
    // The input files are rewritten before every step that needs one.
    let _ = std::fs::remove_dir_all(&inputs_dir);
    if let Some(trace) = trace {
        trace.close();
    }
    if let Some((observer, _)) = &otel {
        otel_export::finish(observer);
    }
    report(workflow.state(), &workflow.metrics(), &outcome, options.json)?;
    Ok(match outcome {
        RunOutcome::Completed => exit_code::COMPLETED,
        RunOutcome::Paused => exit_code::PAUSED,
        RunOutcome::Failed { .. } => exit_code::ERROR,
        RunOutcome::Interrupted { signal } => signal.exit_code(),
        RunOutcome::Asking => exit_code::ASKING,
    })
}

/// The first ask waiting in `state` as the JSON a caller answers (A8, R11.4):
/// `None` when no agent asks.
pub(crate) fn ask_json(state: &RunState) -> Option<serde_json::Value> {
    let asking = state.asking_agents();
    let first = asking.first()?;
    let ask = first.ask.as_ref()?;
    Some(json!({
        "status": "asking",
        "run_id": state.run_id,
        "agent_id": first.id,
        "ask_id": ask.id,
        "prompt": ask.prompt,
        "next_state": ask.next,
        "timeout": ask.timeout,
        "timeout_next": ask.timeout_next,
        "mode": ask.mode(),
        "files": ask.files,
        "pending_count": asking.len() - 1,
    }))
}

/// raymond's `--name`: label the terminal's title, when stderr is a terminal. Control
/// characters are dropped so a name cannot end the escape sequence early.
fn set_terminal_title(name: &str, run_id: &RunId) {
    let mut stderr = std::io::stderr();
    if !stderr.is_terminal() {
        return;
    }
    let label: String = format!("{name} · {run_id}").chars().filter(|c| !c.is_control()).collect();
    let _ = write!(stderr, "\x1b]0;{label}\x07");
}

/// stdout carries the result and nothing else (A8): the main agent's payload, or
/// with `--json` one object describing the run.
fn report(state: &RunState, metrics: &RunMetrics, outcome: &RunOutcome, as_json: bool) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    let written = if as_json {
        let mut agents: Vec<serde_json::Value> = state
            .terminated
            .iter()
            .map(|agent| json!({"id": agent.id, "status": "terminated", "result": agent.result}))
            .collect();
        agents.extend(state.agents.iter().map(|agent| {
            json!({"id": agent.id, "status": agent.status, "state": agent.current_state, "result": null,
                   "error": agent.error, "ask": agent.ask})
        }));
        let error = match outcome {
            RunOutcome::Failed { error } => Some(error.as_str()),
            _ => None,
        };
        let object = json!({
            "run_id": state.run_id,
            "status": state.status,
            "result": state.main_result(),
            "agents": agents,
            "cost_usd": state.total_cost_usd,
            "steps": state.steps_completed,
            "error": error,
            "metrics": metrics,
        });
        writeln!(stdout, "{object}")
    } else if let (RunOutcome::Asking, Some(ask)) = (outcome, ask_json(state)) {
        writeln!(stdout, "{ask}")
    } else {
        match state.main_result() {
            Some(result) if result.ends_with('\n') => write!(stdout, "{result}"),
            Some(result) => writeln!(stdout, "{result}"),
            None => Ok(()),
        }
    };
    written.and_then(|()| stdout.flush()).map_err(|source| CliError::Stdout { source })
}
