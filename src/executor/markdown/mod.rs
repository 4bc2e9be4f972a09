//! The markdown executor (seed §5): a `.md` state is a prompt for the model behind
//! a [`Backend`] (Claude Code). One step is one or more model turns:
//!
//! 1. refuse to start when the run is already over budget (synthetic `<result>`);
//! 2. load the prompt, split its frontmatter (policy, model, effort, force_implicit),
//!    choose its backend (the state's `backend`, its workflow's manifest, the run's
//!    `--backend`/config, Claude) and check its options there, render the body with
//!    the state's variables (R6);
//! 3. run a turn in the right session (R3.15): a `<call>` child forks its caller's
//!    session, `goto`/return/parent-after-fork resume the agent's session, fresh
//!    otherwise, and fresh whenever that session is another backend's; a session borrowed from the run a `baton rerun` copied is forked
//!    where it would be resumed, so the original's conversation never changes;
//! 4. after each turn, in R5.17's order: budget → `force_implicit` → parse →
//!    multi-fork → implicit → exactly one tag, resolved and allowed by the policy;
//!    a missing, extra, unresolvable or disallowed tag under a policy gets up to two
//!    reminders, each resuming the failed turn's session (R5.16–R5.20).
//!
//! Backend failures are classified for the loop: usage limits pause, failed and
//! timed-out turns are retried, a missing CLI is fatal.

mod turn;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use turn::{TurnError, interpret_turn};

use super::{ExecutionContext, ExecutionResult, StateExecutor, StepFuture, StepInput, warn_ignored_attributes};
use crate::backend::profile::{Profile, profile};
use crate::backend::{Backend, BackendError, BackendEvent, BackendRequest, Backends, SessionMode};
use crate::events::error_kind::ErrorKind;
use crate::events::trace_context::StepTelemetry;
use crate::events::{Event, OutputStream, StateType};
use crate::executor::step_failure::{FailureClass, StepFailure};
use crate::executor::template_variables;
use crate::ids::SessionId;
use crate::model::agent::PauseReason;
use crate::syntax::print_extractor::PrintExtractor;
use crate::syntax::scanner::scan;
use crate::syntax::template::render;
use crate::transition::Transition;
use crate::workflow::manifest::BackendChoice;
use crate::workflow::resolution::{self, Platform};
use crate::workflow::specifier::Caller;
use crate::workflow::state_file::{PromptFileError, read_prompt};

/// Model turns per step: the first plus up to two reminders (R5.16).
pub(crate) const MAX_REMINDER_ATTEMPTS: u32 = 3;

pub(crate) struct MarkdownExecutor {
    backends: Backends,
}

impl MarkdownExecutor {
    pub(crate) fn new(backends: Backends) -> MarkdownExecutor {
        MarkdownExecutor { backends }
    }
}

impl StateExecutor for MarkdownExecutor {
    fn execute<'a>(&'a self, input: StepInput, context: &'a ExecutionContext) -> StepFuture<'a> {
        Box::pin(run_markdown_state(&self.backends, input, context))
    }
}

struct Step<'a> {
    input: &'a StepInput,
    backend: &'static Profile,
    context: &'a ExecutionContext,
    started: Instant,
    cost: f64,
    /// The turns' tokens, for the trace of a backend other than Claude.
    tokens: crate::events::StepTokens,
    session: Option<SessionId>,
    /// The last assistant message of `session`, when known.
    message: Option<String>,
}

