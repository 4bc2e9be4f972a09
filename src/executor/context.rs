//! What every step of a run shares (seed §3): the bus, the run's identity and the
//! settings that do not change from one step to the next. One instance per run,
//! behind an `Arc`, handed to every executor task.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::event_bus::EventBus;

/// Where the effective per-state timeout came from, for error messages (R7.12).
#[derive(Clone, Debug, PartialEq)]
pub enum TimeoutSource {
    Default,
    Flag,
    /// The `--timeout` the run was started with, reused by `baton resume` (A10).
    LaunchFlag,
}

impl std::fmt::Display for TimeoutSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeoutSource::Default => f.write_str("baton default"),
            TimeoutSource::Flag => f.write_str("--timeout flag"),
            TimeoutSource::LaunchFlag => f.write_str("--timeout of the original `baton run`"),
        }
    }
}

/// The inactivity timeout for scripts and the idle timeout for Claude.
#[derive(Clone, Debug, PartialEq)]
pub struct StateTimeout {
    /// `None` disables the timeout (a value ≤ 0 was given).
    pub limit: Option<Duration>,
    pub source: TimeoutSource,
}

impl StateTimeout {
    pub const DEFAULT_SECONDS: f64 = 600.0;

    pub fn from_seconds(seconds: f64, source: TimeoutSource) -> StateTimeout {
        let limit = (seconds > 0.0 && seconds.is_finite()).then(|| Duration::from_secs_f64(seconds));
        StateTimeout { limit, source }
    }
}

pub struct ExecutionContext {
    pub run_id: String,
    pub bus: Arc<EventBus>,
    pub timeout: StateTimeout,
    /// Becomes `true` when running steps must stop now (their process groups are killed).
    pub cancel: watch::Receiver<bool>,
    /// The directory of this run's trace files, if tracing is on.
    pub run_dir: PathBuf,
}
