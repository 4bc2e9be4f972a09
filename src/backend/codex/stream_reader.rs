//! Reading `codex exec --json` events (Codex 0.169): one JSON object a line.
//!
//! - `thread.started {thread_id}`: the thread this turn ran in (a new one for a
//!   fresh or forked turn, the same one for `resume`);
//! - `turn.started`, then `item.started`/`item.completed {item}` with `item.type`
//!   `agent_message` (text: the turn's answer is the last one), `reasoning`,
//!   `command_execution` (a shell command, `exit_code`), `file_change`,
//!   `mcp_tool_call`, `web_search`, `todo_list`, or `error` — a warning such as
//!   "Model metadata for `…` not found", after which the turn goes on;
//! - `turn.completed {usage}`: the thread's token counts *so far* (cumulative
//!   over every turn of the thread, and for a fork its parent's too:
//!   `thread_usage` takes the difference), or `turn.failed {error: {message}}`;
//! - `error {message}`: a failure (or a retry notice) at the stream's level.
//!
//! Unknown event and item types are passed over, so a newer Codex that adds some
//! still works.

use serde_json::Value;

use crate::backend::codex::thread_usage::TokenTotals;
use crate::backend::stream::{StreamRead, StreamSignal, first_line, string_at, text_signals};
use crate::ids::SessionId;

/// What the whole stream said.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct StreamSummary {
    pub(crate) thread_id: Option<SessionId>,
    /// The last agent message: the turn's answer.
    pub(crate) text: String,
    /// `turn.completed`'s usage: the thread's totals, not this turn's.
    pub(crate) thread_totals: Option<TokenTotals>,
    pub(crate) completed: bool,
    /// `turn.failed`'s message.
    pub(crate) failure: Option<String>,
    /// `error` events' messages, in order.
    pub(crate) errors: Vec<String>,
}

#[derive(Default)]
pub(crate) struct StreamReader {
    summary: StreamSummary,
}

impl StreamReader {
    pub(crate) fn new() -> StreamReader {
        StreamReader::default()
    }

    fn item_started(&mut self, item: &Value, signals: &mut Vec<StreamSignal>) {
        if string_at(item, "type") == Some("command_execution") {
            let command = string_at(item, "command").unwrap_or_default();
            signals.push(StreamSignal::Tool { name: "shell".into(), detail: command.to_string() });
        }
    }

    fn item_completed(&mut self, item: &Value, signals: &mut Vec<StreamSignal>) {
        match string_at(item, "type") {
            Some("agent_message") => {
                let text = string_at(item, "text").unwrap_or_default();
                self.summary.text = text.to_string();
                text_signals(text, signals);
            }
            Some("command_execution") => {
                let command = string_at(item, "command").unwrap_or_default();
                let exit_code = item.get("exit_code").and_then(Value::as_i64);
                let status = string_at(item, "status").unwrap_or_default();
                if exit_code.is_some_and(|code| code != 0) || matches!(status, "failed" | "declined") {
                    let output = string_at(item, "aggregated_output").unwrap_or_default();
                    let why = exit_code.map_or_else(|| status.to_string(), |code| format!("exit code {code}"));
                    // The last line: where a failing command usually says why.
                    let tail = output
                        .lines()
                        .map(str::trim)
                        .rfind(|line| !line.is_empty())
                        .map(|line| format!(": {line}"))
                        .unwrap_or_default();
                    signals.push(StreamSignal::ToolError(format!("`{command}` failed ({why}){tail}")));
                }
            }
            Some("file_change") => {
                let paths: Vec<&str> = item
                    .get("changes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|change| string_at(change, "path"))
                    .collect();
                signals.push(StreamSignal::Tool { name: "file_change".into(), detail: paths.join(", ") });
                if string_at(item, "status") == Some("failed") {
                    signals.push(StreamSignal::ToolError(format!("changing {} failed", paths.join(", "))));
                }
            }
            Some("mcp_tool_call") => {
                let server = string_at(item, "server").unwrap_or("?");
                let tool = string_at(item, "tool").unwrap_or("?");
                signals.push(StreamSignal::Tool { name: format!("mcp:{server}/{tool}"), detail: String::new() });
                if string_at(item, "status") == Some("failed") {
                    let message = item.get("error").and_then(|error| string_at(error, "message")).unwrap_or("failed");
                    signals.push(StreamSignal::ToolError(format!("{server}/{tool}: {message}")));
                }
            }
            Some("web_search") => {
                let query = string_at(item, "query").unwrap_or_default();
                signals.push(StreamSignal::Tool { name: "web_search".into(), detail: query.to_string() });
            }
            Some("error") => {
                // A warning: the turn goes on ("Model metadata for `…` not found").
                let message = string_at(item, "message").unwrap_or_default();
                if let Some(line) = first_line(message) {
                    signals.push(StreamSignal::Progress(format!("Codex warning: {line}")));
                }
            }
            _ => {}
        }
    }
}

impl StreamRead for StreamReader {
    type Summary = StreamSummary;

