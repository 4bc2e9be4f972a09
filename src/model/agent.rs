//! The agent: one logical thread of execution with its own current state, Claude
//! session, return stack and working directory (spec §2.1).
//!
//! Agents are plain data. The workflow loop owns them; executors get a clone; the
//! transition handlers return new values instead of mutating in place, so a failed
//! step can never leave an agent half-updated.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};

use crate::ids::{AgentId, BackendName, SessionId, StateName};

/// Whether an agent is scheduled to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AgentStatus {
    /// Runs (or will run) its `current_state`.
    #[default]
    Active,
    /// Stopped until the run is resumed; `pause_reason` and `error` say why.
    Paused,
    /// Waiting for a person's answer to its `<ask>` (R3.25, §11).
    Asking,
    /// Waiting, after a `<join>`, for the workers it forked to end (`docs/join.md`).
    Joining,
}

/// Why an agent was paused. Stable strings: they appear in events and `baton status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PauseReason {
    /// A multi-fork output broke the structural rules (R3.44).
    ValidationError,
    /// Retryable Claude failures exhausted their attempts (R10.1).
    ClaudeError,
    /// The Claude idle timeout exhausted its attempts.
    Timeout,
    /// The prompt file could not be loaded after all attempts.
    PromptError,
    /// A usage limit was reported by Claude Code (A15).
    UsageLimit,
    /// An `<ask>` under `--on-ask reject` (R11.3).
    AskRejected,
    /// An `<ask>` whose `timeout` passed with no `timeout_next` (A11).
    AskTimeout,
    /// An `<ask>`'s `display_files` could not be staged (R3.29).
    AskStageError,
    /// Cancelled by its supervisor (`{"cancel_agent": ID}` under `--on-ask json`).
    Cancelled,
    /// The state's backend CLI is missing (or cannot run): install it and resume.
    BackendNotAvailable,
    /// The distributed engine (Restate) could not be reached: start it and resume.
    EngineUnavailable,
    /// A distributed worker refused the step (another Baton version, a missing
    /// directory): fix the worker and resume.
    WorkerRefused,
    /// Stopped at a breakpoint (`--break-before`, `--break-after`, `--step`): a
    /// resume (or a `continue` control line) runs it on, past that breakpoint.
    Breakpoint,
}

impl PauseReason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PauseReason::ValidationError => "validation_error",
            PauseReason::ClaudeError => "claude_error",
            PauseReason::Timeout => "timeout",
            PauseReason::PromptError => "prompt_error",
            PauseReason::UsageLimit => "usage_limit",
            PauseReason::AskRejected => "ask_rejected",
            PauseReason::AskTimeout => "ask_timeout",
            PauseReason::AskStageError => "ask_stage_error",
            PauseReason::Cancelled => "cancelled",
            PauseReason::BackendNotAvailable => "backend_not_available",
            PauseReason::EngineUnavailable => "engine_unavailable",
            PauseReason::WorkerRefused => "worker_refused",
            PauseReason::Breakpoint => "breakpoint",
        }
    }
}

