//! Interpreting Claude Code's stream-json, one object at a time (R12.6–R12.10,
//! decision A15).
//!
//! Unknown object types and fields are ignored: Claude Code adds new ones, and a
//! parser that rejected them would break with every release. What matters is
//! extracted into a [`StreamSummary`]; what a person may want to watch live comes
//! out as [`StreamSignal`]s while the stream is read.

use serde_json::Value;

use crate::backend::stream::{StreamRead, StreamSignal, file_name, number_at, string_at, text_signals};
use crate::ids::SessionId;

/// A usage limit reported by structured fields (A15), before any text matching.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct LimitSignal {
    /// `rate_limit_event.rate_limit_info.resetsAt`, epoch seconds.
    pub(crate) resets_at: Option<i64>,
    /// The synthetic assistant message's text.
    pub(crate) message: Option<String>,
}

/// What one invocation's stream said, once it is over.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct StreamSummary {
    /// The last non-empty session id seen (R12.6).
    pub(crate) session_id: Option<SessionId>,
    /// The `uuid` of the last assistant message: where the session stood after the
    /// turn (`--resume-session-at` can cut a session back to it).
    pub(crate) message_uuid: Option<String>,
    /// Every `result` string, concatenated; the assistant text when there is none (R12.9).
    pub(crate) text: String,
    /// Whether a `result` object arrived at all.
    pub(crate) saw_result: bool,
    /// The result object's `is_error`.
    pub(crate) is_error: bool,
    /// The result object's `api_error_status`.
    pub(crate) api_error_status: Option<u64>,
    /// This invocation's cost ([`invocation_cost`] of the last object that gives one).
    pub(crate) cost_usd: f64,
    /// Input tokens (fresh + cache creation + cache reads) and output tokens of the last `usage`.
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    /// Set when a structured signal reported a usage limit.
    pub(crate) limit: Option<LimitSignal>,
    /// The result object's `subtype` (`success`, `error_max_turns`, …).
    pub(crate) subtype: Option<String>,
    /// The result object's `errors` (e.g. "Reached maximum number of turns (2)").
    pub(crate) errors: Vec<String>,
    /// The result object's `structured_output` (a turn run with `--json-schema`), when not null.
    pub(crate) structured_output: Option<Value>,
}

#[derive(Default)]
pub(crate) struct StreamReader {
    summary: StreamSummary,
    results: Vec<String>,
    assistant_text: Vec<String>,
}

fn strip_tool_error(text: &str) -> String {
    match (text.find("<tool_use_error>"), text.find("</tool_use_error>")) {
        (Some(start), Some(end)) if start < end => text[start + "<tool_use_error>".len()..end].to_string(),
        _ => text.to_string(),
    }
}

/// The detail shown for a tool call: a file's name for file tools, the command for Bash.
fn tool_detail(name: &str, input: &Value) -> String {
    match name {
        "Read" | "Write" | "Edit" => string_at(input, "file_path").map(file_name).unwrap_or_default(),
        "Bash" => string_at(input, "command").unwrap_or_default().to_string(),
        _ => String::new(),
    }
}

impl StreamReader {
    pub(crate) fn new() -> StreamReader {
        StreamReader::default()
    }

    fn assistant(&mut self, object: &Value, signals: &mut Vec<StreamSignal>) {
        if let Some(uuid) = string_at(object, "uuid") {
            self.summary.message_uuid = Some(uuid.to_string());
        }
        let mut text_of_message = String::new();
        for block in content_blocks(object) {
            match string_at(block, "type") {
                Some("text") => {
                    let text = string_at(block, "text").unwrap_or_default();
                    text_of_message.push_str(text);
                    self.assistant_text.push(text.to_string());
                    text_signals(text, signals);
                }
                Some("tool_use") => {
                    let name = string_at(block, "name").unwrap_or("?").to_string();
                    let detail = tool_detail(&name, block.get("input").unwrap_or(&Value::Null));
                    signals.push(StreamSignal::Tool { name, detail });
                }
                _ => {}
            }
        }
        if let Some(content) = object.get("message").and_then(|message| message.get("content")).and_then(Value::as_str)
        {
            self.assistant_text.push(content.to_string());
        }
        // The synthetic message Claude Code writes for an API error names its kind (A15).
        if string_at(object, "error") == Some("rate_limit") {
            let limit = self.summary.limit.get_or_insert_with(LimitSignal::default);
            limit.message = Some(text_of_message);
        }
    }
}

