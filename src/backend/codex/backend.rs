//! Codex behind the [`Backend`] trait: check the CLI once, build the argv, run
//! `codex exec --json`, read its events, and classify the outcome.
//!
//! Classification, in order: a usage limit (in `turn.failed`, an `error` event,
//! or the stderr of a failed exit) pauses the agent until it resets; a thread
//! Codex has no record of pauses it at once (every retry would fail alike); a
//! `turn.failed`, a non-zero exit, a stream without `turn.completed`, a turn
//! without a thread id or without an answer is retryable, with Codex's own words
//! in the message; anything else is a turn whose text the executor parses. An
//! `error` *item* ("Model metadata for `…` not found") is only a warning.
//!
//! Tokens are the turn's own (`thread_usage`), priced from the table (`prices`),
//! a failed turn's too (from the thread's record: `turn.failed` has no usage).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;

use jiff::Zoned;
use jiff::tz::TimeZone;
use tokio::sync::{OnceCell, watch};

use super::command::{CodexCommand, Permissions};
use super::options::CodexOptions;
use super::prices::PriceTable;
use super::stream_reader::{StreamReader, StreamSummary};
use super::thread_usage::{RolloutFacts, SeenTotals, TokenTotals, codex_home, rollout_facts, rollout_file};
use super::usage_limit::{is_usage_limit_text, parse_reset};
use crate::backend::binary::LazyBinary;
use crate::backend::cli_turn::{CliTurn, run_turn};
use crate::backend::jsonl_process::CliExit;
use crate::backend::stream::StreamRead;
use crate::backend::{
    Backend, BackendError, BackendEvent, BackendFuture, BackendRequest, BackendResponse, SessionMode,
};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::text::excerpt::head;

/// How much of Codex's messages or stderr goes into a message.
const MESSAGE_CHARS: usize = 500;

pub(crate) struct CodexBackend {
    /// Resolved once per run; a missing CLI fails only the first Codex state.
    binary: LazyBinary,
    skip_permissions: bool,
    /// The built-in prices with the project's `.baton/prices.toml` over them; a
    /// bad file fails only the first Codex state.
    prices: Result<PriceTable, String>,
    /// Why the CLI cannot serve (too old), asked once per run.
    version_problem: OnceCell<Option<String>>,
    seen: SeenTotals,
    /// Models already warned about having no price.
    unpriced: Mutex<BTreeSet<String>>,
}

impl CodexBackend {
    pub(crate) fn new(binary: LazyBinary, skip_permissions: bool) -> CodexBackend {
        CodexBackend {
            binary,
            skip_permissions,
            prices: Ok(PriceTable::built_in()),
            version_problem: OnceCell::new(),
            seen: SeenTotals::default(),
            unpriced: Mutex::new(BTreeSet::new()),
        }
    }

    /// Price turns from `prices` (`PriceTable::load` of the project's `.baton`).
    pub(crate) fn with_prices(mut self, prices: Result<PriceTable, String>) -> CodexBackend {
        self.prices = prices;
        self
    }

    /// What a failed turn still cost: its thread's recorded totals less the
    /// baseline (nothing when either is unknown, or the model has no price).
    fn failed_turn_cost(
        &self,
        summary: &StreamSummary,
        home: Option<&Path>,
        baseline: Option<(&str, Option<TokenTotals>)>,
        model: &str,
        prices: &PriceTable,
    ) -> f64 {
        let before = match baseline {
            None => TokenTotals::default(),
            Some((_, Some(before))) => before,
            Some((_, None)) => return 0.0,
        };
        let Some(facts) = summary.thread_id.as_ref().and_then(|thread| facts_of(home?, thread.as_ref())) else {
            return 0.0;
        };
        let model = if model.is_empty() { facts.model.unwrap_or_default() } else { model.to_string() };
        facts.totals.and_then(|totals| prices.cost(&model, totals.since(before))).unwrap_or(0.0)
    }

