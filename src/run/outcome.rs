//! What a run's loop reports when it stops, and the limits it runs under. The CLI
//! maps the outcome to an exit code (A7) and the limits come from flags and the
//! persisted launch parameters.

use std::time::Duration;

use crate::run::shutdown::ShutdownSignal;

/// How a run ended, which decides the exit code (A7).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RunOutcome {
    Completed,
    /// Every remaining agent is paused, or a bound was reached.
    Paused,
    Failed {
        error: String,
    },
    Interrupted {
        signal: ShutdownSignal,
    },
    /// An agent waits for a person's answer (`--on-ask pause`, R11.4).
    Asking,
}

/// Limits against runaway workflows, and how stopping treats running steps.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RunLimits {
    pub(crate) max_agents: Option<u32>,
    pub(crate) max_steps: Option<u64>,
    pub(crate) time_limit: Option<Duration>,
    /// How long running steps may finish after a stop before they are terminated.
    pub(crate) grace: Duration,
    /// Do not wait out usage limits: pause and exit instead (`--no-wait`).
    pub(crate) no_wait: bool,
    /// Added to a usage limit's reset time before resuming (R10.3: 5 minutes).
    pub(crate) limit_buffer: Duration,
    /// The first wait when a limit's reset time is unknown; doubles up to an hour.
    pub(crate) limit_poll: Duration,
    /// Steps that fit in the open-file limit at once, and that limit
    /// (`process::limits`); further ready agents wait, as under `max_agents`.
    pub(crate) open_files: Option<OpenFiles>,
    /// Where asks are answered while the run goes on (`run::questions`); `None`:
    /// nowhere, an ask stops the run (`pause`) or is refused (`reject`).
    pub(crate) answers: Option<AnswerSource>,
}

/// Where the answers to asks come from while the run goes on (`run::questions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnswerSource {
    /// `--on-ask prompt` with a terminal on stdin and stderr: the lines typed there.
    Terminal,
    /// `--on-ask json`: JSON control lines on stdin, from a supervisor (`run::control`).
    ControlLines,
}

/// The open-file budget of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpenFiles {
    pub(crate) limit: u64,
    pub(crate) max_running: usize,
}

impl Default for RunLimits {
    fn default() -> RunLimits {
        RunLimits {
            max_agents: None,
            max_steps: None,
            time_limit: None,
            grace: Duration::from_secs(30),
            no_wait: false,
            limit_buffer: Duration::from_secs(300),
            limit_poll: Duration::from_secs(300),
            open_files: None,
            answers: None,
        }
    }
}