impl StreamRead for StreamReader {
    type Summary = StreamSummary;

    /// Take in the next object of the stream.
    fn push(&mut self, object: &Value) -> Vec<StreamSignal> {
        let mut signals = Vec::new();
        let session = string_at(object, "session_id")
            .or_else(|| object.get("metadata").and_then(|metadata| string_at(metadata, "session_id")));
        if let Some(session) = session.filter(|session| !session.is_empty()) {
            self.summary.session_id = Some(SessionId::from(session));
        }
        if let Some(result) = string_at(object, "result") {
            self.results.push(result.to_string());
        }
        if let Some(cost) = invocation_cost(object) {
            self.summary.cost_usd = cost;
        }
        if let Some(usage) = object.get("usage").filter(|usage| usage.is_object()) {
            self.summary.input_tokens = number_at(usage, "input_tokens")
                + number_at(usage, "cache_creation_input_tokens")
                + number_at(usage, "cache_read_input_tokens");
            self.summary.output_tokens = number_at(usage, "output_tokens");
        }
        match string_at(object, "type") {
            Some("result") => {
                self.summary.saw_result = true;
                self.summary.is_error = object.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                self.summary.api_error_status = object.get("api_error_status").and_then(Value::as_u64);
                self.summary.subtype = string_at(object, "subtype").map(str::to_string);
                self.summary.errors = object
                    .get("errors")
                    .and_then(Value::as_array)
                    .map(|errors| errors.iter().filter_map(Value::as_str).map(str::to_string).collect())
                    .unwrap_or_default();
                self.summary.structured_output =
                    object.get("structured_output").filter(|value| !value.is_null()).cloned();
            }
            Some("rate_limit_event") => {
                let info = object.get("rate_limit_info");
                if info.and_then(|info| string_at(info, "status")) == Some("rejected") {
                    let limit = self.summary.limit.get_or_insert_with(LimitSignal::default);
                    limit.resets_at = info.and_then(|info| info.get("resetsAt")).and_then(Value::as_i64);
                }
            }
            Some("assistant") => self.assistant(object, &mut signals),
            Some("user") => {
                for block in content_blocks(object) {
                    if string_at(block, "type") == Some("tool_result")
                        && block.get("is_error").and_then(Value::as_bool) == Some(true)
                    {
                        signals.push(StreamSignal::ToolError(strip_tool_error(&block_text(block))));
                    }
                }
            }
            _ => {}
        }
        signals
    }

    /// The summary of everything pushed.
    fn finish(mut self) -> StreamSummary {
        self.summary.text = if self.results.is_empty() { self.assistant_text.concat() } else { self.results.concat() };
        self.summary
    }
}

fn content_blocks(object: &Value) -> impl Iterator<Item = &Value> {
    object.get("message").and_then(|message| message.get("content")).and_then(Value::as_array).into_iter().flatten()
}