    /// The first time `model` has no price in this run: the warning to show.
    fn unpriced_warning(&self, model: &str) -> Option<String> {
        let mut warned = self.unpriced.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !warned.insert(model.to_string()) {
            return None;
        }
        Some(if model.is_empty() {
            "Codex: cannot tell which model the turn ran on, so its cost counts as $0 (name the model in the state)"
                .to_string()
        } else {
            format!(
                "Codex: no price for model `{model}`, so its turns cost $0 in this run (add it to .baton/prices.toml; \
                 see docs/backends.md)"
            )
        })
    }
}

impl Backend for CodexBackend {
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
            // A broken price table is the project's to fix, like a broken option.
            let prices = self.prices.as_ref().map_err(|error| BackendError::Refused(error.clone()))?;
            let problem = self.version_problem.get_or_init(|| super::version::check(&binary)).await;
            if let Some(problem) = problem {
                return Err(BackendError::NotAvailable(problem.clone()));
            }
            let options = CodexOptions::from_values(&request.options)
                .map_err(|error| BackendError::Refused(format!("Invalid YAML frontmatter: {error}")))?
                .resolve_paths(&request.cwd);
            // Lives until the process has read it.
            let schema_file = match &options.output_schema {
                Some(schema) => Some(write_schema(schema).map_err(|error| BackendError::Failed {
                    message: format!("cannot write the state's output_schema for Codex: {error}"),
                    cost_usd: 0.0,
                })?),
                None => None,
            };
            let continued = match &request.session {
                SessionMode::Resume(thread) | SessionMode::ForkFrom(thread) | SessionMode::ForkAt(thread, _) => {
                    Some(thread.to_string())
                }
                SessionMode::Fresh | SessionMode::ContinueAndFork => None,
            };
            let home = codex_home(&request.env);
            let baseline = continued.as_deref().map(|thread| {
                let recorded = home.as_deref().and_then(|home| facts_of(home, thread)).and_then(|facts| facts.totals);
                (thread, recorded.or_else(|| self.seen.get(thread)))
            });
            let command = CodexCommand {
                permissions: Permissions::choose(&options, self.skip_permissions),
                model: request.model.clone(),
                effort: request.effort.clone(),
                session: request.session.clone(),
                schema_file: schema_file.as_ref().map(|file| file.path().to_path_buf()),
                options,
            };
            let arguments = command.arguments();
            let mut reader = StreamReader::new();
            let turn = CliTurn { cli: "Codex", program: &binary, arguments: &arguments, env_remove: &[] };
            let exit = run_turn(turn, &request, &mut reader, on_event, stop, watchdog).await?;
            drop(schema_file);
            let summary = reader.finish();
            // The step's time zone reads a reset time ("resets 3pm") in a usage-limit
            // message; only then is it looked up: the system's costs a listing of
            // /usr/share/zoneinfo, about a millisecond.
            let now = || {
                let zone = request
                    .env
                    .get("TZ")
                    .and_then(|zone| TimeZone::get(zone.trim_start_matches(':')).ok())
                    .unwrap_or_else(TimeZone::system);
                Zoned::now().with_time_zone(zone)
            };
            if let Err(error) = classify(&summary, &exit, now) {
                return Err(match error {
                    BackendError::Failed { message, .. } => {
                        let cost_usd =
                            self.failed_turn_cost(&summary, home.as_deref(), baseline, &request.model, prices);
                        BackendError::Failed { message, cost_usd }
                    }
                    other => other,
                });
            }
            let Some(thread) = summary.thread_id.clone() else {
                let message = "Codex finished its turn without a `thread.started` event: expected the thread's id, to \
                               continue it"
                    .to_string();
                return Err(BackendError::Failed { message, cost_usd: 0.0 });
            };
            let totals = summary.thread_totals.unwrap_or_default();
            let tokens = match baseline {
                Some((_, Some(before))) => totals.since(before),
                Some((from, None)) => {
                    on_event(BackendEvent::Progress(format!(
                        "Codex: no earlier token count of thread {from} was found (under {}), so this turn counts \
                         the thread's whole usage",
                        home.as_deref().map_or_else(|| "no CODEX_HOME".to_string(), |home| home.display().to_string())
                    )));
                    totals
                }
                None => totals,
            };
            self.seen.record(thread.as_ref(), totals);
            let model = if request.model.is_empty() {
                home.as_deref()
                    .and_then(|home| facts_of(home, thread.as_ref()))
                    .and_then(|facts| facts.model)
                    .unwrap_or_default()
            } else {
                request.model.clone()
            };
            let cost_usd = match prices.cost(&model, tokens) {
                Some(cost) => cost,
                None => {
                    if let Some(warning) = self.unpriced_warning(&model) {
                        on_event(BackendEvent::Progress(warning));
                    }
                    0.0
                }
            };
            let structured_output = command
                .schema_file
                .is_some()
                .then(|| serde_json::from_str::<serde_json::Value>(summary.text.trim()).ok())
                .flatten()
                .map(|value| value.to_string());
            if summary.text.trim().is_empty() {
                let message = "Codex finished its turn without an agent message".to_string();
                return Err(BackendError::Failed { message, cost_usd });
            }
            Ok(BackendResponse {
                text: summary.text,
                session_id: Some(thread),
                message_uuid: None,
                cost_usd,
                input_tokens: tokens.input,
                output_tokens: tokens.output,
                structured_output,
            })
        })
    }
}

