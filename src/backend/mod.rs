//! The seam between the markdown executor and the model behind it.
//!
//! The executor renders a prompt, picks the session to continue, and interprets the
//! text that comes back; a [`Backend`] turns one prompt into one model turn. Claude
//! Code is the backend of `baton run` (`claude::claude_backend`); `baton test`
//! answers from a test's scripted replies behind the same trait
//! (`testing::scripted`); other CLIs and trace replay would plug in there too.

pub(crate) mod claude;
mod session_mode;

pub(crate) use session_mode::SessionMode;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use crate::ids::{AgentId, SessionId, StateName};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::syntax::claude_options::ClaudeOptions;

/// One model turn to run.
#[derive(Clone, Debug)]
pub(crate) struct BackendRequest {
    /// The agent taking the turn and its state: Claude needs neither, the scripted
    /// backend of `baton test` answers by them.
    pub(crate) agent_id: AgentId,
    pub(crate) state: StateName,
    /// 0 for a step's first turn, 1 and 2 for the reminders that follow it (R5.16).
    pub(crate) reminder: u32,
    pub(crate) prompt: String,
    pub(crate) cwd: PathBuf,
    pub(crate) model: String,
    pub(crate) effort: Option<String>,
    pub(crate) session: SessionMode,
    /// The id a conversation this turn starts (fresh or forked) must get; `None`
    /// lets the backend choose. Ignored when the turn resumes a session in place.
    pub(crate) new_session_id: Option<SessionId>,
    pub(crate) idle_timeout: Option<Duration>,
    /// Where the idle timeout came from, for messages.
    pub(crate) timeout_source: String,
    /// Variables for the backend's process besides the inherited ones (a manifest's
    /// `environment`).
    pub(crate) env: BTreeMap<String, String>,
    /// The state's Claude Code options, with every path made absolute.
    pub(crate) claude: ClaudeOptions,
}

/// Something that happened during the turn, as it happens.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BackendEvent {
    /// One raw object of the backend's stream, for the trace.
    Raw(Value),
    /// Assistant text, for `<print>` extraction.
    AssistantText(String),
    /// A line of progress worth showing.
    Progress(String),
    Tool {
        name: String,
        detail: String,
    },
    ToolError(String),
}

/// What a completed turn produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct BackendResponse {
    /// The text transitions are parsed from.
    pub(crate) text: String,
    pub(crate) session_id: Option<SessionId>,
    /// The `uuid` of the turn's last assistant message, when the stream gave one.
    pub(crate) message_uuid: Option<String>,
    pub(crate) cost_usd: f64,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    /// The result's `structured_output` when the turn ran with a JSON Schema, as JSON text.
    pub(crate) structured_output: Option<String>,
}

/// How a turn failed, in the classes the workflow loop handles (§10.1).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum BackendError {
    /// The account's usage limit was reached; `resets_at` in epoch seconds when known.
    #[error("{message}")]
    UsageLimit { message: String, resets_at: Option<i64> },
    /// A failure worth retrying (non-zero exit, no result, an unreadable stream);
    /// `cost_usd` is what the failed turn still cost.
    #[error("{message}")]
    Failed { message: String, cost_usd: f64 },
    /// The turn stopped at the state's `max_turns`: another attempt would spend as
    /// much again, so the agent pauses; `cost_usd` is what the turn cost.
    #[error("{message}")]
    TurnLimit { message: String, cost_usd: f64 },
    /// The idle timeout fired (retryable, reason `timeout`).
    #[error("{0}")]
    Timeout(String),
    /// The backend cannot run at all (e.g. the CLI is not installed): fatal.
    #[error("{0}")]
    NotAvailable(String),
    /// Stopped by a shutdown.
    #[error("stopped before it finished")]
    Cancelled,
}

pub(crate) type BackendFuture<'a> = Pin<Box<dyn Future<Output = Result<BackendResponse, BackendError>> + Send + 'a>>;

pub(crate) trait Backend: Send + Sync {
    fn invoke<'a>(
        &'a self,
        request: BackendRequest,
        stop: watch::Receiver<StopLevel>,
        watchdog: Option<&'a Watchdog>,
        on_event: &'a mut (dyn FnMut(BackendEvent) + Send),
    ) -> BackendFuture<'a>;
}