/// What this invocation cost, from a `result` object: the one figure of Claude
/// Code's stream that Baton adds up for `cost_usd`, the run's total and `--budget`.
///
/// Claude Code 2.1.197 gives it as `total_cost_usd`. Newer versions (2.1.330) make
/// `total_cost_usd` the whole session's: every turn resumed before it, and for a
/// `--fork-session` the parent's turns too, so adding it up counts each API call
/// once per later turn of its session (ten 1¢ turns of one conversation would sum
/// to 55¢). They give this process's share per model in
/// `model_usage_since_last_result`, which is preferred when present. raymond adds
/// up `total_cost_usd` and so overstates a resumed session's spend
/// (`docs/decisions.md`, "Cost").
pub(crate) fn invocation_cost(object: &Value) -> Option<f64> {
    let since_last = object
        .get("model_usage_since_last_result")
        .and_then(Value::as_object)
        .map(|models| models.values().filter_map(|usage| usage.get("costUSD").and_then(Value::as_f64)).sum::<f64>());
    since_last.or_else(|| object.get("total_cost_usd").and_then(Value::as_f64))
}

fn block_text(block: &Value) -> String {
    match block.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts.iter().filter_map(|part| string_at(part, "text")).collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::stream::{fixture_objects, read_fixture};

    fn read(name: &str) -> (StreamSummary, Vec<StreamSignal>) {
        read_fixture::<StreamReader>("claude-streams", name)
    }

    #[test]
    fn the_invocations_own_cost_is_preferred_to_a_cumulative_session_total() {
        let newer = serde_json::json!({"type": "result", "total_cost_usd": 0.009,
            "model_usage_since_last_result": {"claude-sonnet-5-5": {"costUSD": 0.003}, "claude-haiku": {"costUSD": 0.001}}});
        assert_eq!(invocation_cost(&newer), Some(0.004));
        assert_eq!(invocation_cost(&serde_json::json!({"type": "result", "total_cost_usd": 0.0045})), Some(0.0045));
    }

    #[test]
    fn frame_types_it_does_not_know_are_passed_over() {
        let mut reader = StreamReader::new();
        let frames = [
            serde_json::json!({"type": "brand_new_frame", "payload": {"nested": [1, 2]}}),
            serde_json::json!({"type": "assistant", "message": {"content": [{"type": "new_block", "x": 1}, {"type": "text", "text": "hi <result>ok</result>"}]}}),
            serde_json::json!({"type": "result", "subtype": "success", "result": "hi <result>ok</result>", "session_id": "s", "total_cost_usd": 0.01}),
        ];
        for frame in &frames {
            reader.push(frame);
        }
        let summary = reader.finish();
        assert!(summary.saw_result && !summary.is_error);
        assert_eq!(summary.text, "hi <result>ok</result>");
    }

    #[test]
    fn r12_9_plain_text_result_cost_and_tokens() {
        let (summary, signals) = read("01_plain_text.jsonl");
        assert!(summary.saw_result);
        assert!(!summary.is_error);
        assert!(summary.session_id.is_some());
        assert!(summary.cost_usd > 0.0);
        assert!(summary.output_tokens > 0);
        assert!(!summary.text.is_empty());
        assert!(signals.iter().any(|signal| matches!(signal, StreamSignal::AssistantText(_))));
        assert_eq!(summary.limit, None);
    }

    #[test]
    fn r12_9_only_the_final_message_is_the_output_text() {
        let (summary, signals) = read("03_tool_use.jsonl");
        assert_eq!(summary.text, "All done.\n<goto>DONE.md</goto>");
        let tools: Vec<&str> = signals
            .iter()
            .filter_map(|signal| match signal {
                StreamSignal::Tool { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(tools, ["Bash", "Write", "Read"]);
        assert!(
            signals
                .iter()
                .any(|signal| matches!(signal, StreamSignal::ToolError(text) if text.contains("File does not exist")))
        );
    }

    #[test]
    fn r12_6_fork_session_reports_a_new_session_id() {
        let (start, _) = read("02a_session_start.jsonl");
        let (fork, _) = read("02c_resume_fork_session.jsonl");
        assert!(start.session_id.is_some() && fork.session_id.is_some());
        assert_ne!(start.session_id, fork.session_id);
    }

    /// Issue 19, item 8: raymond's budget stop read `$0.0022 > $0.0020` where Baton's
    /// read `$0.0021`. The recorded 2.1.330 streams show why: one session, three
    /// turns of 10 tokens in and 5 out each (a fresh turn, a `--resume`, then a
    /// `--resume --fork-session` of it); `total_cost_usd` is the session's running
    /// total, the fork's including its parent's turns, and each turn's own cost is
    /// `model_usage_since_last_result`.
    #[test]
    fn a_resumed_or_forked_sessions_turn_costs_its_own_api_calls_not_the_sessions_total() {
        let turn = 0.00007;
        let mut cumulative = Vec::new();
        for name in ["02a_session_start.jsonl", "02b_resume.jsonl", "02c_resume_fork_session.jsonl"] {
            let (summary, _) = read(name);
            assert!((summary.cost_usd - turn).abs() < 1e-12, "{name}: {}", summary.cost_usd);
            let result = fixture_objects("claude-streams", name)
                .into_iter()
                .find(|object| object["type"] == "result")
                .expect("a result line");
            cumulative.push(result["total_cost_usd"].as_f64().expect("a total"));
        }
        // What raymond adds up: 1 + 2 + 3 turns' worth for 3 turns.
        let expected = [turn, 2.0 * turn, 3.0 * turn];
        for (total, expected) in cumulative.iter().zip(expected) {
            assert!((total - expected).abs() < 1e-12, "{cumulative:?}");
        }
    }

    #[test]
    fn the_last_assistant_messages_uuid_is_where_the_session_stands() {
        let (summary, _) = read("02a_session_start.jsonl");
        assert_eq!(summary.message_uuid.as_deref(), Some("473bb127-c0dd-41e0-988a-e127fcba456c"));
    }

    #[test]
    fn a_result_without_a_result_key_is_an_error_with_empty_text() {
        let (summary, _) = read("02d_resume_unknown_session.jsonl");
        assert!(summary.saw_result);
        assert!(summary.is_error);
        assert_eq!(summary.text, "");
    }

    #[test]
    fn a15_subscriber_limit_is_detected_from_structured_signals() {
        let (summary, _) = read("04e_oauth_session_limit.jsonl");
        let limit = summary.limit.expect("limit");
        assert_eq!(limit.resets_at, Some(1795312800));
        // The wording changes between versions ("session limit", "5-hour limit").
        assert!(limit.message.is_some_and(|message| message.contains("You've hit your")));
    }

    #[test]
    fn api_errors_carry_their_status() {
        let (summary, _) = read("04b_400_error.jsonl");
        assert!(summary.is_error);
        assert_eq!(summary.api_error_status, Some(400));
        assert!(summary.text.starts_with("API Error: 400"), "{}", summary.text);
    }

    #[test]
    fn unknown_types_and_fields_are_ignored() {
        let mut reader = StreamReader::new();
        assert!(reader.push(&serde_json::json!({"type": "brand_new", "whatever": [1, 2]})).is_empty());
        assert!(reader.push(&serde_json::json!("not an object")).is_empty());
        assert_eq!(reader.finish().text, "");
    }

    #[test]
    fn the_result_objects_structured_output_subtype_and_errors_are_kept() {
        let mut reader = StreamReader::new();
        reader.push(&serde_json::json!({"type": "result", "subtype": "success", "is_error": false,
            "result": "{\"verdict\":\"ok\"}", "structured_output": {"verdict": "ok"}}));
        let summary = reader.finish();
        assert_eq!(summary.structured_output, Some(serde_json::json!({"verdict": "ok"})));
        assert_eq!(summary.subtype.as_deref(), Some("success"));
        let mut reader = StreamReader::new();
        reader.push(&serde_json::json!({"type": "result", "subtype": "error_max_turns", "is_error": true,
            "errors": ["Reached maximum number of turns (2)"], "structured_output": null}));
        let summary = reader.finish();
        assert_eq!(summary.structured_output, None);
        assert_eq!(summary.errors, ["Reached maximum number of turns (2)"]);
    }
}