impl fmt::Display for PauseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A return address pushed by `<call>` and `<function>` and popped by `<result>`
/// (R3.11, R3.17). It records the caller's *effective* cwd so that a pop always
/// restores it (decision A4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Frame {
    /// The caller's session at the time of the call, including the calling turn (R2.6).
    pub(crate) session: Option<SessionId>,
    /// The backend whose conversation `session` is; `None` is Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_backend: Option<BackendName>,
    /// The `uuid` of that session's last assistant message at the time of the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_message: Option<String>,
    /// The resolved return state.
    pub(crate) state: StateName,
    pub(crate) scope_dir: PathBuf,
    /// The URL the caller's workflow came from (R13.15), restored on return.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scope_url: Option<String>,
    pub(crate) cwd: PathBuf,
    #[serde(default)]
    pub(crate) nesting_depth: u32,
    pub(crate) task_folder: PathBuf,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Agent {
    pub(crate) id: AgentId,
    /// The resolved file name of the state to run next.
    pub(crate) current_state: StateName,
    #[serde(default)]
    pub(crate) session_id: Option<SessionId>,
    /// The backend whose conversation `session_id` (and `fork_session_id`) is; `None`
    /// is Claude, as in every run before backends were chosen. A session never
    /// crosses backends: a state on another one starts a fresh conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_backend: Option<BackendName>,
    /// The `uuid` of the last assistant message of the session the agent last continued
    /// (`session_id`, or the one `fork_session_id` forks): where that session stood
    /// for this agent. A `baton rerun` cuts a borrowed session back to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) session_message: Option<String>,
    /// The id the step being launched gives a conversation it starts (fresh, or a
    /// fork), chosen and journalled with the launch, before Claude starts: a turn cut
    /// short by a crash leaves a conversation whose id the run knows, and the agent
    /// still points at its last committed session (`docs/state-format.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) new_session_id: Option<SessionId>,
    /// Return frames, innermost last. `null` is accepted on read (R8.5).
    #[serde(default, deserialize_with = "null_as_empty")]
    pub(crate) stack: Vec<Frame>,
    /// Delivered to the next state as `{{input}}` / `BATON_INPUT`; `Some("")` is a real, empty input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pending_result: Option<String>,
    /// Absolute working directory for the agent's scripts and Claude sessions.
    pub(crate) cwd: PathBuf,
    pub(crate) scope_dir: PathBuf,
    /// The URL its workflow was fetched from, when it was (R13.15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scope_url: Option<String>,
    #[serde(default)]
    pub(crate) nesting_depth: u32,
    #[serde(default)]
    pub(crate) status: AgentStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pause_reason: Option<PauseReason>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) retry_count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    pub(crate) task_folder: PathBuf,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) task_count: u32,
    /// Set by `<call>`: the next Claude invocation forks this session (R2.1). Persisted (A5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fork_session_id: Option<SessionId>,
    /// Extra `<fork>` attributes for the worker's first state (R2.2). Persisted (A5).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) fork_attributes: BTreeMap<String, String>,
    /// How many steps this agent has started; numbers its debug files (R7.11).
    #[serde(default)]
    pub(crate) steps_started: u64,
    /// When paused by a usage limit: when it resets (epoch seconds), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) limit_resets_at: Option<i64>,
    /// `--continue-session`: the first prompt turn continues the directory's latest
    /// Claude session as a fork (`-c --fork-session`); cleared after the first step (R2.5).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) continue_and_fork: bool,
    /// Ready to run but waiting for a slot under `--max-agents`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) queued: bool,
    /// The question this agent waits on (status `asking`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ask: Option<PendingAsk>,
    /// The ask the current state answers: `{{ask_id}}`, for one state (R3.26).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pending_ask_id: Option<String>,
    /// The workers this agent forked since its last `<join>`, in fork order: the
    /// ones its next join waits for (`docs/join.md`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) forked: Vec<AgentId>,
    /// The join this agent waits on (status `joining`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) join: Option<PendingJoin>,
    /// What the last join gathered, for the state after it only (like
    /// `pending_result`): `$BATON_RESULTS` / `{{results}}` name a file holding it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) join_results: Option<Vec<JoinResult>>,
    /// A worker forked with `isolation="worktree"`: the git worktree that is its
    /// directory for its whole life (`docs/isolation.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) worktree: Option<Worktree>,
    /// Continued from a breakpoint: its next launch does not stop at the breakpoint
    /// it stopped at (cleared when that step launches).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) breakpoint_passed: bool,
    /// `baton resume --prompt-file`: the text its next prompt turn sends instead of
    /// the state's rendered body, once (cleared when that step completes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_override: Option<String>,
}

/// A worker's own git worktree (`docs/isolation.md`): recorded with the fork that
/// creates the worker, made when its first step launches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Worktree {
    /// The top of the parent's repository when it forked (where `git worktree add` runs).
    pub(crate) repo: PathBuf,
    /// `.baton/worktrees/<run_id>/<agent_id>`.
    pub(crate) path: PathBuf,
    /// `baton/<run_id>/<agent_id>`.
    pub(crate) branch: String,
    /// The parent's `HEAD` when it forked: where the branch starts.
    pub(crate) base: String,
}

