//! Claude Code behind the [`Backend`] trait: find the binary, build the argv, run
//! it, read its stream, and classify the outcome (R12.5, R12.10–R12.11, A15).
//!
//! Classification, in order: a usage limit (structured signals first, then the
//! text table) pauses the agent; a non-zero exit, a stream without a result, or an
//! empty result is retryable, with the result text in the message because Claude
//! Code's stderr is usually empty; anything else is a turn whose text the executor
//! parses — including `is_error` results, which normally carry no tag (R12.10).

use std::path::Path;
use std::sync::Arc;

use tokio::sync::watch;

use super::command::ClaudeCommand;
use super::options::ClaudeOptions;
use super::stream_reader::StreamReader;
use super::telemetry::with_telemetry;
use crate::backend::claude::usage_limit::{is_usage_limit_text, parse_reset};
use crate::backend::cli_turn::{CliTurn, exit_code_phrase, run_turn};

use crate::backend::binary::LazyBinary;
use crate::backend::stream::StreamRead;
use crate::backend::{Backend, BackendError, BackendEvent, BackendFuture, BackendRequest, BackendResponse};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::text::excerpt::head;

/// How much of Claude's result text or stderr goes into a message.
const MESSAGE_CHARS: usize = 500;

pub(crate) struct ClaudeBackend {
    /// Resolved once per run; a missing CLI fails only the first prompt state, so
    /// script-only workflows never need one.
    binary: LazyBinary,
    skip_permissions: bool,
}

impl ClaudeBackend {
    pub(crate) fn new(binary: LazyBinary, skip_permissions: bool) -> ClaudeBackend {
        ClaudeBackend { binary, skip_permissions }
    }
}

impl Backend for ClaudeBackend {
    fn invoke<'a>(
        &'a self,
        request: BackendRequest,
        stop: watch::Receiver<StopLevel>,
        watchdog: Option<&'a Arc<Watchdog>>,
        on_event: &'a mut (dyn FnMut(BackendEvent) + Send),
    ) -> BackendFuture<'a> {
        Box::pin(async move {
            let binary = self
                .binary
                .get()
                .map(Path::to_path_buf)
                .map_err(|error| BackendError::NotAvailable(error.to_string()))?;
            let options = ClaudeOptions::from_values(&request.options)
                .map_err(|error| BackendError::Refused(format!("Invalid YAML frontmatter: {error}")))?
                .resolve_paths(&request.workflow_dir, &request.cwd)
                .map_err(BackendError::Refused)?;
            let command = ClaudeCommand {
                skip_permissions: self.skip_permissions,
                model: request.model.clone(),
                effort: request.effort.clone(),
                session: request.session.clone(),
                new_session_id: request.new_session_id.clone(),
                options,
            };
            let arguments = command.arguments();
            let mut request = request;
            if let Some(telemetry) = &request.telemetry {
                let env = std::mem::take(&mut request.env);
                request.env = with_telemetry(env, telemetry, &|name| std::env::var(name).ok());
            }
            let mut reader = StreamReader::new();
            let turn =
                CliTurn { cli: "Claude Code", program: &binary, arguments: &arguments, env_remove: &["CLAUDECODE"] };
            let exit = run_turn(turn, &request, &mut reader, on_event, stop, watchdog).await?;
            let summary = reader.finish();
            let limit_text = if summary.is_error && is_usage_limit_text(&summary.text) {
                Some(summary.text.clone())
            } else if exit.exit_code != Some(0) && is_usage_limit_text(&exit.stderr) {
                Some(exit.stderr.clone())
            } else {
                None
            };
            if summary.limit.is_some() || limit_text.is_some() {
                let structured = summary.limit.clone().unwrap_or_default();
                let message = structured
                    .message
                    .filter(|message| !message.is_empty())
                    .or(limit_text)
                    .unwrap_or_else(|| head(&summary.text, MESSAGE_CHARS));
                let resets_at = structured
                    .resets_at
                    .or_else(|| parse_reset(&message, jiff::Zoned::now()).map(|timestamp| timestamp.as_second()));
                return Err(BackendError::UsageLimit { message: head(&message, MESSAGE_CHARS), resets_at });
            }
            if summary.subtype.as_deref() == Some("error_max_turns") {
                let detail = if summary.errors.is_empty() {
                    "Reached maximum number of turns".to_string()
                } else {
                    summary.errors.join("; ")
                };
                let message = format!("Claude Code stopped at the state's max_turns: {}", head(&detail, MESSAGE_CHARS));
                return Err(BackendError::TurnLimit { message, cost_usd: summary.cost_usd });
            }
            match exit.exit_code {
                Some(0) => {}
                code => {
                    let code = exit_code_phrase(code);
                    let detail = if !summary.text.trim().is_empty() {
                        head(&summary.text, MESSAGE_CHARS)
                    } else if !exit.stderr.trim().is_empty() {
                        head(&exit.stderr, MESSAGE_CHARS)
                    } else {
                        String::from("no result text and an empty stderr")
                    };
                    let message = format!("Claude Code exited with {code}: {detail}");
                    return Err(BackendError::Failed { message, cost_usd: summary.cost_usd });
                }
            }
            if !summary.saw_result {
                let message = format!("Claude Code exited without a result event{}", exit.malformed.note());
                return Err(BackendError::Failed { message, cost_usd: summary.cost_usd });
            }
            // A turn run with `--json-schema` may answer with its structured output alone.
            if summary.text.trim().is_empty() && summary.structured_output.is_none() {
                let message = "Claude Code returned an empty result".to_string();
                return Err(BackendError::Failed { message, cost_usd: summary.cost_usd });
            }
            Ok(BackendResponse {
                text: summary.text,
                session_id: summary.session_id,
                message_uuid: summary.message_uuid,
                cost_usd: summary.cost_usd,
                input_tokens: summary.input_tokens,
                output_tokens: summary.output_tokens,
                structured_output: summary.structured_output.map(|value| value.to_string()),
            })
        })
    }
}
