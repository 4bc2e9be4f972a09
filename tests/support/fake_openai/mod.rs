//! A fake OpenAI Responses API that drives the real Codex CLI offline.
//!
//! A test starts this server on `127.0.0.1:<free port>`, points `codex` (or
//! Baton, which spawns `codex`) at it with
//! [`codex_env`](super::codex_cli::codex_env) — a `CODEX_HOME` of its own whose
//! `config.toml` makes the fake the model provider — and scripts the model's
//! answers with [`Rule`]s. Codex really runs the shell commands the fake asks
//! for and calls back with their output, so a test exercises the real CLI end
//! to end: JSONL events, threads, resume and fork, tool rounds, failures, tokens.
//!
//! Each `POST /v1/responses` is reduced to a [`RequestView`] (latest user text,
//! tool round, earlier history, model, thread id) and answered by the first
//! [`Rule`] that matches it, or else by the text `FAKE: no rule matched`.
//! Replies are streamed as the Responses API's SSE (`response.created`,
//! `response.output_item.added`/`.done` with `message` or `function_call` items,
//! `response.output_text.delta`, `response.completed` with usage), or are HTTP
//! errors with a JSON body. Every request is recorded with the rule that
//! answered it. The server is [`fake_api`](super::fake_api)'s, shared with the
//! fake Anthropic API: this module keeps only the Responses API's format.
//!
//! ```ignore
//! let fake = FakeOpenAi::start(vec![
//!     Rule::when_prompt("PLAN STATE").reply_text("Planned. <goto>RUN.md</goto>").usage(1000, 100),
//!     Rule::when_prompt("RUN STATE").on_round(0).reply_command("echo hi > out.txt"),
//!     Rule::when_prompt("RUN STATE").on_round(1).reply_text("Done. <goto>CHECK.md</goto>"),
//!     Rule::when_prompt("CHECK STATE").resumed().history_contains("Planned.").reply_text("<result>ok</result>"),
//! ]);
//! let outcome = with_real_codex(Test::new().file("PLAN.md", "---\nbackend: codex\n---\nPLAN STATE"), &fake).run_workflow(&[]);
//! assert!(fake.unmatched().is_empty(), "{}", fake.summary());
//! ```

#![allow(dead_code)] // A toolkit: each test uses part of it.

mod reply;
mod request_view;
mod rule;

pub(crate) use reply::Reply;
pub(crate) use request_view::RequestView;
pub(crate) use rule::Rule;

use std::ops::Deref;
use std::path::Path;

use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;

use super::fake_api::{self, FakeServer, WireFormat};

/// One request the fake received, with how it was answered.
pub(crate) type Recorded = fake_api::Recorded<RequestView>;

/// The OpenAI Responses API's wire format.
pub(crate) struct OpenAi;

impl WireFormat for OpenAi {
    type View = RequestView;
    type Reply = Reply;
    const PATH: &'static str = "/v1/responses";
    const NAME: &'static str = "fake-openai";
    const SSE_CONTENT_TYPE: &'static str = "text/event-stream";
    const REQUEST_ID_HEADER: &'static str = "x-request-id";

    fn view(body: &Value, headers: &HeaderMap) -> RequestView {
        let thread = headers.get("thread-id").and_then(|value| value.to_str().ok());
        RequestView::from_request(body, thread)
    }

    fn serial(_started_nanos: u64, count: u64) -> String {
        format!("{count:06}")
    }

    fn sse(reply: &Reply, view: &RequestView, serial: &str) -> String {
        reply.sse(&view.model, serial)
    }

    fn other_request(_method: &Method, _uri: &Uri) -> Response {
        let body = r#"{"error":{"type":"not_found","message":"fake API: not found"}}"#;
        fake_api::json_response(StatusCode::NOT_FOUND, body)
    }
}

/// A running fake API; stops when dropped. Its requests, rules and summary are
/// the [`FakeServer`]'s (`fake.requests_for(..)`, `fake.fired(..)`, …); `url()`
/// with `/v1` is the provider's `base_url`.
pub(crate) struct FakeOpenAi {
    server: FakeServer<OpenAi>,
    codex_home: tempfile::TempDir,
}

impl FakeOpenAi {
    /// Start serving `rules` (first match wins) on `127.0.0.1:<free port>`.
    pub(crate) fn start(rules: Vec<Rule>) -> FakeOpenAi {
        let server = FakeServer::start(rules);
        let codex_home = super::codex_cli::new_codex_home(&server.url());
        FakeOpenAi { server, codex_home }
    }

    /// The `CODEX_HOME` [`codex_env`](super::codex_cli::codex_env) gives for this
    /// server: threads live in `sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl`.
    pub(crate) fn codex_home(&self) -> &Path {
        self.codex_home.path()
    }
}

impl Deref for FakeOpenAi {
    type Target = FakeServer<OpenAi>;

    fn deref(&self) -> &FakeServer<OpenAi> {
        &self.server
    }
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        super::codex_cli::forget_codex_home(&self.server.url());
    }
}
