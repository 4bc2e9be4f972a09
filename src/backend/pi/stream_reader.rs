//! Interpreting `pi --mode json` events, one object at a time.
//!
//! pi 0.73 prints `session {id}`, then per agent run `agent_start`,
//! `turn_start`, `message_start`/`message_update`/`message_end` (user, assistant
//! and `toolResult` messages), `tool_execution_start`/`_update`/`_end`,
//! `turn_end` and `agent_end`. When the provider fails, pi retries on its own
//! (`auto_retry_start` … `auto_retry_end`), running the agent again in the same
//! process, so a stream may hold several `agent_end`s; the last assistant
//! message decides how the turn ended.
//!
//! The stream holds only this turn's messages, also after `--session` or
//! `--fork` (a fork's copied history is not replayed), and every assistant
//! message's `message_end` carries its own `usage` with `cost.total` in USD: the
//! turn's cost and tokens are their sum, so a forked child never re-charges
//! its caller's history (raymond reads the session file and subtracts instead).
//! Unknown event types and fields are ignored.

use serde_json::Value;

use crate::backend::stream::{StreamRead, StreamSignal, file_name, number_at, string_at, text_signals};
use crate::ids::SessionId;

/// What one invocation's stream said, once it is over.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct StreamSummary {
    /// The `session` event's id: the conversation the turn ran in (a new one
    /// for a fresh turn or a fork).
    pub(crate) session_id: Option<SessionId>,
    /// Whether an `agent_end` arrived at all.
    pub(crate) saw_agent_end: bool,
    /// The text of the last assistant message.
    pub(crate) text: String,
    /// The last assistant message's `stopReason` (`stop`, `toolUse`, `length`,
    /// `error`, `aborted`).
    pub(crate) stop_reason: Option<String>,
    /// The last assistant message's `errorMessage`.
    pub(crate) error_message: Option<String>,
    /// How many times pi retried the provider (`auto_retry_start` events).
    pub(crate) retries: u32,
    /// The sum of every assistant message's `usage.cost.total`.
    pub(crate) cost_usd: f64,
    /// The sum of every assistant message's input (fresh + cache reads + cache
    /// writes) and output tokens.
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
}

impl StreamSummary {
    /// Whether the last assistant message ended with an error (the provider
    /// failed, or the run was aborted).
    pub(crate) fn ended_in_error(&self) -> bool {
        matches!(self.stop_reason.as_deref(), Some("error" | "aborted"))
    }
}

#[derive(Default)]
pub(crate) struct StreamReader {
    summary: StreamSummary,
}

/// The text parts of a message's content, joined.
fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|part| string_at(part, "type") == Some("text"))
            .filter_map(|part| string_at(part, "text"))
            .collect(),
        _ => String::new(),
    }
}

