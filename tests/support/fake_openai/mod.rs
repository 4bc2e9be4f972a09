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
//! answered it.
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

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    pub(crate) raw: Value,
    pub(crate) headers: Vec<(String, String)>,
    /// The name of the rule that answered; `None` for the fallback.
    pub(crate) rule: Option<String>,
    pub(crate) status: u16,
    pub(crate) received_at: Duration,
}

/// A running fake API; stops when dropped.
pub(crate) struct FakeOpenAi {
    url: String,
    shared: Arc<Shared>,
    codex_home: tempfile::TempDir,
    runtime: Option<tokio::runtime::Runtime>,
}

struct Shared {
    rules: Mutex<Vec<(Rule, usize)>>,
    log: Mutex<Vec<Recorded>>,
    other: Mutex<Vec<String>>,
    started: Instant,
    serial: AtomicU64,
}

impl FakeOpenAi {
    /// Start serving `rules` (first match wins) on `127.0.0.1:<free port>`.
    pub(crate) fn start(rules: Vec<Rule>) -> FakeOpenAi {
        let shared = Arc::new(Shared {
            rules: Mutex::new(rules.into_iter().map(|rule| (rule, 0)).collect()),
            log: Mutex::new(Vec::new()),
            other: Mutex::new(Vec::new()),
            started: Instant::now(),
            serial: AtomicU64::new(0),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fake-openai")
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
        let app = Router::new()
            .route("/v1/responses", post(responses))
            .fallback(other_request)
            .with_state(Arc::clone(&shared));
        runtime.spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                eprintln!("fake OpenAI API stopped: {error}");
            }
        });
        let codex_home = super::codex_cli::new_codex_home(&url);
        FakeOpenAi { url, shared, codex_home, runtime: Some(runtime) }
    }

    /// `http://127.0.0.1:PORT`; the provider's `base_url` is this with `/v1`.
    pub(crate) fn url(&self) -> String {
        self.url.clone()
    }

    /// The `CODEX_HOME` [`codex_env`](super::codex_cli::codex_env) gives for this
    /// server: threads live in `sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl`.
    pub(crate) fn codex_home(&self) -> &Path {
        self.codex_home.path()
    }

    pub(crate) fn push_rule(&self, rule: Rule) {
        self.shared.rules.lock().expect("rules").push((rule, 0));
    }

    /// Every `POST /v1/responses` so far, in arrival order.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        self.shared.log.lock().expect("log").clone()
    }

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

    /// Requests to anything but `POST /v1/responses`, as `METHOD /path`.
    pub(crate) fn other_requests(&self) -> Vec<String> {
        self.shared.other.lock().expect("other").clone()
    }

    /// All requests, one line each, for assertion messages.
    pub(crate) fn summary(&self) -> String {
        self.requests()
            .iter()
            .map(|request| {
                format!(
                    "{:>6} ms  {}  rule={:?}  round={}  fresh={}  thread={:?}  prompt={:?}",
                    request.received_at.as_millis(),
                    request.status,
                    request.rule,
                    request.view.round,
                    request.view.is_fresh(),
                    request.view.thread_id,
                    request.view.prompt.chars().take(80).collect::<String>(),
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for FakeOpenAi {
    fn drop(&mut self) {
        super::codex_cli::forget_codex_home(&self.url);
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

async fn responses(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let raw: Value = match serde_json::from_slice(&body) {
        Ok(raw) => raw,
        Err(error) => return plain(StatusCode::BAD_REQUEST, format!("fake API: body is not JSON: {error}")),
    };
    let thread = headers.get("thread-id").and_then(|value| value.to_str().ok());
    let view = RequestView::from_request(&raw, thread);
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
    let serial = format!("{:06}", shared.serial.fetch_add(1, Ordering::Relaxed));
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
            let mut response = Response::new(Body::from(reply.sse(&model, &serial)));
            response.headers_mut().insert("content-type", HeaderValue::from_static("text/event-stream"));
            response.headers_mut().insert("cache-control", HeaderValue::from_static("no-cache"));
            response
        }
    };
    response.headers_mut().insert("x-request-id", HeaderValue::from_str(&format!("req_fake_{serial}")).expect("id"));
    for (name, value) in &reply.headers {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("header name");
        response.headers_mut().append(name, HeaderValue::from_str(value).expect("header value"));
    }
    response
}

async fn other_request(State(shared): State<Arc<Shared>>, method: Method, uri: Uri) -> Response {
    shared.other.lock().expect("other").push(format!("{method} {uri}"));
    let body = r#"{"error":{"type":"not_found","message":"fake API: not found"}}"#;
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    response
}

fn plain(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}
