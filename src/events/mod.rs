//! Everything that happens during a run, as data (seed §1).
//!
//! The core publishes these on the [`crate::events::bus::EventBus`]; observers turn
//! them into trace files and console lines. Each variant carries the agent it is
//! about, because many agents emit concurrently. The serialized form (`type` plus
//! the fields) is what `events.jsonl` contains, so field names are part of the
//! trace format documented in `docs/trace-format.md`.

pub(crate) mod bus;
pub(crate) mod error_kind;
pub(crate) mod metrics;
pub(crate) mod trace_context;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::events::error_kind::ErrorKind;
use crate::ids::{AgentId, RunId, SessionId, StateName};
use crate::model::agent::JoinedStatus;
use crate::model::bound::Bound;
use crate::model::run_state::RerunOf;

/// Whether a state is a prompt or a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StateType {
    Markdown,
    Script,
}

/// What an edit of a stopped agent changed (`AgentEdited`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EditField {
    /// Its pending input (`{{input}}`, `$BATON_INPUT`).
    Input,
    /// The state it runs next (`--goto`).
    State,
    /// The prompt its next turn sends (`--prompt-file`), once.
    Prompt,
}

impl EditField {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EditField::Input => "input",
            EditField::State => "state",
            EditField::Prompt => "prompt",
        }
    }
}

/// Which output stream a `<print>` came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OutputStream {
    Stdout,
    Stderr,
    Assistant,
}