impl Step<'_> {
    fn emit(&self, event: Event) {
        self.context.bus.emit(event);
    }

    /// Finish the step with `transition`.
    fn done(self, transition: Transition) -> Result<ExecutionResult, StepFailure> {
        self.emit(Event::StateCompleted {
            agent_id: self.input.agent.id.clone(),
            state: self.input.agent.current_state.clone(),
            step: self.input.step,
            cost_usd: self.cost,
            total_cost_usd: self.input.total_cost_at_launch + self.cost,
            session_id: self.session.clone(),
            duration_ms: self.started.elapsed().as_millis() as u64,
            tokens: (self.backend.name != crate::ids::BackendName::Claude).then_some(self.tokens),
        });
        Ok(ExecutionResult {
            transition,
            session_id: self.session,
            session_message: self.message,
            session_backend: Some(self.backend.name),
            cost_usd: self.cost,
        })
    }

    /// R9.3: over budget (strictly), the state's output is ignored.
    fn over_budget(&self) -> Option<Transition> {
        let budget = self.context.budget_usd;
        let total = self.input.total_cost_at_launch + self.cost;
        (budget > 0.0 && total > budget).then(|| Transition::Result {
            payload: format!("Workflow terminated: budget exceeded (${total:.4} > ${budget:.4})"),
        })
    }
}

