//! A pi turn as `baton logs --step` shows it: its `--mode json` events (as the
//! trace keeps them) turned into transcript entries — what pi said or thought,
//! each tool call with its arguments and result, pi's own retries, how the turn
//! ended with its cost and tokens — that `inspect::transcript` lays out like
//! Claude's. Only this folder reads pi's events.

use std::fmt::Write as _;

use serde_json::Value;

use crate::backend::transcript::Entry;

#[derive(Default)]
pub(crate) struct PiTranscript {
    /// The last assistant message's text, stop reason and error.
    last_text: String,
    stop_reason: String,
    error: Option<String>,
    cost_usd: f64,
    input_tokens: u64,
    output_tokens: u64,
}

fn text_at<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A tool's arguments as `key: value` lines, strings as they are.
fn arguments(args: &Value) -> String {
    let mut out = String::new();
    if let Some(fields) = args.as_object() {
        for (key, value) in fields {
            match value {
                Value::String(text) if text.contains('\n') => {
                    let _ = writeln!(out, "{key}:");
                    for line in text.lines() {
                        let _ = writeln!(out, "  {line}");
                    }
                }
                Value::String(text) => {
                    let _ = writeln!(out, "{key}: {text}");
                }
                other => {
                    let _ = writeln!(out, "{key}: {other}");
                }
            }
        }
    }
    out
}

/// The text parts of a tool result's or message's `content`.
fn content_text(value: &Value) -> String {
    match value.get("content") {
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|part| match part.get("text").and_then(Value::as_str) {
                Some(text) => text.to_string(),
                None => format!("[{}]", text_at(part, "type")),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::String(text)) => text.clone(),
        _ => String::new(),
    }
}

impl PiTranscript {
    /// What `object` adds to the transcript.
    pub(crate) fn add(&mut self, object: &Value) -> Vec<Entry> {
        match text_at(object, "type") {
            "session" => vec![Entry::Heading(format!("pi (session {})", text_at(object, "id")))],
            "message_end" => {
                let message = object.get("message").unwrap_or(&Value::Null);
                if text_at(message, "role") == "assistant" { self.assistant(message) } else { Vec::new() }
            }
            "tool_execution_end" => {
                let failed = object.get("isError").and_then(Value::as_bool) == Some(true);
                let result = object.get("result").unwrap_or(&Value::Null);
                let shown = match result {
                    Value::String(text) => text.clone(),
                    other => content_text(other),
                };
                let marker = if failed { " (error)" } else { "" };
                vec![
                    Entry::Heading(format!("result of {}{marker}", text_at(object, "toolName"))),
                    Entry::ToolOutput(shown),
                ]
            }
            "auto_retry_start" => vec![Entry::Heading(format!(
                "pi retries (attempt {} of {}): {}",
                object.get("attempt").and_then(Value::as_u64).unwrap_or(0),
                object.get("maxAttempts").and_then(Value::as_u64).unwrap_or(0),
                text_at(object, "errorMessage")
            ))],
            "agent_end" => {
                let mut ending = format!(
                    "turn ended: {}, ${:.4}; tokens {} in, {} out",
                    if self.stop_reason.is_empty() { "no answer" } else { &self.stop_reason },
                    self.cost_usd,
                    self.input_tokens,
                    self.output_tokens
                );
                if let Some(error) = &self.error {
                    let _ = write!(ending, ": {error}");
                }
                vec![Entry::Heading(ending), Entry::Answer(self.last_text.clone())]
            }
            _ => Vec::new(),
        }
    }

    fn assistant(&mut self, message: &Value) -> Vec<Entry> {
        let mut entries = Vec::new();
        let mut text = String::new();
        for part in message.get("content").and_then(Value::as_array).into_iter().flatten() {
            match text_at(part, "type") {
                "text" => {
                    let said = text_at(part, "text");
                    text.push_str(said);
                    entries.push(Entry::Said(said.to_string()));
                }
                "thinking" => {
                    entries.push(Entry::Heading("thinking".into()));
                    entries.push(Entry::Said(text_at(part, "thinking").to_string()));
                }
                "toolCall" => {
                    entries.push(Entry::Heading(format!("tool {}", text_at(part, "name"))));
                    entries.push(Entry::ToolOutput(arguments(part.get("arguments").unwrap_or(&Value::Null))));
                }
                _ => {}
            }
        }
        self.last_text = text;
        self.stop_reason = text_at(message, "stopReason").to_string();
        self.error = message.get("errorMessage").and_then(Value::as_str).map(str::to_string);
        if let Some(usage) = message.get("usage") {
            let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
            self.cost_usd +=
                usage.get("cost").and_then(|cost| cost.get("total")).and_then(Value::as_f64).unwrap_or(0.0);
            self.input_tokens += number("input") + number("cacheRead") + number("cacheWrite");
            self.output_tokens += number("output");
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(name: &str) -> Vec<Entry> {
        let mut transcript = PiTranscript::default();
        crate::backend::stream::fixture_objects("pi", name).iter().flat_map(|object| transcript.add(object)).collect()
    }

    #[test]
    fn a_turn_with_a_tool_call_reads_as_a_transcript() {
        let entries = entries("03_tool.jsonl");
        assert!(matches!(&entries[0], Entry::Heading(title) if title.starts_with("pi (session ")));
        assert_eq!(
            entries[1..],
            [
                Entry::Heading("tool write".into()),
                Entry::ToolOutput("content:\n  made\npath: made.txt\n".into()),
                Entry::Heading("result of write".into()),
                Entry::ToolOutput("Successfully wrote 5 bytes to made.txt".into()),
                Entry::Said("Wrote it.\n<result>wrote</result>".into()),
                Entry::Heading("turn ended: stop, $0.0090; tokens 2000 in, 200 out".into()),
                Entry::Answer("Wrote it.\n<result>wrote</result>".into()),
            ]
        );
    }

    #[test]
    fn a_failed_turn_says_why() {
        let entries = entries("05_http_429.jsonl");
        let Some(Entry::Heading(ending)) = entries.iter().rev().find(|entry| matches!(entry, Entry::Heading(_))) else {
            panic!("no heading: {entries:?}")
        };
        assert!(ending.starts_with("turn ended: error, $0.0000; tokens 0 in, 0 out: 429 "), "{ending}");
    }

    #[test]
    fn pis_retries_are_shown() {
        let entries = entries("06_retried_then_ok.jsonl");
        assert!(
            entries.iter().any(
                |entry| matches!(entry, Entry::Heading(title) if title.starts_with("pi retries (attempt 1 of 2): 500 "))
            ),
            "{entries:?}"
        );
        assert_eq!(entries.last(), Some(&Entry::Answer("<result>after retry</result>".into())));
    }
}
