//! What the fake answers: a message (text, thinking and tool_use blocks with
//! usage) streamed as Anthropic SSE, or an HTTP error, or a stream that breaks
//! after `message_start`.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::super::fake_api::{FakeReply, fake_reply_for};

#[derive(Clone, Debug)]
pub(crate) struct Reply {
    pub(super) blocks: Vec<Block>,
    pub(super) usage: Usage,
    pub(super) delay: Duration,
    pub(super) stop_reason: Option<String>,
    pub(super) failure: Option<Failure>,
    pub(super) headers: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub(super) enum Block {
    Text(String),
    Thinking(String),
    ToolUse(ToolUse),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Usage {
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
}

#[derive(Clone, Debug)]
pub(super) enum Failure {
    Http {
        status: u16,
        error_type: String,
        message: String,
    },
    /// HTTP 200 and `message_start`, then an SSE `error` event.
    Stream {
        error_type: String,
        message: String,
    },
}

/// A tool call for Claude Code to execute for real.
#[derive(Clone, Debug)]
pub(crate) struct ToolUse {
    pub(super) name: String,
    pub(super) input: Value,
}

impl ToolUse {
    /// Any tool with any input, e.g. `ToolUse::new("Read", json!({"file_path": "/abs"}))`.
    pub(crate) fn new(name: &str, input: Value) -> ToolUse {
        ToolUse { name: name.to_string(), input }
    }

    /// `Bash`; runs in the claude process's cwd, so relative paths work.
    pub(crate) fn bash(command: &str) -> ToolUse {
        ToolUse::new("Bash", json!({ "command": command, "description": "scripted by the fake API" }))
    }

    /// `Write`; a relative `path` is made absolute against the request's cwd
    /// (Claude Code requires absolute paths).
    pub(crate) fn write(path: &str, content: &str) -> ToolUse {
        ToolUse::new("Write", json!({ "file_path": path, "content": content }))
    }

    /// `Read`; a relative `path` is resolved like [`ToolUse::write`]'s.
    pub(crate) fn read(path: &str) -> ToolUse {
        ToolUse::new("Read", json!({ "file_path": path }))
    }

    /// The input as sent: a relative `file_path` joined to `cwd`.
    fn input_for(&self, cwd: Option<&Path>) -> Value {
        let mut input = self.input.clone();
        if let (Some(cwd), Some(path)) = (cwd, input["file_path"].as_str())
            && Path::new(path).is_relative()
        {
            input["file_path"] = Value::String(cwd.join(path).to_string_lossy().into_owned());
        }
        input
    }
}

impl Default for Reply {
    fn default() -> Reply {
        Reply::empty()
    }
}

impl Reply {
    /// A message with no content (Claude Code then nudges and calls again).
    pub(crate) fn empty() -> Reply {
        Reply {
            blocks: Vec::new(),
            usage: Usage { input_tokens: 10, output_tokens: 5 },
            delay: Duration::ZERO,
            stop_reason: None,
            failure: None,
            headers: Vec::new(),
        }
    }

    pub(crate) fn text(text: &str) -> Reply {
        Reply::empty().with_text(text)
    }

    pub(crate) fn tool_use(tool_use: ToolUse) -> Reply {
        Reply::empty().with_tool_use(tool_use)
    }

    /// HTTP `status` with the API's error body
    /// `{"type":"error","error":{"type":<by status>,"message":…}}`.
    pub(crate) fn http_error(status: u16, message: &str) -> Reply {
        let error_type = error_type_for(status).to_string();
        Reply { failure: Some(Failure::Http { status, error_type, message: message.to_string() }), ..Reply::empty() }
    }

    /// HTTP 200 and `message_start`, then an SSE `error` event (`overloaded_error`).
    /// Claude Code retries once and counts the broken attempt's usage.
    pub(crate) fn stream_error(message: &str) -> Reply {
        let failure = Failure::Stream { error_type: "overloaded_error".to_string(), message: message.to_string() };
        Reply { failure: Some(failure), ..Reply::empty() }
    }

    /// A subscriber's usage limit: 429 with the `anthropic-ratelimit-unified-*`
    /// headers. `claim` is `five_hour`, `seven_day` or `seven_day_opus`;
    /// `resets_at` is epoch seconds (use a whole hour). Claude Code shows
    /// "You've hit your session limit · resets …" only under OAuth auth
    /// (`CLAUDE_CODE_OAUTH_TOKEN` set, `ANTHROPIC_API_KEY` unset); with an API
    /// key it retries the 429 like any other.
    pub(crate) fn subscription_limit(claim: &str, resets_at: i64) -> Reply {
        Reply::http_error(429, "Rate limited")
            .header("anthropic-ratelimit-unified-status", "rejected")
            .header("anthropic-ratelimit-unified-reset", &resets_at.to_string())
            .header("anthropic-ratelimit-unified-representative-claim", claim)
    }

    /// Append a text block.
    pub(crate) fn with_text(mut self, text: &str) -> Reply {
        self.blocks.push(Block::Text(text.to_string()));
        self
    }

    /// Append a thinking block (Claude Code prints it as its own assistant line).
    pub(crate) fn with_thinking(mut self, thinking: &str) -> Reply {
        self.blocks.push(Block::Thinking(thinking.to_string()));
        self
    }

    /// Append a tool_use block; the stop reason becomes `tool_use`.
    pub(crate) fn with_tool_use(mut self, tool_use: ToolUse) -> Reply {
        self.blocks.push(Block::ToolUse(tool_use));
        self
    }

    /// Tokens reported for this call; Claude Code prices them itself
    /// (sonnet $3 in / $15 out per Mtok: 1000 in + 100 out = $0.0045).
    pub(crate) fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Reply {
        self.usage = Usage { input_tokens, output_tokens };
        self
    }

    /// Wait this long before answering (Claude Code prints nothing meanwhile).
    pub(crate) fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Override the stop reason (default `tool_use` when a tool is called, else `end_turn`).
    pub(crate) fn stop_reason(mut self, stop_reason: &str) -> Reply {
        self.stop_reason = Some(stop_reason.to_string());
        self
    }

    /// An extra response header, e.g. `retry-after: 3` or `x-should-retry: false`.
    pub(crate) fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    pub(super) fn http_status(&self) -> u16 {
        match &self.failure {
            Some(Failure::Http { status, .. }) => *status,
            _ => 200,
        }
    }

    /// The error body for an HTTP failure.
    pub(super) fn error_body(&self) -> Option<String> {
        match &self.failure {
            Some(Failure::Http { error_type, message, .. }) => Some(error_json(error_type, message).to_string()),
            _ => None,
        }
    }

    /// The SSE stream for a message (or a broken one), with ids made unique by `serial`.
    pub(super) fn sse(&self, model: &str, cwd: Option<&Path>, serial: &str) -> String {
        let mut stream = String::new();
        let mut event = |name: &str, data: Value| {
            stream.push_str(&format!("event: {name}\ndata: {data}\n\n"));
        };
        let usage = json!({
            "input_tokens": self.usage.input_tokens,
            "output_tokens": 0,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        });
        event(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{serial}"), "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": usage,
            }}),
        );
        if let Some(Failure::Stream { error_type, message }) = &self.failure {
            event("error", error_json(error_type, message));
            return stream;
        }
        for (index, block) in self.blocks.iter().enumerate() {
            let (start, deltas) = match block {
                Block::Text(text) => {
                    (json!({"type": "text", "text": ""}), vec![json!({"type": "text_delta", "text": text})])
                }
                Block::Thinking(thinking) => (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    vec![
                        json!({"type": "thinking_delta", "thinking": thinking}),
                        json!({"type": "signature_delta", "signature": format!("fake-signature-{serial}-{index}")}),
                    ],
                ),
                Block::ToolUse(tool_use) => (
                    json!({"type": "tool_use", "id": format!("toolu_fake_{serial}_{index}"),
                           "name": tool_use.name, "input": {}}),
                    vec![json!({"type": "input_json_delta",
                                "partial_json": tool_use.input_for(cwd).to_string()})],
                ),
            };
            event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            for delta in deltas {
                event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta}));
            }
            event("content_block_stop", json!({"type": "content_block_stop", "index": index}));
        }
        let calls_tool = self.blocks.iter().any(|block| matches!(block, Block::ToolUse(_)));
        let stop_reason =
            self.stop_reason.clone().unwrap_or_else(|| if calls_tool { "tool_use" } else { "end_turn" }.to_string());
        event(
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": self.usage.output_tokens}}),
        );
        event("message_stop", json!({"type": "message_stop"}));
        stream
    }
}

fn error_json(error_type: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": error_type, "message": message}})
}

/// The API's error type for an HTTP status.
fn error_type_for(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fake_reply_for!(Reply);
