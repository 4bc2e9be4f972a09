//! The seam between the markdown executor and the model behind it.
//!
//! The executor renders a prompt, picks the session to continue, and interprets the
//! text that comes back; a [`Backend`] turns one prompt into one model turn. Each
//! agent CLI is one folder here — `claude/` (Claude Code), `pi/`, `codex/` — and
//! nothing outside its folder knows its flags, stream format, models or prices:
//! the rest of Baton asks its [`profile::Profile`] and hands it a state's options
//! as data ([`options::OptionValues`]) it reads itself. A run holds one backend
//! per name ([`Backends`]); each state runs on the one it chooses. `baton test`
//! answers from a test's scripted replies behind the same trait
//! (`testing::scripted`) for every name.

pub(crate) mod binary;
pub(crate) mod claude;
pub(crate) mod cli_turn;
pub(crate) mod codex;
pub(crate) mod jsonl_process;
pub(crate) mod npm_package;
pub(crate) mod options;
pub(crate) mod pi;
pub(crate) mod profile;
pub(crate) mod recorded_turn;
pub(crate) mod session_files;
mod session_mode;
pub(crate) mod stream;
pub(crate) mod transcript;

pub(crate) use session_mode::SessionMode;

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use crate::backend::options::OptionValues;
use crate::events::trace_context::StepTelemetry;
use crate::ids::{AgentId, BackendName, SessionId, StateName};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;

/// One model turn to run.
#[derive(Clone, Debug)]
pub(crate) struct BackendRequest {
    /// The backend the state runs on: the scripted backend of `baton test` stands
    /// in for every one, and checks its replies were written for this one.
    pub(crate) backend: BackendName,
    /// The agent taking the turn and its state: Claude needs neither, the scripted
    /// backend of `baton test` answers by them.
    pub(crate) agent_id: AgentId,
    pub(crate) state: StateName,
    /// 0 for a step's first turn, 1 and 2 for the reminders that follow it (R5.16).
    pub(crate) reminder: u32,
    pub(crate) prompt: String,
    pub(crate) cwd: PathBuf,
    /// The workflow's directory: relative paths in options start there.
    pub(crate) workflow_dir: PathBuf,
    /// Empty: the CLI's own default (the backend's profile has no default model).
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
    /// The state's options (its own keys over its manifest's `backend.options`),
    /// as written; the backend reads those it takes (`docs/backends.md`).
    pub(crate) options: OptionValues,
    /// The step's trace context when the run is exported (issue 23): `TRACEPARENT`
    /// is already in `env`; a CLI that exports its own spans reads where to.
    pub(crate) telemetry: Option<StepTelemetry>,
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
    /// The state asks what the backend cannot do (an invalid option, a file it
    /// names missing): every attempt would fail alike, so the agent pauses.
    #[error("{0}")]
    Refused(String),
    /// The backend's CLI cannot run (not installed, not executable, an unsupported
    /// version): the agent pauses, and `baton resume` after installing it goes on.
    #[error("{0}")]
    NotAvailable(String),
    /// The run cannot go on at all (`baton test`'s scripted backend has no reply
    /// for the turn): fatal.
    #[error("{0}")]
    Fatal(String),
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
        watchdog: Option<&'a Arc<Watchdog>>,
        on_event: &'a mut (dyn FnMut(BackendEvent) + Send),
    ) -> BackendFuture<'a>;
}

/// A path for each CLI (`--claude-bin`/`--pi-bin`/`--codex-bin`, or config's
/// `claude_bin`/`pi_bin`/`codex_bin`); `None` says nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct CliPaths {
    pub(crate) claude: Option<PathBuf>,
    pub(crate) pi: Option<PathBuf>,
    pub(crate) codex: Option<PathBuf>,
}

/// The backends of one run, one per name. A run builds each once (`cli::execute`);
/// `baton test` puts its scripted backend behind every name.
#[derive(Clone)]
pub(crate) struct Backends {
    claude: Arc<dyn Backend>,
    pi: Arc<dyn Backend>,
    codex: Arc<dyn Backend>,
}

impl Backends {
    pub(crate) fn new(claude: Arc<dyn Backend>, pi: Arc<dyn Backend>, codex: Arc<dyn Backend>) -> Backends {
        Backends { claude, pi, codex }
    }

    /// The real CLIs. Each is looked for when a state first needs it: its flag in
    /// `flags`, `BATON_<PROGRAM>_BIN`, its path in `config`, then `PATH`. Codex's
    /// prices come from `baton_dir`'s `prices.toml`.
    pub(crate) fn installed(
        flags: &CliPaths,
        config: &CliPaths,
        skip_permissions: bool,
        baton_dir: &std::path::Path,
    ) -> Backends {
        let binary = |name: BackendName, flag: &Option<PathBuf>, config: &Option<PathBuf>| {
            let profile = profile::profile(name);
            binary::LazyBinary::new(
                binary::BinarySources::with_environment(profile, flag.clone(), config.clone()),
                profile,
            )
        };
        Backends::new(
            Arc::new(claude::backend::ClaudeBackend::new(
                binary(BackendName::Claude, &flags.claude, &config.claude),
                skip_permissions,
            )),
            Arc::new(pi::backend::PiBackend::new(binary(BackendName::Pi, &flags.pi, &config.pi), skip_permissions)),
            Arc::new(
                codex::backend::CodexBackend::new(
                    binary(BackendName::Codex, &flags.codex, &config.codex),
                    skip_permissions,
                )
                .with_prices(codex::prices::PriceTable::load(baton_dir)),
            ),
        )
    }

    /// One backend behind every name.
    pub(crate) fn every_name(backend: Arc<dyn Backend>) -> Backends {
        Backends { claude: backend.clone(), pi: backend.clone(), codex: backend }
    }

    pub(crate) fn get(&self, name: BackendName) -> &dyn Backend {
        match name {
            BackendName::Claude => self.claude.as_ref(),
            BackendName::Pi => self.pi.as_ref(),
            BackendName::Codex => self.codex.as_ref(),
        }
    }
}
