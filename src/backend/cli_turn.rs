//! One turn of a JSONL agent CLI as every backend runs it: the process through
//! [`run_cli`] with the request's prompt, directory, environment and idle
//! timeout, each stream object through the CLI's own reader, the signals it
//! reads forwarded as [`BackendEvent`]s with the raw object after them, and the
//! process's failures mapped to [`BackendError`]s worded the same for every CLI.
//! What a finished process *means* (its exit, its stream's summary) is each
//! backend's own to classify.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;

use crate::backend::jsonl_process::{CliExit, CliProcess, CliProcessError, run_cli};
use crate::backend::stream::StreamRead;
use crate::backend::{BackendError, BackendEvent, BackendRequest};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::text::duration::seconds_phrase;

/// What a backend runs for a turn; the rest (the prompt on stdin, the working
/// directory, the environment, the idle timeout) comes from the request.
pub(crate) struct CliTurn<'a> {
    /// The CLI's name in messages: `Claude Code`, `pi`, `Codex`.
    pub(crate) cli: &'static str,
    pub(crate) program: &'a Path,
    pub(crate) arguments: &'a [String],
    /// Inherited variables the CLI must not see.
    pub(crate) env_remove: &'a [&'a str],
}

/// Run `turn` for `request` to its end, every object of its stream through
/// `reader`, whose signals go to `on_event` before the raw object.
pub(crate) async fn run_turn(
    turn: CliTurn<'_>,
    request: &BackendRequest,
    reader: &mut (impl StreamRead + Send),
    on_event: &mut (dyn FnMut(BackendEvent) + Send),
    stop: watch::Receiver<StopLevel>,
    watchdog: Option<&Arc<Watchdog>>,
) -> Result<CliExit, BackendError> {
    let process = CliProcess {
        cli: turn.cli,
        program: turn.program,
        arguments: turn.arguments,
        prompt: Some(&request.prompt),
        env_remove: turn.env_remove,
        cwd: &request.cwd,
        env: &request.env,
        idle_timeout: request.idle_timeout,
    };
    let on_object = |object: Value| {
        for signal in reader.push(&object) {
            on_event(signal.into());
        }
        on_event(BackendEvent::Raw(object));
    };
    run_cli(process, on_object, stop, watchdog)
        .await
        .map_err(|error| process_error(turn.cli, error, &request.timeout_source))
}

/// The backend's view of a process that did not run to its end.
fn process_error(cli: &str, error: CliProcessError, timeout_source: &str) -> BackendError {
    match error {
        CliProcessError::Cancelled { .. } => BackendError::Cancelled,
        CliProcessError::IdleTimeout { after, .. } => BackendError::Timeout(format!(
            "{cli} printed nothing for {} and was stopped (timeout from {timeout_source})",
            seconds_phrase(after.as_secs_f64())
        )),
        error => BackendError::Failed { message: error.to_string(), cost_usd: 0.0 },
    }
}

/// How a process that did not exit 0 ended, as Claude Code's and pi's messages
/// word it: `code 2`, or `a signal`.
pub(crate) fn exit_code_phrase(code: Option<i32>) -> String {
    code.map_or_else(|| "a signal".to_string(), |code| format!("code {code}"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_idle_timeout_names_the_cli_the_silence_and_where_the_timeout_came_from() {
        let error = CliProcessError::IdleTimeout { cli: "pi", after: Duration::from_secs(90) };
        assert_eq!(
            process_error("pi", error, "the state's timeout"),
            BackendError::Timeout(format!(
                "pi printed nothing for {} and was stopped (timeout from the state's timeout)",
                seconds_phrase(90.0)
            ))
        );
    }

    #[test]
    fn a_stop_cancels_and_other_process_failures_are_retryable_with_their_own_words() {
        assert_eq!(process_error("Codex", CliProcessError::Cancelled { cli: "Codex" }, "x"), BackendError::Cancelled);
        assert_eq!(
            process_error("Codex", CliProcessError::LineTooLong { cli: "Codex" }, "x"),
            BackendError::Failed { message: "Codex printed a line longer than 1048576 bytes".into(), cost_usd: 0.0 }
        );
    }

    #[test]
    fn an_exit_is_a_code_or_a_signal() {
        assert_eq!(exit_code_phrase(Some(2)), "code 2");
        assert_eq!(exit_code_phrase(None), "a signal");
    }
}
