//! A Codex turn as `baton logs --step` shows it: its `codex exec --json` events
//! (as the trace keeps them) turned into transcript entries — what Codex said,
//! each command with its output and exit code, file changes, warnings, how the
//! turn ended — that `inspect::transcript` lays out like Claude's. Only this
//! folder reads Codex's events.

use serde_json::Value;

pub(crate) use crate::backend::transcript::Entry;

#[derive(Default)]
pub(crate) struct CodexTranscript {
    last_message: Option<String>,
}

fn text_at<'a>(object: &'a Value, key: &str) -> &'a str {
    object.get(key).and_then(Value::as_str).unwrap_or_default()
}

impl CodexTranscript {
    /// What `object` adds to the transcript.
    pub(crate) fn add(&mut self, object: &Value) -> Vec<Entry> {
        let item = object.get("item").unwrap_or(&Value::Null);
        match (text_at(object, "type"), text_at(item, "type")) {
            ("thread.started", _) => vec![Entry::Heading(format!("codex (thread {})", text_at(object, "thread_id")))],
            ("item.completed", "agent_message") => {
                let said = text_at(item, "text").to_string();
                self.last_message = Some(said.clone());
                vec![Entry::Said(said)]
            }
            ("item.completed", "reasoning") => {
                vec![Entry::Heading("thinking".into()), Entry::Said(text_at(item, "text").to_string())]
            }
            ("item.completed", "command_execution") => {
                let exit = item
                    .get("exit_code")
                    .and_then(Value::as_i64)
                    .map_or_else(|| text_at(item, "status").to_string(), |code| format!("exit code {code}"));
                let output = text_at(item, "aggregated_output");
                let heading = Entry::Heading(format!("shell `{}` ({exit})", text_at(item, "command")));
                if output.trim().is_empty() {
                    vec![heading, Entry::Said("(no output)".into())]
                } else {
                    vec![heading, Entry::ToolOutput(output.to_string())]
                }
            }
            ("item.completed", "file_change") => {
                let changes: Vec<String> = item
                    .get("changes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|change| format!("{} {}", text_at(change, "kind"), text_at(change, "path")))
                    .collect();
                vec![Entry::Heading(format!("file change ({}): {}", text_at(item, "status"), changes.join(", ")))]
            }
            ("item.completed", "mcp_tool_call") => vec![Entry::Heading(format!(
                "mcp {}/{} ({})",
                text_at(item, "server"),
                text_at(item, "tool"),
                text_at(item, "status")
            ))],
            ("item.completed", "web_search") => {
                vec![Entry::Heading(format!("web search: {}", text_at(item, "query")))]
            }
            ("item.completed", "error") => vec![Entry::Heading(format!("warning: {}", text_at(item, "message")))],
            ("turn.completed", _) => {
                let usage = object.get("usage").unwrap_or(&Value::Null);
                let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
                let heading = Entry::Heading(format!(
                    "turn completed: the thread's totals so far {} input ({} cached), {} output tokens",
                    number("input_tokens"),
                    number("cached_input_tokens"),
                    number("output_tokens")
                ));
                let answer = self.last_message.take().unwrap_or_default();
                vec![heading, Entry::Answer(answer)]
            }
            ("turn.failed", _) => {
                let message = object.get("error").map(|error| text_at(error, "message")).unwrap_or_default();
                vec![Entry::Heading(format!("turn failed: {message}"))]
            }
            ("error", _) => vec![Entry::Heading(format!("error: {}", text_at(object, "message")))],
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(name: &str) -> Vec<Entry> {
        let mut transcript = CodexTranscript::default();
        crate::backend::stream::fixture_objects("codex", name)
            .iter()
            .flat_map(|object| transcript.add(object))
            .collect()
    }

    #[test]
    fn a_turn_with_a_command_reads_as_a_transcript() {
        let entries = entries("02_resume_tool_call.jsonl");
        assert!(matches!(&entries[0], Entry::Heading(title) if title.starts_with("codex (thread ")));
        assert_eq!(
            entries[1..],
            [
                Entry::Heading(
                    "warning: Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; this can \
                     degrade performance and cause issues."
                        .into()
                ),
                Entry::Heading("shell `/bin/bash -lc 'echo hi > out.txt; echo done'` (exit code 0)".into()),
                Entry::ToolOutput("done\n".into()),
                Entry::Said("Hello from fake. <goto>NEXT.md</goto>".into()),
                Entry::Heading(
                    "turn completed: the thread's totals so far 30 input (6 cached), 15 output tokens".into()
                ),
                Entry::Answer("Hello from fake. <goto>NEXT.md</goto>".into()),
            ]
        );
    }

    #[test]
    fn a_failed_turn_says_why() {
        let entries = entries("04_usage_limit.jsonl");
        assert_eq!(
            entries.last(),
            Some(&Entry::Heading(
                "turn failed: You’ve hit your usage limit. Try again at Nov 28th, 2026 9:06 PM.".into()
            ))
        );
    }
}
