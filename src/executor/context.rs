//! What every step of a run shares (seed §3): the bus, the run's identity and the
//! settings that do not change from one step to the next. One instance per run,
//! behind an `Arc`, handed to every executor task.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::backend::SessionMode;
use crate::events::bus::EventBus;
use crate::events::trace_context::RunTelemetry;
use crate::ids::{RunId, SessionId};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::text::duration::{self, MAX_DURATION, SecondsError};
use crate::workflow::scope::Scope;

/// Where the effective per-state timeout came from, for error messages (R7.12).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum TimeoutSource {
    Default,
    Flag,
    /// The `--timeout` the run was started with, reused by `baton resume` (A10).
    LaunchFlag,
    /// `timeout` in `.baton/config.toml`.
    Config,
    /// The state's own `timeout` in its YAML workflow (R13.6).
    State,
}

impl std::fmt::Display for TimeoutSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeoutSource::Default => f.write_str("baton default"),
            TimeoutSource::Flag => f.write_str("--timeout flag"),
            TimeoutSource::LaunchFlag => f.write_str("--timeout of the original `baton run`"),
            TimeoutSource::Config => f.write_str(".baton/config.toml"),
            TimeoutSource::State => f.write_str("the state's `timeout` in its YAML workflow"),
        }
    }
}

/// The inactivity timeout for scripts and the idle timeout for Claude.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct StateTimeout {
    /// `None` disables the timeout (a value ≤ 0 was given).
    pub(crate) limit: Option<Duration>,
    pub(crate) source: TimeoutSource,
}

impl StateTimeout {
    pub(crate) const DEFAULT_SECONDS: f64 = 600.0;

    /// A value ≤ 0 disables the timeout. The CLI and the config refuse values out
    /// of range; one that comes from an older state file is held to the longest
    /// duration Baton accepts rather than overflow a clock.
    pub(crate) fn from_seconds(seconds: f64, source: TimeoutSource) -> StateTimeout {
        let limit = match duration::seconds(seconds) {
            Ok(limit) if !limit.is_zero() => Some(limit),
            Err(SecondsError::TooLong) => Some(MAX_DURATION),
            Ok(_) | Err(SecondsError::Negative | SecondsError::NotFinite) => None,
        };
        StateTimeout { limit, source }
    }
}

pub(crate) struct ExecutionContext {
    /// Variables every process of the run gets (a manifest's `environment`).
    pub(crate) environment: BTreeMap<String, String>,
    pub(crate) run_id: RunId,
    /// The `.baton` directory (task folders live under it).
    pub(crate) baton_dir: PathBuf,
    /// Where a script's input is written for `BATON_INPUT_FILE` (in the run's directory).
    pub(crate) inputs_dir: PathBuf,
    pub(crate) bus: Arc<EventBus>,
    pub(crate) timeout: StateTimeout,
    /// Raised when running steps must stop (their process groups are signalled).
    pub(crate) stop: watch::Receiver<StopLevel>,
    /// Kills step process groups if Baton itself dies (`process_watchdog`).
    pub(crate) watchdog: Option<Arc<Watchdog>>,
    /// 0 = unlimited (R9.1).
    pub(crate) budget_usd: f64,
    /// `--backend` or config, else Claude: the backend of prompt states whose
    /// frontmatter and manifest choose none.
    pub(crate) default_backend: crate::ids::BackendName,
    /// `--model`/`--effort` or config, for states on `default_backend`; a state's
    /// frontmatter overrides them (R5.21–R5.22).
    pub(crate) default_model: Option<String>,
    pub(crate) default_effort: Option<String>,
    /// Sessions that belong to the run this one reruns (`RunState::borrowed_sessions`):
    /// a turn that would continue one forks it instead.
    pub(crate) borrowed_sessions: BTreeSet<SessionId>,
    /// The run's trace when it is exported over OTLP (`observers::otel`): each
    /// prompt step's process gets its step's `TRACEPARENT`.
    pub(crate) telemetry: Option<RunTelemetry>,
}

impl ExecutionContext {
    /// How a turn continues `session`, which stood at assistant message `message` for
    /// the agent: resumed, unless the session belongs to the run this one reruns,
    /// which must not change — then forked (`baton rerun`).
    pub(crate) fn continue_session(&self, session: &SessionId, message: Option<&String>) -> SessionMode {
        if self.borrowed_sessions.contains(session) {
            self.fork_session(session, message)
        } else {
            SessionMode::Resume(session.clone())
        }
    }

    /// How a turn forks `session` (a `<call>` child): as it is now, or, when it is
    /// borrowed from the run this one reruns, cut back to `message`, where it stood
    /// at the rerun's step (the original may have gone on with it since).
    pub(crate) fn fork_session(&self, session: &SessionId, message: Option<&String>) -> SessionMode {
        match message {
            Some(message) if self.borrowed_sessions.contains(session) => {
                SessionMode::ForkAt(session.clone(), message.clone())
            }
            _ => SessionMode::ForkFrom(session.clone()),
        }
    }

    /// The timeout for state `state` of workflow `scope`: its own, when its YAML
    /// workflow gives one, else the run's.
    pub(crate) fn timeout_for(&self, scope: &Scope, state: &str) -> StateTimeout {
        match scope.declared_timeout(state) {
            Some(seconds) => StateTimeout::from_seconds(seconds, TimeoutSource::State),
            None => self.timeout.clone(),
        }
    }
}
