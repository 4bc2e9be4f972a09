//! What the fake answers: output items (assistant text, shell commands) with
//! usage, streamed as the Responses API's SSE events, or an HTTP error.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::fake_api::{FakeReply, fake_reply_for};

#[derive(Clone, Debug)]
pub(crate) struct Reply {
    pub(super) items: Vec<Item>,
    pub(super) usage: Usage,
    pub(super) delay: Duration,
    pub(super) failure: Option<Failure>,
    pub(super) headers: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub(super) enum Item {
    Text(String),
    /// A shell command Codex runs for real (its `exec_command` tool).
    Command(String),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Usage {
    pub(super) input_tokens: u64,
    pub(super) cached_tokens: u64,
    pub(super) output_tokens: u64,
}

#[derive(Clone, Debug)]
pub(super) enum Failure {
    Http {
        status: u16,
        body: String,
    },
    /// HTTP 200 and `response.created`, then `response.failed`.
    Stream {
        message: String,
    },
}

impl Default for Reply {
    fn default() -> Reply {
        Reply::empty()
    }
}

impl Reply {
    /// No output items.
    pub(crate) fn empty() -> Reply {
        Reply {
            items: Vec::new(),
            usage: Usage { input_tokens: 10, cached_tokens: 0, output_tokens: 5 },
            delay: Duration::ZERO,
            failure: None,
            headers: Vec::new(),
        }
    }

    pub(crate) fn text(text: &str) -> Reply {
        Reply::empty().with_text(text)
    }

    /// HTTP `status` with `body` as it is (the API's bodies are JSON:
    /// `{"error":{"type":…,"message":…}}`).
    pub(crate) fn http_error(status: u16, body: &str) -> Reply {
        Reply { failure: Some(Failure::Http { status, body: body.to_string() }), ..Reply::empty() }
    }

    /// The account's usage limit: 429 `usage_limit_reached`, resetting at
    /// `resets_at` (epoch seconds). Codex says "You’ve hit your usage limit. Try
    /// again at …" in its local time zone, to the minute.
    pub(crate) fn usage_limit(resets_at: i64) -> Reply {
        let body = json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
            "resets_at": resets_at}});
        Reply::http_error(429, &body.to_string())
    }

    /// HTTP 200, then `response.failed` with `message`.
    pub(crate) fn stream_failure(message: &str) -> Reply {
        Reply { failure: Some(Failure::Stream { message: message.to_string() }), ..Reply::empty() }
    }

    /// Append an assistant message.
    pub(crate) fn with_text(mut self, text: &str) -> Reply {
        self.items.push(Item::Text(text.to_string()));
        self
    }

    /// Append a shell command call; Codex runs it in its cwd and calls back with
    /// its output (round 1).
    pub(crate) fn with_command(mut self, command: &str) -> Reply {
        self.items.push(Item::Command(command.to_string()));
        self
    }

    /// Tokens reported for this call; Codex adds them up per thread.
    pub(crate) fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Reply {
        self.usage.input_tokens = input_tokens;
        self.usage.output_tokens = output_tokens;
        self
    }

    /// Of the input tokens, how many were cached.
    pub(crate) fn cached(mut self, cached_tokens: u64) -> Reply {
        self.usage.cached_tokens = cached_tokens;
        self
    }

    /// Wait this long before answering.
    pub(crate) fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

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

    pub(super) fn error_body(&self) -> Option<String> {
        match &self.failure {
            Some(Failure::Http { body, .. }) => Some(body.clone()),
            _ => None,
        }
    }

    /// The SSE stream, with ids made unique by `serial`.
    pub(super) fn sse(&self, model: &str, serial: &str) -> String {
        let mut stream = String::new();
        let mut event = |data: Value| {
            let name = data["type"].as_str().unwrap_or_default().to_string();
            stream.push_str(&format!("event: {name}\ndata: {data}\n\n"));
        };
        let response_id = format!("resp_fake_{serial}");
        event(json!({"type": "response.created", "response": {"id": response_id, "model": model}}));
        if let Some(Failure::Stream { message }) = &self.failure {
            event(json!({"type": "response.failed", "response": {"id": response_id,
                "error": {"code": "server_error", "message": message}}}));
            return stream;
        }
        for (index, item) in self.items.iter().enumerate() {
            match item {
                Item::Text(text) => {
                    let id = format!("msg_fake_{serial}_{index}");
                    let done = json!({"type": "message", "role": "assistant", "id": id, "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}]});
                    event(json!({"type": "response.output_item.added", "output_index": index,
                        "item": {"type": "message", "role": "assistant", "id": id, "status": "in_progress", "content": []}}));
                    event(json!({"type": "response.output_text.delta", "item_id": id, "output_index": index,
                        "content_index": 0, "delta": text}));
                    event(json!({"type": "response.output_item.done", "output_index": index, "item": done}));
                }
                Item::Command(command) => {
                    let item = json!({"type": "function_call", "id": format!("fc_fake_{serial}_{index}"),
                        "call_id": format!("call_fake_{serial}_{index}"), "name": "exec_command",
                        "arguments": json!({"cmd": command}).to_string(), "status": "completed"});
                    event(json!({"type": "response.output_item.added", "output_index": index, "item": item}));
                    event(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
                }
            }
        }
        let usage = self.usage;
        event(json!({"type": "response.completed", "response": {"id": response_id, "model": model, "usage": {
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {"cached_tokens": usage.cached_tokens},
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }}}));
        stream
    }
}

fake_reply_for!(Reply);