/// `Deserialize` reads a trace line back (`baton logs`); the envelope fields
/// (`v`, `seq`, `ts`) are ignored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub(crate) enum Event {
    WorkflowStarted {
        run_id: RunId,
        scope_dir: PathBuf,
        run_dir: PathBuf,
        initial_state: StateName,
        resumed: bool,
        /// A run made by `baton rerun`: the run and commit its history came from.
        #[serde(skip_serializing_if = "Option::is_none")]
        rerun_of: Option<RerunOf>,
    },
    WorkflowCompleted {
        run_id: RunId,
        total_cost_usd: f64,
        steps: u64,
        duration_ms: u64,
        metrics: metrics::RunMetrics,
    },
    /// The run stopped to wait for an answer (R11.4); `pending_count` more asks wait
    /// behind the first.
    WorkflowAsking {
        run_id: RunId,
        agent_id: AgentId,
        ask_id: String,
        pending_count: usize,
    },
    WorkflowPaused {
        run_id: RunId,
        total_cost_usd: f64,
        paused_agent_count: usize,
        /// Set when a bound (`--max-steps`, `--time-limit`) paused the run.
        bound: Option<Bound>,
    },
    /// Launching stopped because of `signal` (`SIGINT`, `SIGTERM`) or `bound`;
    /// running steps get `grace_ms` to finish.
    WorkflowStopping {
        run_id: RunId,
        signal: Option<String>,
        bound: Option<Bound>,
        running_steps: usize,
        grace_ms: u64,
    },
    WorkflowInterrupted {
        run_id: RunId,
        signal: String,
    },
    RunFailed {
        run_id: RunId,
        /// The agent whose step failed and its state; absent when the run itself
        /// failed (its store could not be written).
        agent_id: Option<AgentId>,
        state: Option<StateName>,
        error: String,
    },
    StateStarted {
        agent_id: AgentId,
        state: StateName,
        state_type: StateType,
        step: u64,
        attempt: u32,
    },
    StateCompleted {
        agent_id: AgentId,
        state: StateName,
        step: u64,
        cost_usd: f64,
        total_cost_usd: f64,
        session_id: Option<SessionId>,
        duration_ms: u64,
        /// The step's tokens as its backend counted them, on a backend whose
        /// stream `baton report` does not read itself (pi, Codex); absent for
        /// Claude (its stream's `result` has them, cache figures included) and scripts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tokens: Option<StepTokens>,
    },
    /// A distributed step (`--engine restate=URL`) ran on `worker` (its `--name`).
    StepRanOn {
        agent_id: AgentId,
        state: StateName,
        step: u64,
        worker: String,
    },
    TransitionOccurred {
        agent_id: AgentId,
        from_state: StateName,
        /// `None` when the agent terminated.
        to_state: Option<StateName>,
        transition_type: String,
        metadata: BTreeMap<String, String>,
        /// The journal commit that recorded this step (1, 2, 3, … over the run).
        commit: u64,
        /// Re-published on resume because a crash may have kept it out of the trace.
        recovered: bool,
    },
    AgentSpawned {
        parent_agent_id: AgentId,
        new_agent_id: AgentId,
        initial_state: StateName,
    },
    AgentTerminated {
        agent_id: AgentId,
        result: String,
    },
    AgentPaused {
        agent_id: AgentId,
        state: StateName,
        reason: String,
        message: String,
    },
    /// A person changed what a stopped agent does next (issue 24): `field` went
    /// from `before` to `after` (`None`: absent), through `by` (`resume`, `serve`,
    /// `control`, `test`), as `user` when known. The history from here on is not
    /// what the workflow alone would have done.
    AgentEdited {
        agent_id: AgentId,
        /// The state the agent stood before when it was edited.
        state: StateName,
        field: EditField,
        before: Option<String>,
        after: Option<String>,
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
    },
    /// A question at the terminal still waits; `seconds_left` before its timeout.
    AskWaiting {
        agent_id: AgentId,
        seconds_left: u64,
    },
    /// A control line on stdin (`--on-ask json`) did nothing: `line` (its first 200
    /// characters) and why, so its supervisor can see what went wrong.
    ControlIgnored {
        line: String,
        reason: String,
    },
    /// An agent asks a person (`<ask>` under `--on-ask pause`, `prompt` or `json`, R11.4).
    AgentAsking {
        agent_id: AgentId,
        ask_id: String,
        prompt: String,
        next_state: StateName,
    },
    /// An agent's `<join>` waits for `workers` (in fork order), then goes on at
    /// `next_state` (`docs/join.md`).
    JoinWaiting {
        agent_id: AgentId,
        workers: Vec<AgentId>,
        next_state: StateName,
        /// The join's `timeout`, if it has one.
        timeout_ms: Option<u64>,
    },
    /// The join is over: every worker ended, or the timeout passed (`timed_out`);
    /// the agent goes on at `next_state` with `workers`' outcomes.
    JoinCompleted {
        agent_id: AgentId,
        next_state: StateName,
        workers: Vec<JoinedWorker>,
        timed_out: bool,
    },
    /// A model turn starts (the name is the trace's, from when Claude was the
    /// only backend; `backend` says which CLI runs it).
    ClaudeInvocationStarted {
        agent_id: AgentId,
        state: StateName,
        /// Absent in traces written before backends were chosen: Claude.
        #[serde(default)]
        backend: crate::ids::BackendName,
        /// The model asked for; empty when the CLI chooses its own.
        #[serde(default)]
        model: String,
        session_id: Option<SessionId>,
        is_fork: bool,
        is_reminder: bool,
        reminder_attempt: u32,
    },
    ClaudeStreamOutput {
        agent_id: AgentId,
        state: StateName,
        step: u64,
        json: serde_json::Value,
    },
    ScriptOutput {
        agent_id: AgentId,
        state: StateName,
        step: u64,
        stdout: String,
        stderr: String,
        exit_code: Option<i32>,
        execution_time_ms: u64,
        /// Only the variables Baton set, never the inherited environment. Written to
        /// the step's `.meta.json`, not to `events.jsonl`: the same long paths on
        /// every line were most of the trace's size.
        #[serde(skip)]
        env_vars: BTreeMap<String, String>,
    },
    ToolInvocation {
        agent_id: AgentId,
        tool_name: String,
        detail: String,
    },
    ToolError {
        agent_id: AgentId,
        message: String,
    },
    /// The prompt of one model turn, as sent (`reminder` 0 is the first turn).
    PromptRendered {
        agent_id: AgentId,
        state: StateName,
        step: u64,
        reminder: u32,
        prompt: String,
    },
    /// Every remaining agent hit a usage limit: waiting until `until` (RFC 3339).
    WorkflowWaiting {
        run_id: RunId,
        until: String,
        wait_seconds: u64,
    },
    WorkflowResuming {
        run_id: RunId,
    },
    /// Steps wait for room: at most `max_running_steps` run at once under the
    /// open-file limit `open_file_limit`. Published once per invocation.
    WorkflowThrottled {
        run_id: RunId,
        max_running_steps: usize,
        open_file_limit: u64,
    },
    ProgressMessage {
        agent_id: AgentId,
        message: String,
    },
    PrintOutput {
        agent_id: AgentId,
        stream: OutputStream,
        content: String,
    },
    ErrorOccurred {
        agent_id: AgentId,
        error_type: ErrorKind,
        message: String,
        state: StateName,
        is_retryable: bool,
        retry_count: u32,
        max_retries: u32,
    },
}