    /// Take one event; returns what to report now.
    fn push(&mut self, object: &Value) -> Vec<StreamSignal> {
        let mut signals = Vec::new();
        match string_at(object, "type") {
            Some("thread.started") => {
                self.summary.thread_id = string_at(object, "thread_id").map(SessionId::from);
            }
            Some("item.started") => {
                if let Some(item) = object.get("item") {
                    self.item_started(item, &mut signals);
                }
            }
            Some("item.completed") => {
                if let Some(item) = object.get("item") {
                    self.item_completed(item, &mut signals);
                }
            }
            Some("turn.completed") => {
                self.summary.completed = true;
                self.summary.thread_totals = object.get("usage").map(TokenTotals::from_usage);
            }
            Some("turn.failed") => {
                let message = object.get("error").and_then(|error| string_at(error, "message")).unwrap_or_default();
                self.summary.failure = Some(message.trim().to_string());
            }
            Some("error") => {
                let message = string_at(object, "message").unwrap_or_default().trim().to_string();
                if let Some(line) = first_line(&message) {
                    signals.push(StreamSignal::Progress(format!("Codex: {line}")));
                }
                self.summary.errors.push(message);
            }
            _ => {}
        }
        signals
    }

    fn finish(self) -> StreamSummary {
        self.summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::stream::{fixture_objects, read_fixture};

    fn read(name: &str) -> (StreamSummary, Vec<StreamSignal>) {
        read_fixture::<StreamReader>("codex", name)
    }

    #[test]
    fn a_plain_turn_gives_its_thread_answer_and_the_threads_totals() {
        let (summary, signals) = read("01_plain.jsonl");
        let first = fixture_objects("codex", "01_plain.jsonl").into_iter().next().expect("a line");
        assert_eq!(summary.thread_id.as_ref().map(ToString::to_string).as_deref(), first["thread_id"].as_str());
        assert_eq!(summary.text, "Hello from fake. <goto>NEXT.md</goto>");
        assert!(summary.completed && summary.failure.is_none());
        assert_eq!(summary.thread_totals, Some(TokenTotals { input: 10, cached_input: 2, output: 5 }));
        assert!(signals.contains(&StreamSignal::AssistantText("Hello from fake. <goto>NEXT.md</goto>".into())));
    }

    #[test]
    fn a_model_metadata_error_item_is_a_warning_not_a_failure() {
        let (summary, signals) = read("01_plain.jsonl");
        assert!(summary.errors.is_empty() && summary.failure.is_none());
        assert!(signals.iter().any(|signal| matches!(signal, StreamSignal::Progress(text)
            if text.starts_with("Codex warning: Model metadata for `gpt-5-codex` not found"))));
    }

    #[test]
    fn a_command_is_reported_as_a_shell_tool_and_a_resumed_threads_totals_are_cumulative() {
        let (summary, signals) = read("02_resume_tool_call.jsonl");
        assert!(signals.contains(&StreamSignal::Tool {
            name: "shell".into(),
            detail: "/bin/bash -lc 'echo hi > out.txt; echo done'".into()
        }));
        assert!(!signals.iter().any(|signal| matches!(signal, StreamSignal::ToolError(_))));
        // 10/5 of the first turn, then two calls of 10/5 in this one.
        assert_eq!(summary.thread_totals, Some(TokenTotals { input: 30, cached_input: 6, output: 15 }));
    }

    #[test]
    fn a_fork_starts_a_new_thread_that_carries_its_parents_totals() {
        let (parent, _) = read("02_resume_tool_call.jsonl");
        let (fork, _) = read("03_fork.jsonl");
        assert_ne!(fork.thread_id, parent.thread_id);
        assert_eq!(fork.thread_totals, Some(TokenTotals { input: 40, cached_input: 8, output: 20 }));
    }

    #[test]
    fn a_failed_turn_keeps_its_message() {
        let (summary, _) = read("05_bad_request.jsonl");
        assert!(!summary.completed);
        assert!(summary.failure.as_deref().is_some_and(|message| message.contains("Bad thing in request")));
        assert_eq!(summary.errors.len(), 1);
        let (limit, _) = read("04_usage_limit.jsonl");
        assert_eq!(limit.failure.as_deref(), Some("You’ve hit your usage limit. Try again at Nov 28th, 2026 9:06 PM."));
    }

    #[test]
    fn a_failing_command_is_a_tool_error_and_unknown_events_are_passed_over() {
        let mut reader = StreamReader::new();
        assert!(reader.push(&serde_json::json!({"type": "brand.new", "x": [1]})).is_empty());
        assert!(reader.push(&serde_json::json!({"type": "item.completed", "item": {"type": "new_item"}})).is_empty());
        let signals = reader.push(&serde_json::json!({"type": "item.completed", "item": {"type": "command_execution",
            "command": "false", "aggregated_output": "noise\nnope\n", "exit_code": 1, "status": "failed"}}));
        assert_eq!(signals, [StreamSignal::ToolError("`false` failed (exit code 1): nope".into())]);
        assert_eq!(reader.finish(), StreamSummary::default());
    }
}