async fn run_markdown_state(
    backends: &Backends,
    input: StepInput,
    context: &ExecutionContext,
) -> Result<ExecutionResult, StepFailure> {
    let agent = &input.agent;
    context.bus.emit(Event::StateStarted {
        agent_id: agent.id.clone(),
        state: agent.current_state.clone(),
        state_type: StateType::Markdown,
        step: input.step,
        attempt: input.attempt,
    });
    let mut step = Step {
        input: &input,
        backend: profile(context.default_backend),
        context,
        started: Instant::now(),
        cost: 0.0,
        tokens: crate::events::StepTokens::default(),
        session: agent.session_id.clone(),
        message: agent.session_message.clone(),
    };
    if let Some(synthetic) = step.over_budget() {
        return step.done(synthetic);
    }

    let path = agent.scope_dir.join(&agent.current_state);
    // A file that cannot be read may be mid-edit: retried. A broken file, or a
    // policy naming a missing state, would fail the same way on every attempt and
    // cost a model turn each time: the agent pauses at once, to be fixed and resumed.
    // The workflow is opened once for the step: its prompt, its listing for the
    // policy's targets, its timeout and the directory relative paths start from.
    let workflow = resolution::open(&agent.scope_dir)
        .map_err(|error| StepFailure::pause(PauseReason::PromptError, ErrorKind::PromptFileError, error.to_string()))?;
    let prompt = read_prompt(&workflow, &agent.current_state).map_err(|error: PromptFileError| {
        let message = error.to_string();
        if error.is_transient() {
            StepFailure::retryable(PauseReason::PromptError, ErrorKind::PromptFileError, message)
        } else {
            StepFailure::pause(PauseReason::PromptError, ErrorKind::PromptFileError, message)
        }
    })?;
    let frontmatter = prompt.frontmatter;
    let timeout = context.timeout_for(&workflow, &agent.current_state);
    let resolves = |name: &str| resolution::resolve_in_workflow(&workflow, name, Platform::CURRENT).map(drop);
    if let Some(problem) = frontmatter.policy.as_ref().and_then(|policy| policy.unresolvable_entry(resolves)) {
        let message = format!("prompt file `{}`: {problem}", path.display());
        return Err(StepFailure::pause(PauseReason::PromptError, ErrorKind::PolicyError, message));
    }
    let (backend_name, options) =
        BackendChoice::for_state(&frontmatter, &workflow, context.default_backend).map_err(|problem| {
            let message = format!("prompt file `{}`: {problem}", path.display());
            StepFailure::pause(PauseReason::PromptError, ErrorKind::PromptFileError, message)
        })?;
    step.backend = profile(backend_name);
    let backend: &dyn Backend = backends.get(backend_name);
    (step.backend.check_options)(&options).map_err(|error| {
        let message = format!("prompt file `{}`: Invalid YAML frontmatter: {error}", path.display());
        StepFailure::pause(PauseReason::PromptError, ErrorKind::PromptFileError, message)
    })?;
    let sorted = step.backend.sort_options(&options);
    let warnings = (!sorted.unknown.is_empty())
        .then(|| format!("ignoring unrecognized frontmatter field(s): {}", sorted.unknown.join(", ")))
        .into_iter()
        .chain(sorted.ignored.iter().map(|(key, why)| format!("`{key}` is {why}")));
    for warning in warnings {
        step.emit(Event::ErrorOccurred {
            agent_id: agent.id.clone(),
            error_type: ErrorKind::UnknownField,
            message: format!("{}: {warning}", agent.current_state),
            state: agent.current_state.clone(),
            is_retryable: false,
            retry_count: 0,
            max_retries: 0,
        });
    }
    crate::executor::script::write_results_file(&context.inputs_dir, agent).map_err(|error| {
        let message = format!(
            "prompt `{}` cannot run: cannot write its join results to {}: {error}",
            agent.current_state,
            context.inputs_dir.display()
        );
        StepFailure::fatal(ErrorKind::PromptFileError, message)
    })?;
    let template_variables = template_variables(context, agent);
    // `baton resume --prompt-file`: its author's text, sent as written, once.
    let base_prompt = match &agent.prompt_override {
        Some(text) => text.clone(),
        None => render(&prompt.body, &template_variables),
    };
    // `--model` and `--effort` speak the run's backend's vocabulary (R5.21–R5.22).
    let on_run_backend = backend_name == context.default_backend;
    let model = frontmatter
        .model
        .clone()
        .or_else(|| context.default_model.clone().filter(|_| on_run_backend))
        .unwrap_or_else(|| step.backend.default_model.to_string());
    let effort = frontmatter.effort.clone().or_else(|| context.default_effort.clone().filter(|_| on_run_backend));
    let policy = frontmatter.policy.clone().unwrap_or_default();

    // A session never crosses backends: another backend's conversation is not
    // continued, and the state starts a fresh one on its own.
    let session_backend = agent.session_backend.unwrap_or_default();
    let crosses = session_backend != backend_name && (agent.fork_session_id.is_some() || agent.session_id.is_some());
    // Said right after the first turn starts, so the console reads "on codex",
    // then why its conversation is a fresh one.
    let mut crossing = crosses.then(|| Event::ProgressMessage {
        agent_id: agent.id.clone(),
        message: format!(
            "{}: a fresh {} conversation: the agent's session is {}'s, and a session never crosses backends",
            agent.current_state,
            step.backend.cli,
            profile(session_backend).cli
        ),
    });
    if crosses {
        step.session = None;
        step.message = None;
    }
    let mut session = match (&agent.fork_session_id, agent.continue_and_fork, &agent.session_id) {
        _ if crosses => SessionMode::Fresh,
        (Some(caller), _, _) => context.fork_session(caller, agent.session_message.as_ref()),
        (None, true, _) if !step.backend.capabilities.continue_latest => {
            let message = format!(
                "state `{}`: --continue-session needs the directory's latest conversation, which {} cannot continue; \
                 resume without it, or run this state on Claude",
                agent.current_state, step.backend.cli
            );
            return Err(StepFailure::pause(PauseReason::PromptError, ErrorKind::PromptFileError, message));
        }
        (None, true, _) => SessionMode::ContinueAndFork,
        (None, false, Some(session)) => context.continue_session(session, agent.session_message.as_ref()),
        (None, false, None) => SessionMode::Fresh,
    };
    let telemetry = context.telemetry.as_ref().map(|run| run.for_step(&agent.id, input.step));
    let prints = Mutex::new(PrintExtractor::new());
    for attempt in 0..MAX_REMINDER_ATTEMPTS {
        let prompt_text =
            if attempt == 0 { base_prompt.clone() } else { format!("{base_prompt}{}", policy.reminder()) };
        step.emit(Event::PromptRendered {
            agent_id: agent.id.clone(),
            state: agent.current_state.clone(),
            step: input.step,
            reminder: attempt,
            prompt: prompt_text.clone(),
        });
        let (session_id, is_fork) = match &session {
            SessionMode::Resume(id) => (Some(id.clone()), false),
            SessionMode::ForkFrom(id) | SessionMode::ForkAt(id, _) => (Some(id.clone()), true),
            SessionMode::Fresh | SessionMode::ContinueAndFork => (None, false),
        };
        step.emit(Event::ClaudeInvocationStarted {
            agent_id: agent.id.clone(),
            state: agent.current_state.clone(),
            backend: backend_name,
            model: model.clone(),
            session_id,
            is_fork,
            is_reminder: attempt > 0,
            reminder_attempt: attempt,
        });
        if let Some(note) = crossing.take() {
            step.emit(note);
        }
        let request = BackendRequest {
            backend: backend_name,
            agent_id: agent.id.clone(),
            state: agent.current_state.clone(),
            reminder: attempt,
            prompt: prompt_text,
            cwd: agent.cwd.clone(),
            workflow_dir: workflow.workflow_dir().to_path_buf(),
            model: model.clone(),
            effort: effort.clone(),
            session: session.clone(),
            new_session_id: agent.new_session_id.clone(),
            idle_timeout: timeout.limit,
            timeout_source: timeout.source.to_string(),
            env: step_env(context, telemetry.as_ref()),
            options: options.clone(),
            telemetry: telemetry.clone(),
        };
        let mut on_event = |event: BackendEvent| forward(&step, &prints, event);
        let response =
            match backend.invoke(request, context.stop.clone(), context.watchdog.as_ref(), &mut on_event).await {
                Ok(response) => response,
                Err(error) => {
                    let failed_turn_cost = match &error {
                        BackendError::Failed { cost_usd, .. } | BackendError::TurnLimit { cost_usd, .. } => *cost_usd,
                        _ => 0.0,
                    };
                    let error = match error {
                        BackendError::NotAvailable(message) => {
                            BackendError::NotAvailable(not_available(&message, step.backend, agent, context))
                        }
                        other => other,
                    };
                    return Err(classify(error, step.backend.cli).with_cost(step.cost + failed_turn_cost));
                }
            };
        if let Some(session_id) = response.session_id {
            step.session = Some(session_id);
            step.message = response.message_uuid;
        }
        step.cost += response.cost_usd;
        step.tokens.input_tokens += response.input_tokens;
        step.tokens.output_tokens += response.output_tokens;

        if let Some(synthetic) = step.over_budget() {
            return step.done(synthetic);
        }
        if let Ok(tags) = scan(&response.text) {
            warn_ignored_attributes(context, agent, &tags);
        }
        let caller = Caller { scope: &agent.scope_dir, url: agent.scope_url.as_deref(), baton_dir: &context.baton_dir };
        let structured = response.structured_output.as_deref();
        match interpret_turn(&response.text, structured, &frontmatter, &policy, &template_variables, caller) {
            Ok(transition) => return step.done(transition),
            Err(TurnError::Fatal(failure)) => return Err(failure.with_cost(step.cost)),
            Err(TurnError::Remindable { kind, message }) => {
                let message = format!("state `{}`: {message}", agent.current_state);
                if policy.entries.is_empty() || attempt + 1 >= MAX_REMINDER_ATTEMPTS {
                    let suffix = if policy.entries.is_empty() {
                        String::new()
                    } else {
                        format!(" (after {MAX_REMINDER_ATTEMPTS} attempts with reminders)")
                    };
                    return Err(StepFailure::fatal(kind, format!("{message}{suffix}")).with_cost(step.cost));
                }
                step.emit(Event::ErrorOccurred {
                    agent_id: agent.id.clone(),
                    error_type: kind,
                    message,
                    state: agent.current_state.clone(),
                    is_retryable: true,
                    retry_count: attempt + 1,
                    max_retries: MAX_REMINDER_ATTEMPTS,
                });
                // R5.19: the reminder continues the failed turn's session, never forked.
                session = step
                    .session
                    .as_ref()
                    .map_or(SessionMode::Fresh, |session| context.continue_session(session, step.message.as_ref()));
            }
        }
    }
    Err(StepFailure::fatal(
        ErrorKind::NoTransitionTag,
        format!("state `{}` produced no usable transition", agent.current_state),
    ))
}