/// One worker's outcome in a `JoinCompleted` event (its result is in its
/// `AgentTerminated` event, not repeated here).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JoinedWorker {
    pub(crate) agent_id: AgentId,
    pub(crate) status: JoinedStatus,
}

/// A step's tokens, summed over its turns (`StateCompleted`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StepTokens {
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
}

/// The event's type without its data, for subscriptions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum EventKind {
    WorkflowStarted,
    WorkflowCompleted,
    WorkflowPaused,
    WorkflowStopping,
    WorkflowInterrupted,
    RunFailed,
    StateStarted,
    StateCompleted,
    StepRanOn,
    TransitionOccurred,
    AgentSpawned,
    AgentTerminated,
    AgentPaused,
    AgentEdited,
    AgentAsking,
    AskWaiting,
    ControlIgnored,
    WorkflowAsking,
    JoinWaiting,
    JoinCompleted,
    ClaudeInvocationStarted,
    ClaudeStreamOutput,
    ScriptOutput,
    ToolInvocation,
    ToolError,
    PromptRendered,
    WorkflowWaiting,
    WorkflowResuming,
    WorkflowThrottled,
    ProgressMessage,
    PrintOutput,
    ErrorOccurred,
}

impl Event {
    pub(crate) fn kind(&self) -> EventKind {
        match self {
            Event::WorkflowStarted { .. } => EventKind::WorkflowStarted,
            Event::WorkflowCompleted { .. } => EventKind::WorkflowCompleted,
            Event::WorkflowPaused { .. } => EventKind::WorkflowPaused,
            Event::WorkflowAsking { .. } => EventKind::WorkflowAsking,
            Event::WorkflowStopping { .. } => EventKind::WorkflowStopping,
            Event::WorkflowInterrupted { .. } => EventKind::WorkflowInterrupted,
            Event::RunFailed { .. } => EventKind::RunFailed,
            Event::StateStarted { .. } => EventKind::StateStarted,
            Event::StateCompleted { .. } => EventKind::StateCompleted,
            Event::StepRanOn { .. } => EventKind::StepRanOn,
            Event::TransitionOccurred { .. } => EventKind::TransitionOccurred,
            Event::AgentSpawned { .. } => EventKind::AgentSpawned,
            Event::AgentTerminated { .. } => EventKind::AgentTerminated,
            Event::AgentPaused { .. } => EventKind::AgentPaused,
            Event::AgentEdited { .. } => EventKind::AgentEdited,
            Event::AgentAsking { .. } => EventKind::AgentAsking,
            Event::AskWaiting { .. } => EventKind::AskWaiting,
            Event::ControlIgnored { .. } => EventKind::ControlIgnored,
            Event::JoinWaiting { .. } => EventKind::JoinWaiting,
            Event::JoinCompleted { .. } => EventKind::JoinCompleted,
            Event::ClaudeInvocationStarted { .. } => EventKind::ClaudeInvocationStarted,
            Event::ClaudeStreamOutput { .. } => EventKind::ClaudeStreamOutput,
            Event::ScriptOutput { .. } => EventKind::ScriptOutput,
            Event::ToolInvocation { .. } => EventKind::ToolInvocation,
            Event::ToolError { .. } => EventKind::ToolError,
            Event::PromptRendered { .. } => EventKind::PromptRendered,
            Event::WorkflowWaiting { .. } => EventKind::WorkflowWaiting,
            Event::WorkflowResuming { .. } => EventKind::WorkflowResuming,
            Event::WorkflowThrottled { .. } => EventKind::WorkflowThrottled,
            Event::ProgressMessage { .. } => EventKind::ProgressMessage,
            Event::PrintOutput { .. } => EventKind::PrintOutput,
            Event::ErrorOccurred { .. } => EventKind::ErrorOccurred,
        }
    }
}