/// A `<join>` waiting for its workers (`docs/join.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PendingJoin {
    /// Where the agent continues (resolved).
    pub(crate) next: StateName,
    /// The workers waited for, in fork order.
    pub(crate) workers: Vec<AgentId>,
    /// RFC 3339, when the join began.
    pub(crate) since: String,
    /// RFC 3339: with a `timeout`, when the join continues with what has arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) deadline: Option<String>,
}

/// How a joined worker ended, as the joining agent receives it (one element of
/// the `$BATON_RESULTS` array).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JoinResult {
    pub(crate) agent_id: AgentId,
    pub(crate) status: JoinedStatus,
    /// The worker's `<result>` payload; `null` unless it terminated.
    pub(crate) result: Option<String>,
    /// Why a paused worker paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// A worker in its own worktree: its branch (`docs/isolation.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) branch: Option<String>,
    /// A terminated worker in its own worktree: `git diff --stat BASE BRANCH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) diff_stat: Option<String>,
}

/// A joined worker's status (stable strings: they are in `$BATON_RESULTS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum JoinedStatus {
    /// It emitted `<result>` with an empty stack.
    Terminated,
    /// It is paused (its retries ran out, a usage limit under `--no-wait`, a
    /// refused ask, …); it runs again when the run is resumed.
    Paused,
    /// Still working when the join's timeout passed.
    Running,
}

impl JoinedStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            JoinedStatus::Terminated => "terminated",
            JoinedStatus::Paused => "paused",
            JoinedStatus::Running => "running",
        }
    }
}

/// An `<ask>` waiting for its answer (R3.25).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PendingAsk {
    /// `ask_<agent>_<unix nanos>`.
    pub(crate) id: String,
    /// The question, as the state wrote it.
    pub(crate) prompt: String,
    /// Where the answer goes (resolved).
    pub(crate) next: StateName,
    /// When no answer came in time (`30m`, `24h`, `7d`), and where to go then (A11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) timeout_next: Option<String>,
    /// RFC 3339, when the ask was made.
    pub(crate) asked_at: String,
    /// The file attributes as written (`upload_slots`, `upload_bucket`, `upload_*`,
    /// `display_files`; R3.29), validated by the parser.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) files: BTreeMap<String, String>,
}

/// A file an `<ask>` shows the person (R3.29 `display_files`): where it comes from,
/// relative to the agent's directory, and the name it is staged under in
/// `<task_folder>/asks/<ask_id>/` (its label, else its file name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct DisplayFile {
    pub(crate) source: String,
    pub(crate) name: String,
}

impl PendingAsk {
    /// The ask's `display_files`, in the order written.
    pub(crate) fn display_files(&self) -> Vec<DisplayFile> {
        let Some(list) = self.files.get("display_files") else { return Vec::new() };
        list.split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                let (source, label) = match entry.split_once(':') {
                    Some((source, label)) => (source.trim(), Some(label.trim())),
                    None => (entry, None),
                };
                let name = label
                    .map(str::to_string)
                    .or_else(|| Path::new(source).file_name().map(|name| name.to_string_lossy().into_owned()))
                    .unwrap_or_else(|| source.to_string());
                DisplayFile { source: source.to_string(), name }
            })
            .collect()
    }

    /// What kind of answer the ask wants (R3.29): slot > bucket > display-only > text-only.
    pub(crate) fn mode(&self) -> &'static str {
        if self.files.contains_key("upload_slots") {
            "slots"
        } else if self.files.get("upload_bucket").is_some_and(|value| value.trim().eq_ignore_ascii_case("true")) {
            "bucket"
        } else if self.files.contains_key("display_files") {
            "display"
        } else {
            "text"
        }
    }
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

fn null_as_empty<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Frame>, D::Error> {
    Ok(Option::<Vec<Frame>>::deserialize(deserializer)?.unwrap_or_default())
}