/// The failures a finished `codex exec` can report; `Ok` for a completed turn.
fn classify(summary: &StreamSummary, exit: &CliExit, now: impl FnOnce() -> Zoned) -> Result<(), BackendError> {
    let failed_exit = exit.exit_code != Some(0);
    let finished = summary.completed && summary.failure.is_none() && !failed_exit;
    // Only a turn that did not finish can have hit a limit: a finished one may
    // still mention limits in passing.
    let limit = summary
        .failure
        .iter()
        .chain(summary.errors.iter())
        .chain(failed_exit.then_some(&exit.stderr))
        .filter(|_| !finished)
        .find(|text| is_usage_limit_text(text));
    if let Some(text) = limit {
        let resets_at = parse_reset(text, &now()).map(|timestamp| timestamp.as_second());
        return Err(BackendError::UsageLimit { message: head(text.trim(), MESSAGE_CHARS), resets_at });
    }
    if let Some(failure) = &summary.failure {
        let code = exit_phrase(exit.exit_code);
        let why = if failure.is_empty() { "no message" } else { failure.as_str() };
        let message = format!("Codex's turn failed ({code}): {}", head(why, MESSAGE_CHARS));
        return Err(BackendError::Failed { message, cost_usd: 0.0 });
    }
    let stderr = stderr_detail(&exit.stderr);
    if failed_exit && let Some(line) = stderr.lines().find(|line| line.contains("no rollout found for thread id")) {
        // Every retry would fail alike: the thread is gone (or CODEX_HOME is another).
        return Err(BackendError::Refused(format!(
            "Codex cannot continue the agent's thread: {}; check that CODEX_HOME is the one the thread was made under",
            head(line.trim(), MESSAGE_CHARS)
        )));
    }
    if failed_exit {
        let detail = match summary.errors.last().filter(|error| !error.is_empty()) {
            Some(error) => head(error, MESSAGE_CHARS),
            None if !stderr.is_empty() => head(&stderr, MESSAGE_CHARS),
            None => "no error event and an empty stderr".to_string(),
        };
        let message = format!("Codex {}: {detail}{}", exit_phrase(exit.exit_code), exit.malformed.note());
        return Err(BackendError::Failed { message, cost_usd: 0.0 });
    }
    if !summary.completed {
        let last_error = summary
            .errors
            .last()
            .map(|error| format!("; its last error: {}", head(error, MESSAGE_CHARS)))
            .unwrap_or_default();
        let message = format!(
            "Codex exited without finishing its turn: expected a `turn.completed` or `turn.failed` event{last_error}{}",
            exit.malformed.note()
        );
        return Err(BackendError::Failed { message, cost_usd: 0.0 });
    }
    Ok(())
}