/// The detail shown for a tool call: a file's name for file tools, the command for bash.
fn tool_detail(name: &str, args: &Value) -> String {
    match name {
        "read" | "write" | "edit" => {
            string_at(args, "path").or_else(|| string_at(args, "file_path")).map(file_name).unwrap_or_default()
        }
        "bash" => string_at(args, "command").unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

impl StreamReader {
    pub(crate) fn new() -> StreamReader {
        StreamReader::default()
    }

    fn assistant(&mut self, message: &Value, signals: &mut Vec<StreamSignal>) {
        let text = message_text(message);
        // A message of tool calls alone has no text to show.
        if !text.is_empty() {
            text_signals(&text, signals);
        }
        let summary = &mut self.summary;
        summary.text = text;
        summary.stop_reason = string_at(message, "stopReason").map(str::to_string);
        summary.error_message = string_at(message, "errorMessage").map(str::to_string);
        if let Some(usage) = message.get("usage").filter(|usage| usage.is_object()) {
            summary.cost_usd +=
                usage.get("cost").and_then(|cost| cost.get("total")).and_then(Value::as_f64).unwrap_or(0.0);
            summary.input_tokens +=
                number_at(usage, "input") + number_at(usage, "cacheRead") + number_at(usage, "cacheWrite");
            summary.output_tokens += number_at(usage, "output");
        }
    }
}

impl StreamRead for StreamReader {
    type Summary = StreamSummary;

    /// Take in the next object of the stream.
    fn push(&mut self, object: &Value) -> Vec<StreamSignal> {
        let mut signals = Vec::new();
        match string_at(object, "type") {
            Some("session") => {
                if let Some(id) = string_at(object, "id").filter(|id| !id.is_empty()) {
                    self.summary.session_id = Some(SessionId::from(id));
                }
            }
            Some("message_end") => {
                if let Some(message) =
                    object.get("message").filter(|message| string_at(message, "role") == Some("assistant"))
                {
                    self.assistant(message, &mut signals);
                }
            }
            Some("tool_execution_start") => {
                let name = string_at(object, "toolName").unwrap_or("?").to_string();
                let detail = tool_detail(&name, object.get("args").unwrap_or(&Value::Null));
                signals.push(StreamSignal::Tool { name, detail });
            }
            Some("tool_execution_end") if object.get("isError").and_then(Value::as_bool) == Some(true) => {
                let result = object.get("result").unwrap_or(&Value::Null);
                let text = match result {
                    Value::String(text) => text.clone(),
                    other => message_text(other),
                };
                signals.push(StreamSignal::ToolError(text));
            }
            Some("agent_end") => self.summary.saw_agent_end = true,
            Some("auto_retry_start") => self.summary.retries += 1,
            _ => {}
        }
        signals
    }

    /// The summary of everything pushed.
    fn finish(self) -> StreamSummary {
        self.summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::stream::read_fixture;

    fn read(name: &str) -> (StreamSummary, Vec<StreamSignal>) {
        read_fixture::<StreamReader>("pi", name)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn a_plain_turn_gives_its_text_session_cost_and_tokens() {
        let (summary, signals) = read("01_plain.jsonl");
        assert!(summary.saw_agent_end);
        assert_eq!(summary.text, "Done.\n<result>ok</result>");
        assert_eq!(summary.stop_reason.as_deref(), Some("stop"));
        assert!(!summary.ended_in_error());
        assert!(summary.session_id.is_some());
        // 1000 tokens in at $3/M and 100 out at $15/M (the fake model's prices).
        assert!(close(summary.cost_usd, 0.0045), "{}", summary.cost_usd);
        assert_eq!((summary.input_tokens, summary.output_tokens), (1000, 100));
        assert_eq!(
            signals,
            [StreamSignal::Progress("Done.".into()), StreamSignal::AssistantText("Done.\n<result>ok</result>".into())]
        );
    }

    /// The stream of a `--session` or `--fork` turn holds only its own messages,
    /// so the turn's cost is its own: a forked `<call>` child does not re-charge
    /// the caller's history (raymond subtracts the session file's earlier total).
    #[test]
    fn a_continued_or_forked_turn_costs_only_its_own_messages() {
        let (start, _) = read("02a_start.jsonl");
        let (resumed, _) = read("02b_session.jsonl");
        let (forked, _) = read("02c_fork.jsonl");
        assert_eq!(resumed.session_id, start.session_id, "--session continues the session");
        assert!(forked.session_id.is_some() && forked.session_id != start.session_id, "--fork makes a new one");
        for summary in [&start, &resumed, &forked] {
            assert!(close(summary.cost_usd, 0.0045), "{}", summary.cost_usd);
            assert_eq!((summary.input_tokens, summary.output_tokens), (1000, 100));
        }
    }

    #[test]
    fn tool_rounds_add_up_and_the_last_message_is_the_text() {
        let (summary, signals) = read("03_tool.jsonl");
        assert_eq!(summary.text, "Wrote it.\n<result>wrote</result>");
        assert!(close(summary.cost_usd, 2.0 * 0.0045), "{}", summary.cost_usd);
        assert_eq!((summary.input_tokens, summary.output_tokens), (2000, 200));
        let tools: Vec<(&str, &str)> = signals
            .iter()
            .filter_map(|signal| match signal {
                StreamSignal::Tool { name, detail } => Some((name.as_str(), detail.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(tools, [("write", "made.txt")]);
    }

    #[test]
    fn a_failed_tool_call_is_a_tool_error() {
        let (_, signals) = read("04_tool_error.jsonl");
        assert!(
            signals.iter().any(|signal| matches!(signal, StreamSignal::ToolError(text) if text.contains("ENOENT"))),
            "{signals:?}"
        );
    }

    #[test]
    fn a_provider_error_ends_the_turn_in_error_with_its_message() {
        let (summary, _) = read("05_http_429.jsonl");
        assert!(summary.saw_agent_end);
        assert!(summary.ended_in_error());
        assert_eq!(summary.text, "");
        let message = summary.error_message.expect("an errorMessage");
        assert!(message.starts_with("429 "), "{message}");
    }

    #[test]
    fn pis_own_retries_are_counted_and_the_last_attempt_decides() {
        let (summary, _) = read("06_retried_then_ok.jsonl");
        assert_eq!(summary.retries, 1);
        assert!(!summary.ended_in_error());
        assert_eq!(summary.text, "<result>after retry</result>");
    }

    #[test]
    fn unknown_types_and_fields_are_ignored() {
        let mut reader = StreamReader::new();
        assert!(reader.push(&serde_json::json!({"type": "brand_new", "whatever": [1, 2]})).is_empty());
        assert!(reader.push(&serde_json::json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "hi"}], "new": 1}})).len() == 2);
        let summary = reader.finish();
        assert_eq!(summary.text, "hi");
        assert!(!summary.saw_agent_end);
    }
}
