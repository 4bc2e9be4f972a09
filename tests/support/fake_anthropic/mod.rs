//! A fake Anthropic Messages API that drives the real Claude Code CLI offline.
//!
//! Claude Code honours `ANTHROPIC_BASE_URL`, so a test starts this server on
//! `127.0.0.1:<free port>`, points `claude` (or Baton, which spawns `claude`)
//! at it with [`claude_env`](super::claude_cli::claude_env), and scripts the
//! model's answers with [`Rule`]s. Claude Code really executes the tool calls
//! the fake returns (Bash, Write, …) and calls back with the results, so a
//! test exercises the real CLI end to end: stream-json, sessions, resume and
//! fork, tool rounds, retries and cost.
//!
//! Each `POST /v1/messages` is reduced to a [`RequestView`] (latest user text,
//! tool round, earlier history, cwd, model, session id) and answered by the
//! first [`Rule`] that matches it, or else by the text `FAKE: no rule matched`
//! (so a missing rule fails loudly). Replies are streamed as the API's SSE
//! (`message_start`, `content_block_*` with `text_delta`/`input_json_delta`,
//! `message_delta` with the stop reason and usage, `message_stop`), or are
//! HTTP errors with the API's JSON error body and any headers. Requests are
//! served concurrently (forked agents call at the same time) and every one is
//! recorded with the rule that answered it, so tests can also assert what
//! did *not* happen (e.g. a request's history lacks another agent's turns).
//!
//! The server is [`fake_api`](super::fake_api)'s, shared with the fake OpenAI
//! API: this module keeps only the Messages API's format. It stops when the
//! [`FakeAnthropic`] is dropped. It also owns a
//! temporary `CLAUDE_CONFIG_DIR` (see [`FakeAnthropic::config_dir`]) so each
//! test's Claude sessions are isolated and removed with it.
//!
//! ```ignore
//! use support::claude_cli::claude_env;
//! use support::fake_anthropic::{FakeAnthropic, Reply, Rule, ToolUse};
//!
//! let fake = FakeAnthropic::start(vec![
//!     // Key rules on text unique to one state's prompt; put transition tags
//!     // in the final message of a turn (Claude's `result` holds only that).
//!     Rule::when_prompt("PLAN STATE").reply_text("Planned. <goto>RUN.md</goto>").usage(1000, 100),
//!     Rule::when_prompt("RUN STATE").on_round(0).reply_text("Running.").reply_tool_use(ToolUse::bash("echo hi > out.txt")),
//!     Rule::when_prompt("RUN STATE").on_round(1).reply_text("Done. <goto>CHECK.md</goto>"),
//!     // Overloaded twice, then the next rule answers.
//!     Rule::when_prompt("CHECK STATE").named("overloaded").http_error(529, "Overloaded").times(2),
//!     Rule::when_prompt("CHECK STATE").resumed().history_contains("Planned.").reply_text("<result>ok</result>"),
//!     Rule::when_prompt("SLOW").reply(Reply::text("late").delay(Duration::from_secs(2))),
//! ]);
//! let mut test = Test::new().file("PLAN.md", "PLAN STATE …");
//! for (key, value) in claude_env(&fake.url()) {
//!     test = test.env(&key, &value);
//! }
//! let outcome = test.run_workflow(&[]);
//! assert_eq!(fake.fired("overloaded"), 2);
//! assert!(fake.requests_for("CHECK STATE").iter().all(|request| !request.view.history_contains("SECRET")));
//! assert!(fake.unmatched().is_empty());
//! ```

#![allow(dead_code)] // A toolkit: each test uses part of it.

mod reply;
mod request_view;
mod rule;

pub(crate) use super::fake_api::{NO_RULE_MATCHED, Role, Turn};
pub(crate) use reply::{Reply, ToolUse};
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

/// The Anthropic Messages API's wire format.
pub(crate) struct Anthropic;

impl WireFormat for Anthropic {
    type View = RequestView;
    type Reply = Reply;
    const PATH: &'static str = "/v1/messages";
    const NAME: &'static str = "fake-anthropic";
    const SSE_CONTENT_TYPE: &'static str = "text/event-stream; charset=utf-8";
    const REQUEST_ID_HEADER: &'static str = "request-id";

    fn view(body: &Value, headers: &HeaderMap) -> RequestView {
        let session_header = headers.get("x-claude-code-session-id").and_then(|value| value.to_str().ok());
        RequestView::from_request(body, session_header)
    }

    /// Unique across servers too: Claude Code keys its session files on message ids.
    fn serial(started_nanos: u64, count: u64) -> String {
        format!("{:012x}{count:04x}", started_nanos & 0xffff_ffff_ffff)
    }

    fn sse(reply: &Reply, view: &RequestView, serial: &str) -> String {
        reply.sse(&view.model, view.cwd.as_deref(), serial)
    }

    fn other_request(method: &Method, uri: &Uri) -> Response {
        if method == Method::HEAD && uri.path() == "/" {
            // Claude Code's preconnect, sent once at startup.
            return fake_api::plain_response(StatusCode::OK, String::new());
        }
        let body = r#"{"type":"error","error":{"type":"not_found_error","message":"fake API: not found"}}"#;
        fake_api::json_response(StatusCode::NOT_FOUND, body)
    }
}

/// A running fake API; stops when dropped. Its requests, rules and summary are
/// the [`FakeServer`]'s (`fake.requests_for(..)`, `fake.fired(..)`, …).
/// [`FakeServer::other_requests`]: Claude Code 2.1.197 sends one `HEAD /` (a
/// preconnect, answered 200) per process; anything else is answered 404.
pub(crate) struct FakeAnthropic {
    server: FakeServer<Anthropic>,
    config_dir: tempfile::TempDir,
}

impl FakeAnthropic {
    /// Start serving `rules` (first match wins) on `127.0.0.1:<free port>`.
    pub(crate) fn start(rules: Vec<Rule>) -> FakeAnthropic {
        let server = FakeServer::start(rules);
        let config_dir = tempfile::Builder::new().prefix("baton-claude-config-").tempdir().expect("config dir");
        super::claude_cli::register_config_dir(&server.url(), config_dir.path());
        FakeAnthropic { server, config_dir }
    }

    /// The `CLAUDE_CONFIG_DIR` [`claude_env`](super::claude_cli::claude_env)
    /// gives for this server: sessions live in `projects/<mangled cwd>/<id>.jsonl`.
    pub(crate) fn config_dir(&self) -> &Path {
        self.config_dir.path()
    }
}

/// `url()` is the value for `ANTHROPIC_BASE_URL`.
impl Deref for FakeAnthropic {
    type Target = FakeServer<Anthropic>;

    fn deref(&self) -> &FakeServer<Anthropic> {
        &self.server
    }
}

impl Drop for FakeAnthropic {
    fn drop(&mut self) {
        super::claude_cli::unregister_config_dir(&self.server.url());
    }
}