impl Agent {
    /// The first agent of a run.
    pub(crate) fn main(initial_state: StateName, scope_dir: PathBuf, cwd: PathBuf, task_folder: PathBuf) -> Agent {
        Agent::new(AgentId::main(), initial_state, scope_dir, cwd, task_folder)
    }

    /// An active agent about to run `state` for the first time: no session, no
    /// return frames, no input.
    pub(crate) fn new(id: AgentId, state: StateName, scope_dir: PathBuf, cwd: PathBuf, task_folder: PathBuf) -> Agent {
        Agent {
            id,
            current_state: state,
            session_id: None,
            session_backend: None,
            session_message: None,
            new_session_id: None,
            stack: Vec::new(),
            pending_result: None,
            cwd,
            scope_dir,
            scope_url: None,
            nesting_depth: 0,
            status: AgentStatus::Active,
            pause_reason: None,
            retry_count: 0,
            error: None,
            task_folder,
            task_count: 0,
            fork_session_id: None,
            fork_attributes: BTreeMap::new(),
            steps_started: 0,
            limit_resets_at: None,
            continue_and_fork: false,
            queued: false,
            ask: None,
            pending_ask_id: None,
            forked: Vec::new(),
            join: None,
            join_results: None,
            worktree: None,
            breakpoint_passed: false,
            prompt_override: None,
        }
    }

    /// Its ask will not be answered (refused, unstageable, timed out): drop it and pause.
    pub(crate) fn drop_ask(&mut self, reason: PauseReason, message: String) {
        self.ask = None;
        self.pause(reason, message);
    }

    /// The answer to its ask arrived: go to the ask's `next` with it (R3.26).
    pub(crate) fn answer(&mut self, answer: String) {
        if let Some(ask) = self.ask.take() {
            self.pending_result = Some(answer);
            self.pending_ask_id = Some(ask.id);
            self.current_state = ask.next;
            self.status = AgentStatus::Active;
        }
    }

    pub(crate) fn is_active(&self) -> bool {
        self.status == AgentStatus::Active
    }

    pub(crate) fn is_at_breakpoint(&self) -> bool {
        self.status == AgentStatus::Paused && self.pause_reason == Some(PauseReason::Breakpoint)
    }

    /// Pause with a reason; the agent is not relaunched until the run is resumed (R10.2).
    pub(crate) fn pause(&mut self, reason: PauseReason, message: String) {
        self.status = AgentStatus::Paused;
        self.pause_reason = Some(reason);
        self.error = Some(message);
    }

    /// Undo a pause on resume (R8.13). An agent paused while it was joining (a
    /// cancel) joins again: its workers and their results are still to be gathered.
    pub(crate) fn unpause(&mut self) {
        // Continued from a breakpoint: it runs on past it.
        if self.pause_reason == Some(PauseReason::Breakpoint) {
            self.breakpoint_passed = true;
        }
        self.status = if self.join.is_some() { AgentStatus::Joining } else { AgentStatus::Active };
        self.pause_reason = None;
        self.error = None;
        self.retry_count = 0;
        self.limit_resets_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent() -> Agent {
        Agent::main("N.sh".into(), PathBuf::from("/wf"), PathBuf::from("/work"), PathBuf::from("/tasks/main"))
    }

    #[test]
    fn a_paused_agent_unpauses_active_with_its_retries_forgotten() {
        let mut agent = agent();
        agent.retry_count = 2;
        agent.pause(PauseReason::Cancelled, "cancelled by request".into());
        agent.unpause();
        assert_eq!(
            (agent.status, agent.pause_reason, agent.error, agent.retry_count),
            (AgentStatus::Active, None, None, 0)
        );
    }

    #[test]
    fn an_agent_paused_while_joining_joins_again() {
        let mut agent = agent();
        agent.status = AgentStatus::Joining;
        agent.join = Some(PendingJoin {
            next: "AGG.sh".into(),
            workers: vec!["main_w1".into()],
            since: "2026-01-01T00:00:00Z".into(),
            deadline: None,
        });
        agent.pause(PauseReason::Cancelled, "cancelled by request".into());
        agent.unpause();
        assert_eq!(agent.status, AgentStatus::Joining);
        assert!(agent.join.is_some());
    }
}
