//! What a rule sees of one `POST /v1/messages`: the request reduced to the
//! few facts a test scripts on (prompt, tool round, history, cwd, model,
//! session), with Claude Code's own additions (system reminders, the
//! empty-answer nudge, `role:"system"` agent listings, tool results) removed.

use std::path::PathBuf;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::super::fake_api::{self, RequestFacts, Role, Turn, request_facts_for};

/// Claude Code appends this as a user message after an assistant message
/// with no content, then calls again; it is never a prompt.
const EMPTY_ANSWER_NUDGE: &str = "[Your previous response had no visible output";

static SYSTEM_REMINDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?s)<system-reminder>.*?</system-reminder>").expect("regex"));

#[derive(Clone, Debug)]
pub(crate) struct RequestView {
    /// The latest user text (its text blocks joined by newlines, trimmed).
    pub(crate) prompt: String,
    /// Assistant messages after that text: 0 for the first call of a turn,
    /// 1 after one tool round, and so on.
    pub(crate) round: usize,
    /// Every message before the prompt that has visible text, oldest first
    /// (tool uses and tool results are left out). Empty for a fresh session.
    pub(crate) history: Vec<Turn>,
    /// From `Primary working directory: …` in the system prompt.
    pub(crate) cwd: Option<PathBuf>,
    /// The API model id Claude Code sent, e.g. `claude-sonnet-5`.
    pub(crate) model: String,
    /// From `metadata.user_id` (a JSON string holding `session_id`), else the
    /// `x-claude-code-session-id` header.
    pub(crate) session_id: Option<String>,
}

impl RequestView {
    pub(crate) fn from_request(body: &Value, session_header: Option<&str>) -> RequestView {
        let messages: Vec<(Role, String)> = body["messages"]
            .as_array()
            .map(|messages| messages.iter().filter_map(visible_message).collect())
            .unwrap_or_default();
        let prompt_index = messages.iter().rposition(|(role, text)| *role == Role::User && !text.is_empty());
        let (prompt, round, history) = match prompt_index {
            Some(index) => (
                messages[index].1.clone(),
                messages[index + 1..].iter().filter(|(role, _)| *role == Role::Assistant).count(),
                messages[..index]
                    .iter()
                    .filter(|(_, text)| !text.is_empty())
                    .map(|(role, text)| Turn { role: *role, text: text.clone() })
                    .collect(),
            ),
            None => (String::new(), messages.iter().filter(|(role, _)| *role == Role::Assistant).count(), Vec::new()),
        };
        RequestView {
            prompt,
            round,
            history,
            cwd: working_directory(&body["system"]).or_else(|| working_directory_in_messages(&body["messages"])),
            model: body["model"].as_str().unwrap_or_default().to_string(),
            session_id: session_id(body).or_else(|| session_header.map(str::to_string)),
        }
    }

    /// No earlier messages: the first call of a new session.
    pub(crate) fn is_fresh(&self) -> bool {
        self.history.is_empty()
    }

    /// The history as `user: …` / `assistant: …` lines, for messages.
    pub(crate) fn history_text(&self) -> String {
        fake_api::history_text(&self.history)
    }

    pub(crate) fn history_contains(&self, needle: &str) -> bool {
        self.history.iter().any(|turn| turn.text.contains(needle))
    }
}

request_facts_for!(RequestView, session_id, "session");

/// A user or assistant message with its visible text ("" when it has none,
/// e.g. a tool round); `None` for other roles.
fn visible_message(message: &Value) -> Option<(Role, String)> {
    let role = match message["role"].as_str()? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let texts: Vec<&str> = match &message["content"] {
        Value::String(text) => vec![text.as_str()],
        Value::Array(blocks) => {
            blocks.iter().filter(|block| block["type"] == "text").filter_map(|block| block["text"].as_str()).collect()
        }
        _ => Vec::new(),
    };
    let visible: Vec<String> = texts
        .into_iter()
        .map(|text| SYSTEM_REMINDER.replace_all(text, "").trim().to_string())
        .filter(|text| !text.is_empty() && !text.starts_with(EMPTY_ANSWER_NUDGE))
        .collect();
    Some((role, visible.join("\n")))
}

fn working_directory(system: &Value) -> Option<PathBuf> {
    let texts: Vec<&str> = match system {
        Value::String(text) => vec![text.as_str()],
        Value::Array(blocks) => blocks.iter().filter_map(|block| block["text"].as_str()).collect(),
        _ => Vec::new(),
    };
    texts.iter().find_map(|text| {
        let start = text.find("Primary working directory: ")? + "Primary working directory: ".len();
        let line = text[start..].lines().next()?.trim();
        (!line.is_empty()).then(|| PathBuf::from(line))
    })
}

/// Newer Claude Code versions (2.1.330) give the environment in a message, not the system prompt.
fn working_directory_in_messages(messages: &Value) -> Option<PathBuf> {
    messages.as_array()?.iter().find_map(|message| match &message["content"] {
        text @ Value::String(_) => working_directory(text),
        Value::Array(blocks) => working_directory(&Value::Array(blocks.clone())),
        _ => None,
    })
}

fn session_id(body: &Value) -> Option<String> {
    let user_id = body["metadata"]["user_id"].as_str()?;
    let parsed: Value = serde_json::from_str(user_id).ok()?;
    parsed["session_id"].as_str().map(str::to_string)
}
