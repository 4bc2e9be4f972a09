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
//! The server runs on its own tokio runtime, so plain synchronous `#[test]`s
//! use it; it stops when the [`FakeAnthropic`] is dropped. It also owns a
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

pub(crate) use reply::{Reply, ToolUse};
pub(crate) use request_view::{RequestView, Role, Turn};
pub(crate) use rule::Rule;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::post;
use serde_json::Value;

/// The text answered when no rule matches.
pub(crate) const NO_RULE_MATCHED: &str = "FAKE: no rule matched";

/// One request the fake received, with how it was answered.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub(crate) view: RequestView,
    /// The whole request body.
    pub(crate) raw: Value,
    /// Request headers (lower-case names).
    pub(crate) headers: Vec<(String, String)>,
    /// The name of the rule that answered; `None` for the fallback.
    pub(crate) rule: Option<String>,
    /// The HTTP status answered.
    pub(crate) status: u16,
    /// When it arrived, since the server started.
    pub(crate) received_at: Duration,
}

/// A running fake API; stops when dropped.
pub(crate) struct FakeAnthropic {
    url: String,
    shared: Arc<Shared>,
    config_dir: tempfile::TempDir,
    runtime: Option<tokio::runtime::Runtime>,
}

struct Shared {
    /// Rules with how often each has fired, in match order.
    rules: Mutex<Vec<(Rule, usize)>>,
    log: Mutex<Vec<Recorded>>,
    /// Requests to anything but `POST /v1/messages`, as `METHOD /path`.
    other: Mutex<Vec<String>>,
    started: Instant,
    serial: AtomicU64,
    serial_prefix: u64,
}