/// The variables of a turn's process besides the inherited ones: the manifest's,
/// and, when the run is exported, `TRACEPARENT` naming the step's span (and an
/// empty `TRACESTATE`, so a caller's own does not travel with another parent).
fn step_env(context: &ExecutionContext, telemetry: Option<&StepTelemetry>) -> BTreeMap<String, String> {
    let mut env = context.environment.clone();
    if let Some(telemetry) = telemetry {
        env.insert("TRACEPARENT".to_string(), telemetry.traceparent.clone());
        env.insert("TRACESTATE".to_string(), String::new());
    }
    env
}

/// Publish what a turn does while it runs.
fn forward(step: &Step<'_>, prints: &Mutex<PrintExtractor>, event: BackendEvent) {
    let agent_id = step.input.agent.id.clone();
    match event {
        BackendEvent::Raw(json) => step.emit(Event::ClaudeStreamOutput {
            agent_id,
            state: step.input.agent.current_state.clone(),
            step: step.input.step,
            json,
        }),
        BackendEvent::AssistantText(text) => {
            let found = prints.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(&text);
            for content in found {
                step.emit(Event::PrintOutput { agent_id: agent_id.clone(), stream: OutputStream::Assistant, content });
            }
        }
        BackendEvent::Progress(message) => step.emit(Event::ProgressMessage { agent_id, message }),
        BackendEvent::Tool { name, detail } => step.emit(Event::ToolInvocation { agent_id, tool_name: name, detail }),
        BackendEvent::ToolError(message) => step.emit(Event::ToolError { agent_id, message }),
    }
}

