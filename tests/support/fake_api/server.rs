//! The fake API's server: first matching rule answers, every request is logged
//! with the rule that answered it.

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

use super::{FakeReply, RequestFacts, Rule, WireFormat};

/// The text answered when no rule matches.
pub(crate) const NO_RULE_MATCHED: &str = "FAKE: no rule matched";

/// One request the fake received, with how it was answered.
#[derive(Clone, Debug)]
pub(crate) struct Recorded<V> {
    pub(crate) view: V,
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
pub(crate) struct FakeServer<W: WireFormat> {
    url: String,
    shared: Arc<Shared<W>>,
    runtime: Option<tokio::runtime::Runtime>,
}

struct Shared<W: WireFormat> {
    /// Rules with how often each has fired, in match order.
    rules: Mutex<Vec<(Rule<W>, usize)>>,
    log: Mutex<Vec<Recorded<W::View>>>,
    /// Requests to anything but `POST W::PATH`, as `METHOD /path`.
    other: Mutex<Vec<String>>,
    started: Instant,
    started_nanos: u64,
    serial: AtomicU64,
}

impl<W: WireFormat> FakeServer<W> {
    /// Start serving `rules` (first match wins) on `127.0.0.1:<free port>`.
    pub(crate) fn start(rules: Vec<Rule<W>>) -> FakeServer<W> {
        let shared = Arc::new(Shared {
            rules: Mutex::new(rules.into_iter().map(|rule| (rule, 0)).collect()),
            log: Mutex::new(Vec::new()),
            other: Mutex::new(Vec::new()),
            started: Instant::now(),
            started_nanos: SystemTime::now().duration_since(UNIX_EPOCH).map(|now| now.as_nanos() as u64).unwrap_or(0),
            serial: AtomicU64::new(0),
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(W::NAME)
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
            .route(W::PATH, post(answer::<W>))
            .fallback(other_request::<W>)
            .with_state(Arc::clone(&shared));
        runtime.spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                eprintln!("{} stopped: {error}", W::NAME);
            }
        });
        FakeServer { url, shared, runtime: Some(runtime) }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        self.url.clone()
    }

    /// Add a rule after the existing ones.
    pub(crate) fn push_rule(&self, rule: Rule<W>) {
        self.shared.rules.lock().expect("rules").push((rule, 0));
    }

    /// Every `POST` to the API's path so far, in arrival order.
    pub(crate) fn requests(&self) -> Vec<Recorded<W::View>> {
        self.shared.log.lock().expect("log").clone()
    }

    /// The requests answered by rules named `name`.
    pub(crate) fn requests_for(&self, name: &str) -> Vec<Recorded<W::View>> {
        self.requests().into_iter().filter(|request| request.rule.as_deref() == Some(name)).collect()
    }

    /// How many requests rules named `name` answered.
    pub(crate) fn fired(&self, name: &str) -> usize {
        self.requests_for(name).len()
    }

    /// The requests no rule matched (answered with [`NO_RULE_MATCHED`]).
    pub(crate) fn unmatched(&self) -> Vec<Recorded<W::View>> {
        self.requests().into_iter().filter(|request| request.rule.is_none()).collect()
    }

    /// Requests to anything but `POST` to the API's path, as `METHOD /path?query`.
    pub(crate) fn other_requests(&self) -> Vec<String> {
        self.shared.other.lock().expect("other").clone()
    }

    /// All requests, one line each, for assertion messages.
    pub(crate) fn summary(&self) -> String {
        self.requests()
            .iter()
            .map(|request| {
                format!(
                    "{:>6} ms  {}  rule={:?}  round={}  fresh={}  {}  prompt={:?}",
                    request.received_at.as_millis(),
                    request.status,
                    request.rule,
                    request.view.round(),
                    request.view.is_fresh(),
                    request.view.conversation(),
                    request.view.prompt().chars().take(80).collect::<String>(),
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl<W: WireFormat> Drop for FakeServer<W> {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Don't wait for replies still sleeping in a delay.
            runtime.shutdown_background();
        }
    }
}

async fn answer<W: WireFormat>(State(shared): State<Arc<Shared<W>>>, headers: HeaderMap, body: Bytes) -> Response {
    let raw: Value = match serde_json::from_slice(&body) {
        Ok(raw) => raw,
        Err(error) => return plain_response(StatusCode::BAD_REQUEST, format!("fake API: body is not JSON: {error}")),
    };
    let view = W::view(&raw, &headers);
    let (rule, reply) = {
        let mut rules = shared.rules.lock().expect("rules");
        match rules.iter_mut().find(|(rule, fired)| rule.matches(&view, *fired)) {
            Some((rule, fired)) => {
                *fired += 1;
                (Some(rule.name().to_string()), rule.reply_for(&view))
            }
            None => (None, W::Reply::blank().add_text(NO_RULE_MATCHED)),
        }
    };
    let serial = W::serial(shared.started_nanos, shared.serial.fetch_add(1, Ordering::Relaxed));
    shared.log.lock().expect("log").push(Recorded {
        view: view.clone(),
        raw,
        headers: headers
            .iter()
            .map(|(name, value)| (name.as_str().to_string(), value.to_str().unwrap_or_default().to_string()))
            .collect(),
        rule,
        status: reply.status(),
        received_at: shared.started.elapsed(),
    });
    if !reply.pause().is_zero() {
        tokio::time::sleep(reply.pause()).await;
    }
    let mut response = match reply.error_json() {
        Some(body) => {
            let mut response = Response::new(Body::from(body));
            *response.status_mut() = StatusCode::from_u16(reply.status()).expect("HTTP status");
            response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
            response
        }
        None => {
            let mut response = Response::new(Body::from(W::sse(&reply, &view, &serial)));
            response.headers_mut().insert("content-type", HeaderValue::from_static(W::SSE_CONTENT_TYPE));
            response.headers_mut().insert("cache-control", HeaderValue::from_static("no-cache"));
            response
        }
    };
    let request_id = HeaderValue::from_str(&format!("req_fake_{serial}")).expect("request id");
    response.headers_mut().insert(W::REQUEST_ID_HEADER, request_id);
    for (name, value) in reply.extra_headers() {
        let name = HeaderName::from_bytes(name.as_bytes()).expect("header name");
        response.headers_mut().append(name, HeaderValue::from_str(value).expect("header value"));
    }
    response
}

async fn other_request<W: WireFormat>(State(shared): State<Arc<Shared<W>>>, method: Method, uri: Uri) -> Response {
    shared.other.lock().expect("other").push(format!("{method} {uri}"));
    W::other_request(&method, &uri)
}

/// A response with `text` as its body.
pub(crate) fn plain_response(status: StatusCode, text: String) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}

/// A response with the JSON `body`.
pub(crate) fn json_response(status: StatusCode, body: &str) -> Response {
    let mut response = plain_response(status, body.to_string());
    response.headers_mut().insert("content-type", HeaderValue::from_static("application/json"));
    response
}
