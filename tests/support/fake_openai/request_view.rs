//! What a rule sees of one `POST /v1/responses`: the request reduced to the few
//! facts a test scripts on (prompt, tool round, history, model, thread), with
//! Codex's own additions (developer instructions, `<environment_context>` and
//! other harness blocks) removed.

use serde_json::Value;

use super::super::fake_api::{self, RequestFacts, Role, Turn, request_facts_for};

#[derive(Clone, Debug)]
pub(crate) struct RequestView {
    /// The latest user text (its text parts joined by newlines, trimmed).
    pub(crate) prompt: String,
    /// Tool outputs after that text: 0 for the first call of a turn, 1 after
    /// one command, and so on.
    pub(crate) round: usize,
    /// Every message before the prompt that has visible text, oldest first.
    /// Empty for a fresh thread.
    pub(crate) history: Vec<Turn>,
    pub(crate) model: String,
    /// The `thread-id` header: a new id for a fresh or forked thread, the
    /// same for a resumed one.
    pub(crate) thread_id: Option<String>,
    /// The `output_text` of each command result after the prompt.
    pub(crate) tool_outputs: Vec<String>,
}

/// Blocks Codex adds to user messages: never a prompt.
const HARNESS_PREFIXES: [&str; 5] =
    ["<environment_context>", "<user_instructions>", "# AGENTS.md", "<permissions instructions>", "<turn_aborted>"];

impl RequestView {
    pub(crate) fn from_request(body: &Value, thread_header: Option<&str>) -> RequestView {
        let items: &[Value] = body["input"].as_array().map_or(&[], Vec::as_slice);
        let messages: Vec<(usize, Role, String)> = items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| visible(item).map(|(role, text)| (index, role, text)))
            .collect();
        let prompt_at = messages.iter().rposition(|(_, role, text)| *role == Role::User && !text.is_empty());
        let (prompt, after, history) = match prompt_at {
            Some(position) => {
                let (index, _, text) = &messages[position];
                let history = messages[..position]
                    .iter()
                    .filter(|(_, _, text)| !text.is_empty())
                    .map(|(_, role, text)| Turn { role: *role, text: text.clone() })
                    .collect();
                (text.clone(), index + 1, history)
            }
            None => (String::new(), 0, Vec::new()),
        };
        let tool_outputs: Vec<String> = items[after.min(items.len())..]
            .iter()
            .filter(|item| item["type"] == "function_call_output")
            .map(|item| match &item["output"] {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect();
        RequestView {
            prompt,
            round: tool_outputs.len(),
            history,
            model: body["model"].as_str().unwrap_or_default().to_string(),
            thread_id: thread_header.map(str::to_string),
            tool_outputs,
        }
    }

    /// No earlier messages: the first call of a new thread.
    pub(crate) fn is_fresh(&self) -> bool {
        self.history.is_empty()
    }

    pub(crate) fn history_contains(&self, needle: &str) -> bool {
        self.history.iter().any(|turn| turn.text.contains(needle))
    }

    /// The history as `user: …` / `assistant: …` lines, for messages.
    pub(crate) fn history_text(&self) -> String {
        fake_api::history_text(&self.history)
    }
}

request_facts_for!(RequestView, thread_id, "thread");

/// A user or assistant message with its visible text ("" when it has none);
/// `None` for other items and roles (developer instructions, tool calls).
fn visible(item: &Value) -> Option<(Role, String)> {
    if item["type"] != "message" {
        return None;
    }
    let role = match item["role"].as_str()? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let texts: Vec<String> = match &item["content"] {
        Value::String(text) => vec![text.clone()],
        Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).map(str::to_string).collect(),
        _ => Vec::new(),
    };
    let visible: Vec<String> = texts
        .into_iter()
        .map(|text| text.trim().to_string())
        .filter(|text| !text.is_empty() && !HARNESS_PREFIXES.iter().any(|prefix| text.starts_with(prefix)))
        .collect();
    Some((role, visible.join("\n")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(role: &str, text: &str) -> Value {
        let kind = if role == "assistant" { "output_text" } else { "input_text" };
        json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})
    }

    /// The shape Codex 0.169 sends after a resume and one command of the new turn.
    #[test]
    fn codexs_own_blocks_are_not_prompts_and_tool_outputs_count_rounds() {
        let body = json!({"model": "gpt-5-codex", "input": [
            message("developer", "You are a coding agent running in the Codex CLI"),
            message("user", "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"),
            message("user", "FIRST PROMPT\n"),
            message("assistant", "first answer"),
            message("user", "<environment_context>\n  <current_date>2026-11-25</current_date>\n</environment_context>"),
            message("user", "SECOND PROMPT\n"),
            {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"true\"}", "call_id": "c1"},
            {"type": "function_call_output", "call_id": "c1", "output": "Process exited with code 0\n"},
        ]});
        let view = RequestView::from_request(&body, Some("thread-1"));
        assert_eq!(view.prompt, "SECOND PROMPT");
        assert_eq!(view.round, 1);
        assert_eq!(view.tool_outputs, ["Process exited with code 0\n"]);
        assert_eq!(view.history_text(), "user: FIRST PROMPT\nassistant: first answer");
        assert!(!view.is_fresh());
        assert_eq!(view.thread_id.as_deref(), Some("thread-1"));
    }
}