/// Codex's stderr without its backtrace and the warnings it prints on every run.
fn stderr_detail(stderr: &str) -> String {
    let before_backtrace = stderr.split("Stack backtrace:").next().unwrap_or_default();
    before_backtrace
        .lines()
        .filter(|line| !line.starts_with("WARNING: proceeding, even though we could not create PATH aliases"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

fn exit_phrase(code: Option<i32>) -> String {
    code.map_or_else(|| "was killed by a signal".to_string(), |code| format!("exited with code {code}"))
}

fn facts_of(home: &Path, thread: &str) -> Option<RolloutFacts> {
    let path = rollout_file(home, thread)?;
    match rollout_facts(&path) {
        Ok(facts) => Some(facts),
        Err(error) => {
            tracing::debug!(path = %path.display(), %error, "cannot read a Codex rollout file");
            None
        }
    }
}

fn write_schema(schema: &str) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write;
    let mut file = tempfile::Builder::new().prefix("baton-codex-schema-").suffix(".json").tempfile()?;
    file.write_all(schema.as_bytes())?;
    file.flush()?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::jsonl_process::MalformedLines;

    fn exit(code: i32, stderr: &str) -> CliExit {
        CliExit { exit_code: Some(code), stderr: stderr.to_string(), malformed: MalformedLines::default() }
    }

    fn now() -> Zoned {
        "2026-11-25T07:30:00[UTC]".parse().unwrap()
    }

    fn message(result: Result<(), BackendError>) -> String {
        match result {
            Err(BackendError::Failed { message, .. }) => message,
            other => panic!("expected Failed, got {other:?}"),
        }
    }

    #[test]
    fn a_usage_limit_pauses_with_its_reset() {
        let summary = StreamSummary {
            failure: Some("You’ve hit your usage limit. Try again at 9:46 AM.".into()),
            ..StreamSummary::default()
        };
        assert_eq!(
            classify(&summary, &exit(1, ""), now),
            Err(BackendError::UsageLimit {
                message: "You’ve hit your usage limit. Try again at 9:46 AM.".into(),
                resets_at: Some(1_795_599_960)
            })
        );
    }

    #[test]
    fn a_failed_turn_is_retryable_and_quotes_codex_even_after_exit_0() {
        let summary = StreamSummary { failure: Some("stream disconnected".into()), ..StreamSummary::default() };
        assert_eq!(
            message(classify(&summary, &exit(0, ""), now)),
            "Codex's turn failed (exited with code 0): stream disconnected"
        );
    }

    #[test]
    fn a_stream_without_turn_completed_names_the_events_expected() {
        let mut exit = exit(0, "");
        exit.malformed = MalformedLines { count: 1, first: Some("garbage".into()) };
        let summary = StreamSummary { errors: vec!["Reconnecting... 1/5".into()], ..StreamSummary::default() };
        assert_eq!(
            message(classify(&summary, &exit, now)),
            "Codex exited without finishing its turn: expected a `turn.completed` or `turn.failed` event; its last \
             error: Reconnecting... 1/5 (1 line of its output was not JSON objects; the first: \"garbage\")"
        );
    }

    #[test]
    fn a_finished_turn_that_mentions_a_limit_is_a_finished_turn() {
        let summary = StreamSummary {
            completed: true,
            errors: vec!["You’ve hit your usage limit for the fast model; switching models.".into()],
            ..StreamSummary::default()
        };
        assert_eq!(classify(&summary, &exit(0, ""), now), Ok(()));
    }

    #[test]
    fn a_thread_codex_has_no_record_of_pauses_at_once() {
        let stderr = "WARNING: proceeding, even though we could not create PATH aliases: x\nError: thread/resume: \
                      thread/resume failed: no rollout found for thread id t-9 (code -32600)\n\nStack backtrace:\n   0: \
                      <unknown>\n";
        assert_eq!(
            classify(&StreamSummary::default(), &exit(1, stderr), now),
            Err(BackendError::Refused(
                "Codex cannot continue the agent's thread: Error: thread/resume: thread/resume failed: no rollout \
                 found for thread id t-9 (code -32600); check that CODEX_HOME is the one the thread was made under"
                    .into()
            ))
        );
        assert_eq!(stderr_detail("Error: boom\n\nStack backtrace:\n   0: <unknown>\n"), "Error: boom");
    }

    #[test]
    fn a_non_zero_exit_quotes_stderr() {
        assert_eq!(
            message(classify(&StreamSummary::default(), &exit(2, "error: unexpected argument '--bogus'\n"), now)),
            "Codex exited with code 2: error: unexpected argument '--bogus'"
        );
    }
}