/// Why a state's backend cannot run, naming the state, the backend, how to install
/// its CLI and how to go on: the agent pauses, and a resume once it is installed
/// continues where it stopped (never a fallback to another backend).
fn not_available(
    message: &str,
    backend: &Profile,
    agent: &crate::model::agent::Agent,
    context: &ExecutionContext,
) -> String {
    let install =
        if message.contains(backend.install) { String::new() } else { format!(" (install: {})", backend.install) };
    format!(
        "state `{}` runs on {}: {message}{install}; once it can run, `baton resume {}` goes on",
        agent.current_state, backend.cli, context.run_id
    )
}

/// A backend failure as the loop should treat it (§10.1).
fn classify(error: BackendError, cli: &str) -> StepFailure {
    match error {
        BackendError::UsageLimit { message, resets_at } => {
            let resets = resets_at
                .and_then(|seconds| jiff::Timestamp::from_second(seconds).ok())
                .map(|timestamp| format!(" (resets at {timestamp})"))
                .unwrap_or_default();
            StepFailure {
                class: FailureClass::UsageLimit { resets_at },
                kind: ErrorKind::ClaudeCodeLimitError,
                message: format!("usage limit reached{resets}: {message}"),
                cost_usd: 0.0,
            }
        }
        BackendError::Failed { message, .. } => {
            StepFailure::retryable(PauseReason::ClaudeError, ErrorKind::ClaudeCodeError, message)
        }
        BackendError::TurnLimit { message, .. } => {
            StepFailure::pause(PauseReason::ClaudeError, ErrorKind::ClaudeCodeError, message)
        }
        BackendError::Timeout(message) => {
            StepFailure::retryable(PauseReason::Timeout, ErrorKind::ClaudeCodeTimeout, message)
        }
        BackendError::Refused(message) => {
            StepFailure::pause(PauseReason::PromptError, ErrorKind::PromptFileError, message)
        }
        BackendError::NotAvailable(message) => {
            StepFailure::pause(PauseReason::BackendNotAvailable, ErrorKind::ClaudeNotAvailable, message)
        }
        BackendError::Fatal(message) => StepFailure::fatal(ErrorKind::ClaudeNotAvailable, message),
        BackendError::Cancelled => {
            StepFailure::fatal(ErrorKind::Cancelled, format!("{cli} was stopped before it finished"))
        }
    }
}
