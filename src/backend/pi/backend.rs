//! pi behind the [`Backend`] trait: find the binary, check its version, build
//! the argv, run it, read its events, and classify the outcome.
//!
//! Classification, in order: a non-zero exit fails (retryable) with pi's
//! stderr, which is where it explains itself (`No session found matching …`);
//! a stream without `agent_end` fails, saying what came instead; a last
//! assistant message that ended in error fails with pi's `errorMessage` — pi
//! exits 0 after a provider error, a 429 included, once its own retries are
//! spent, and has no usage-limit signal to pause on (`Capabilities::usage_limit`);
//! a turn without assistant text fails; anything else is a turn whose text the
//! executor parses.

use std::path::Path;
use std::sync::Arc;
use std::sync::OnceLock;

use tokio::sync::watch;

use super::command::{PiCommand, PiSession};
use super::options::PiOptions;
use super::stream_reader::StreamReader;
use super::version::check_version;
use crate::backend::binary::LazyBinary;
use crate::backend::cli_turn::{CliTurn, exit_code_phrase, run_turn};
use crate::backend::stream::StreamRead;
use crate::backend::{Backend, BackendError, BackendEvent, BackendFuture, BackendRequest, BackendResponse};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::text::excerpt::head;

/// How much of pi's error message or stderr goes into a message.
const MESSAGE_CHARS: usize = 500;

pub(crate) struct PiBackend {
    /// Resolved once per run; a missing CLI fails only the first pi state, so a
    /// workflow that never runs one never needs pi.
    binary: LazyBinary,
    skip_permissions: bool,
    /// The version check, made once per run at the first pi turn.
    version: OnceLock<Result<(), String>>,
}

impl PiBackend {
    pub(crate) fn new(binary: LazyBinary, skip_permissions: bool) -> PiBackend {
        PiBackend { binary, skip_permissions, version: OnceLock::new() }
    }

    fn checked_binary(&self) -> Result<&Path, BackendError> {
        let binary = self.binary.get().map_err(|error| BackendError::NotAvailable(error.to_string()))?;
        self.version.get_or_init(|| check_version(binary)).clone().map_err(BackendError::NotAvailable)?;
        Ok(binary)
    }
}

impl Backend for PiBackend {
    fn invoke<'a>(
        &'a self,
        request: BackendRequest,
        stop: watch::Receiver<StopLevel>,
        watchdog: Option<&'a Arc<Watchdog>>,
        on_event: &'a mut (dyn FnMut(BackendEvent) + Send),
    ) -> BackendFuture<'a> {
        Box::pin(async move {
            let binary = self.checked_binary()?;
            let options = PiOptions::from_values(&request.options)
                .map_err(|error| BackendError::Refused(format!("Invalid YAML frontmatter: {error}")))?
                .resolve_paths(&request.workflow_dir);
            let session = PiSession::of(&request.session).ok_or_else(|| {
                BackendError::Refused(
                    "pi cannot continue the directory's latest conversation as a fork (--continue-session): \
                     its --fork refuses --continue; start the run without --continue-session"
                        .to_string(),
                )
            })?;
            let command = PiCommand {
                skip_permissions: self.skip_permissions,
                model: request.model.clone(),
                effort: request.effort.clone(),
                session,
                options,
            };
            let arguments = command.arguments();
            let mut reader = StreamReader::new();
            let turn = CliTurn { cli: "pi", program: binary, arguments: &arguments, env_remove: &[] };
            let exit = run_turn(turn, &request, &mut reader, on_event, stop, watchdog).await?;
            let summary = reader.finish();
            let cost_usd = summary.cost_usd;
            if exit.exit_code != Some(0) {
                let code = exit_code_phrase(exit.exit_code);
                let detail = if !exit.stderr.trim().is_empty() {
                    head(exit.stderr.trim(), MESSAGE_CHARS)
                } else if let Some(error) = summary.error_message.as_deref().filter(|error| !error.trim().is_empty()) {
                    head(error, MESSAGE_CHARS)
                } else {
                    format!("an empty stderr{}", exit.malformed.note())
                };
                let message = format!("pi exited with {code}: {detail}");
                return Err(BackendError::Failed { message, cost_usd });
            }
            if !summary.saw_agent_end {
                let stderr = if exit.stderr.trim().is_empty() {
                    String::new()
                } else {
                    format!("; stderr: {}", head(exit.stderr.trim(), MESSAGE_CHARS))
                };
                let message = format!(
                    "pi exited without an agent_end event (expected `pi --mode json` to end the turn with one){}{stderr}",
                    exit.malformed.note()
                );
                return Err(BackendError::Failed { message, cost_usd });
            }
            if summary.ended_in_error() {
                let error = summary.error_message.as_deref().unwrap_or("no errorMessage");
                let retried = match summary.retries {
                    0 => String::new(),
                    1 => " after 1 retry".to_string(),
                    count => format!(" after {count} retries"),
                };
                let message = format!(
                    "pi exited 0 but its turn ended in {}{retried}: {}",
                    summary.stop_reason.as_deref().unwrap_or("error"),
                    head(error, MESSAGE_CHARS)
                );
                return Err(BackendError::Failed { message, cost_usd });
            }
            if summary.text.trim().is_empty() {
                let message = format!(
                    "pi ended the turn without assistant text (expected the model's answer in its last message; \
                     stop reason {}){}",
                    summary.stop_reason.as_deref().unwrap_or("missing"),
                    exit.malformed.note()
                );
                return Err(BackendError::Failed { message, cost_usd });
            }
            Ok(BackendResponse {
                text: summary.text,
                session_id: summary.session_id,
                message_uuid: None,
                cost_usd,
                input_tokens: summary.input_tokens,
                output_tokens: summary.output_tokens,
                structured_output: None,
            })
        })
    }
}