impl FakeAnthropic {
    /// Start serving `rules` (first match wins) on `127.0.0.1:<free port>`.
    pub(crate) fn start(rules: Vec<Rule>) -> FakeAnthropic {
        let shared = Arc::new(Shared {
            rules: Mutex::new(rules.into_iter().map(|rule| (rule, 0)).collect()),
            log: Mutex::new(Vec::new()),
            other: Mutex::new(Vec::new()),
            started: Instant::now(),
            serial: AtomicU64::new(0),
            serial_prefix: SystemTime::now().duration_since(UNIX_EPOCH).map(|now| now.as_nanos() as u64).unwrap_or(0),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fake-anthropic")
            .enable_all()
            .build()
            .expect("fake API runtime");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind fake API");
        let url = format!("http://{}", listener.local_addr().expect("fake API address"));
        listener.set_nonblocking(true).expect("non-blocking listener");
        let listener = {
            let _context = runtime.enter();
            tokio::net::TcpListener::from_std(listener).expect("tokio listener")
        };
        let app =
            Router::new().route("/v1/messages", post(messages)).fallback(other_request).with_state(Arc::clone(&shared));
        runtime.spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                eprintln!("fake Anthropic API stopped: {error}");
            }
        });
        let config_dir = tempfile::Builder::new().prefix("baton-claude-config-").tempdir().expect("config dir");
        super::claude_cli::register_config_dir(&url, config_dir.path());
        FakeAnthropic { url, shared, config_dir, runtime: Some(runtime) }
    }

    /// `http://127.0.0.1:PORT`, the value for `ANTHROPIC_BASE_URL`.
    pub(crate) fn url(&self) -> String {
        self.url.clone()
    }

    /// The `CLAUDE_CONFIG_DIR` [`claude_env`](super::claude_cli::claude_env)
    /// gives for this server: sessions live in `projects/<mangled cwd>/<id>.jsonl`.
    pub(crate) fn config_dir(&self) -> &Path {
        self.config_dir.path()
    }

    /// Add a rule after the existing ones.
    pub(crate) fn push_rule(&self, rule: Rule) {
        self.shared.rules.lock().expect("rules").push((rule, 0));
    }

    /// Every `POST /v1/messages` so far, in arrival order.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.shared.log.lock().expect("log").clone()
    }

    /// The requests answered by rules named `name`.
    pub(crate) fn requests_for(&self, name: &str) -> Vec<Recorded> {
        self.requests().into_iter().filter(|request| request.rule.as_deref() == Some(name)).collect()
    }

    /// How many requests rules named `name` answered.
    pub(crate) fn fired(&self, name: &str) -> usize {
        self.requests_for(name).len()
    }

    /// The requests no rule matched (answered with [`NO_RULE_MATCHED`]).
    pub(crate) fn unmatched(&self) -> Vec<Recorded> {
        self.requests().into_iter().filter(|request| request.rule.is_none()).collect()
    }

    /// Requests to anything but `POST /v1/messages`, as `METHOD /path?query`:
    /// Claude Code 2.1.197 sends one `HEAD /` (a preconnect, answered 200) per
    /// process; anything else is answered 404.
    pub(crate) fn other_requests(&self) -> Vec<String> {
        self.shared.other.lock().expect("other").clone()
    }

    /// All requests, one line each, for assertion messages.
    pub(crate) fn summary(&self) -> String {
        self.requests()
            .iter()
            .map(|request| {
                format!(
                    "{:>6} ms  {}  rule={:?}  round={}  fresh={}  session={:?}  prompt={:?}",
                    request.received_at.as_millis(),
                    request.status,
                    request.rule,
                    request.view.round,
                    request.view.is_fresh(),
                    request.view.session_id,
                    request.view.prompt.chars().take(80).collect::<String>(),
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for FakeAnthropic {
    fn drop(&mut self) {
        super::claude_cli::unregister_config_dir(&self.url);
        if let Some(runtime) = self.runtime.take() {
            // Don't wait for replies still sleeping in a delay.
            runtime.shutdown_background();
        }
    }
}

async fn messages(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let raw: Value = match serde_json::from_slice(&body) {
        Ok(raw) => raw,
        Err(error) => return plain_response(StatusCode::BAD_REQUEST, format!("fake API: body is not JSON: {error}")),
    };
    let session_header = headers.get("x-claude-code-session-id").and_then(|value| value.to_str().ok());
    let view = RequestView::from_request(&raw, session_header);
    let (rule, reply) = {
        let mut rules = shared.rules.lock().expect("rules");
        match rules.iter_mut().find(|(rule, fired)| rule.matches(&view, *fired)) {
            Some((rule, fired)) => {
                *fired += 1;
                (Some(rule.name().to_string()), rule.reply_for(&view))
            }
            None => (None, Reply::text(NO_RULE_MATCHED)),
        }
    };
    let serial = shared.serial.fetch_add(1, Ordering::Relaxed);
    let serial = format!("{:012x}{serial:04x}", shared.serial_prefix & 0xffff_ffff_ffff);
    let cwd = view.cwd.clone();
    let model = view.model.clone();
    shared.log.lock().expect("log").push(Recorded {
        view,
        raw,
        headers: headers
            .iter()
            .map(|(name, value)| (name.as_str().to_string(), value.to_str().unwrap_or_default().to_string()))
            .collect(),
        rule,
        status: reply.http_status(),
        received_at: shared.started.elapsed(),
    });
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let mut response = match reply.error_body() {
        Some(body) => {
            let mut response = Response::new(Body::from(body));
            *response.status_mut() = StatusCode::from_u16(reply.http_status()).expect("HTTP status");
            response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
            response
        }
        None => {
            let mut response = Response::new(Body::from(reply.sse(&model, cwd.as_deref(), &serial)));
            response.headers_mut().insert("content-type", HeaderValue::from_static("text/event-stream; charset=utf-8"));
            response.headers_mut().insert("cache-control", HeaderValue::from_static("no-cache"));
            response
        }
    };
    let request_id = HeaderValue::from_str(&format!("req_fake_{serial}")).expect("request id");
    response.headers_mut().insert("request-id", request_id);
    for (name, value) in &reply.headers {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("header name");
        response.headers_mut().append(name, HeaderValue::from_str(value).expect("header value"));
    }
    response
}

async fn other_request(State(shared): State<Arc<Shared>>, method: Method, uri: Uri) -> Response {
    shared.other.lock().expect("other").push(format!("{method} {uri}"));
    if method == Method::HEAD && uri.path() == "/" {
        // Claude Code's preconnect, sent once at startup.
        return plain_response(StatusCode::OK, String::new());
    }
    let body = r#"{"type":"error","error":{"type":"not_found_error","message":"fake API: not found"}}"#;
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    response
}

fn plain_response(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}
