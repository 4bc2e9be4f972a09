//! The coordinator's side of Restate: HTTP/1.1 to the server's ingress, through
//! the hyper Baton already has (no second HTTP stack). It sends a step as a
//! request-response call of `BatonStep/run` with the step's idempotency key —
//! a re-sent key attaches to the invocation already under way, or gets the result
//! it already has — and checks, before a run's first step, that the URL is a
//! Restate ingress that knows `BatonStep`.

use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

use crate::distributed::protocol::{HANDLER, SERVICE};

/// A reply never exceeds this (the step's reply is bounded to 8 MiB; the rest is room).
const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

/// How long a check of the server may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request to the ingress did not give an answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IngressError {
    /// No HTTP answer (refused, reset, timed out): the server may come back.
    #[error("{0}")]
    Transport(String),
    /// An HTTP answer other than success.
    #[error("HTTP {status}: {body}")]
    Status { status: u16, body: String },
}

impl IngressError {
    /// Worth sending again: the server is down, restarting or overloaded.
    pub(crate) fn is_transient(&self) -> bool {
        match self {
            IngressError::Transport(_) => true,
            IngressError::Status { status, .. } => *status >= 500 || *status == 429 || *status == 408,
        }
    }
}

/// Why the server at `--engine restate=URL` cannot run the steps.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CheckError {
    #[error(
        "cannot reach the Restate ingress at {url}: {reason}; start the server (`npx @restatedev/restate-server`) or correct --engine restate=URL"
    )]
    Unreachable { url: String, reason: String },
    #[error(
        "{url} does not look like a Restate ingress ({what}); --engine restate=URL takes the server's ingress URL (port 8080 by default)"
    )]
    NotRestate { url: String, what: String },
    #[error(
        "the Restate server at {url} has no `BatonStep` service: start a worker with `baton worker --listen ADDR --register ADMIN_URL` (ADMIN_URL is the server's admin API, port 9070 by default)"
    )]
    NotRegistered { url: String },
}

#[derive(Clone)]
pub(crate) struct Ingress {
    url: String,
    client: Client<HttpConnector, Full<Bytes>>,
}

/// The text of a response body, bounded, for messages: an HTML page is named, not quoted.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        "an empty body".to_string()
    } else if text.starts_with('<') {
        "an HTML page".to_string()
    } else {
        format!("`{text}`")
    }
}

impl Ingress {
    pub(crate) fn new(url: &str) -> Ingress {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        connector.set_connect_timeout(Some(Duration::from_secs(10)));
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ingress { url: url.trim_end_matches('/').to_string(), client }
    }

    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// One request; the status and the body (bounded).
    async fn request(
        &self,
        method: hyper::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Bytes,
    ) -> Result<(u16, Bytes), IngressError> {
        let mut builder = hyper::Request::builder().method(method).uri(format!("{}{path}", self.url));
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        let request = builder.body(Full::new(body)).map_err(|error| IngressError::Transport(error.to_string()))?;
        let response = self.client.request(request).await.map_err(|error| {
            // The legacy client's own text is "client error (Connect)": the innermost
            // cause ("Connection refused (os error 111)") says what happened.
            let mut reason = error.to_string();
            let mut source = std::error::Error::source(&error);
            while let Some(cause) = source {
                reason = cause.to_string();
                source = cause.source();
            }
            IngressError::Transport(reason)
        })?;
        let status = response.status().as_u16();
        let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|error| IngressError::Transport(format!("reading the answer: {error}")))?
            .to_bytes();
        Ok((status, body))
    }

    /// `POST path` with a JSON `body` (the admin API's `/deployments`): status and body.
    pub(crate) async fn post_json(&self, path: &str, body: String) -> Result<(u16, Bytes), IngressError> {
        self.request(hyper::Method::POST, path, &[("content-type", "application/json")], Bytes::from(body)).await
    }

    /// `GET path` (the admin API's `/version`): status and body.
    pub(crate) async fn get(&self, path: &str) -> Result<(u16, Bytes), IngressError> {
        self.request(hyper::Method::GET, path, &[], Bytes::new()).await
    }

    /// Call `BatonStep/run` with `body` (a `StepRequest`) under `key`; the reply's bytes.
    pub(crate) async fn call_step(&self, key: &str, body: Bytes) -> Result<Bytes, IngressError> {
        let headers = [("content-type", "application/json"), ("idempotency-key", key)];
        let (status, reply) =
            self.request(hyper::Method::POST, &format!("/{SERVICE}/{HANDLER}"), &headers, body).await?;
        if (200..300).contains(&status) {
            Ok(reply)
        } else {
            // Restate's errors are `{"code": …, "message": "…"}`: the message is the news.
            let message = serde_json::from_slice::<serde_json::Value>(&reply)
                .ok()
                .and_then(|error| error.get("message").and_then(|message| message.as_str()).map(str::to_string));
            Err(IngressError::Status { status, body: message.unwrap_or_else(|| excerpt(&reply)) })
        }
    }

    /// Before a run's first step: the ingress answers, is Restate's, and knows
    /// `BatonStep` (its `/restate/health` lists the services it can call).
    pub(crate) async fn check(&self) -> Result<(), CheckError> {
        let url = self.url.clone();
        let answer =
            tokio::time::timeout(CHECK_TIMEOUT, self.request(hyper::Method::GET, "/restate/health", &[], Bytes::new()))
                .await
                .unwrap_or_else(|_| {
                    Err(IngressError::Transport(format!("no answer in {} s", CHECK_TIMEOUT.as_secs())))
                });
        let (status, body) =
            answer.map_err(|error| CheckError::Unreachable { url: url.clone(), reason: error.to_string() })?;
        let not_restate = |what: String| CheckError::NotRestate { url: url.clone(), what };
        if status != 200 {
            return Err(not_restate(format!("GET /restate/health answered HTTP {status}: {}", excerpt(&body))));
        }
        let services = serde_json::from_slice::<serde_json::Value>(&body)
            .ok()
            .and_then(|health| health.get("services").and_then(|list| list.as_array()).cloned())
            .ok_or_else(|| not_restate(format!("GET /restate/health answered: {}", excerpt(&body))))?;
        if services.iter().any(|service| service.as_str() == Some(SERVICE)) {
            Ok(())
        } else {
            Err(CheckError::NotRegistered { url })
        }
    }
}
