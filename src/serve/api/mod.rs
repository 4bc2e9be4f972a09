//! The HTTP API under `/api/v1` (`docs/serve.md`): the router, the shared state
//! the handlers work on, and the one error type every handler answers with.

mod asks;
mod events;
mod runs;
mod stepping;
mod steps;
mod workflows;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::sync::watch;

pub(crate) use events::{DaemonEvents, watch_runs};

use crate::inspect::trace_file::{TraceTail, trace_path};
use crate::serve::feed::Feeds;
use crate::serve::metrics::DaemonMetrics;
use crate::serve::registry::Registry;
use crate::serve::supervisor::Supervisor;
use crate::serve::timeline::Timeline;
use crate::store::runs::{RunStore, StoreError};

/// What every handler works on.
pub(crate) struct App {
    pub(crate) store: RunStore,
    /// Where the daemon was started: runs start here unless they say otherwise.
    pub(crate) project: PathBuf,
    pub(crate) registry: Registry,
    pub(crate) supervisor: Arc<Supervisor>,
    pub(crate) feeds: Arc<Feeds>,
    pub(crate) daemon_events: Arc<DaemonEvents>,
    /// Set to stop the daemon.
    pub(crate) shutdown: watch::Sender<bool>,
    /// What `GET /metrics` says about the daemon itself.
    pub(crate) metrics: Arc<DaemonMetrics>,
    timelines: Mutex<HashMap<String, FollowedTimeline>>,
    /// Stopped agents a client continued (`stepping`): of two, the first wins.
    pub(crate) claims: stepping::Claims,
}

/// A run's timeline and where in its trace it is.
type FollowedTimeline = Arc<Mutex<(TraceTail, Timeline)>>;

impl App {
    pub(crate) fn new(
        store: RunStore,
        project: PathBuf,
        registry: Registry,
        supervisor: Arc<Supervisor>,
        shutdown: watch::Sender<bool>,
    ) -> App {
        let feeds = Feeds::new(store.clone());
        let daemon_events = DaemonEvents::new();
        App {
            store,
            project,
            registry,
            supervisor,
            feeds,
            daemon_events,
            shutdown,
            metrics: DaemonMetrics::new(),
            timelines: Mutex::new(HashMap::new()),
            claims: stepping::Claims::default(),
        }
    }

    /// Run `run_id`'s timeline, brought up to date with its trace.
    pub(crate) fn with_timeline<T>(&self, run_id: &str, read: impl FnOnce(&Timeline) -> T) -> T {
        let entry = {
            let mut timelines = self.timelines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            Arc::clone(timelines.entry(run_id.to_string()).or_insert_with(|| {
                Arc::new(Mutex::new((TraceTail::new(trace_path(&self.store.run_dir(run_id))), Timeline::default())))
            }))
        };
        let mut entry = entry.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (tail, timeline) = &mut *entry;
        if let Ok(text) = tail.read_new() {
            timeline.add(&text);
        }
        read(timeline)
    }

    /// Forget a deleted run's timeline.
    pub(crate) fn forget(&self, run_id: &str) {
        self.timelines.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(run_id);
    }
}

/// An answer other than success: a status and `{"error": message}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into() }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub(crate) fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({"error": self.message}))).into_response()
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        match error {
            StoreError::NotFound { .. } => ApiError::not_found(error.to_string()),
            // The run's files, not the daemon, are at fault.
            StoreError::TooNew { .. } => ApiError::conflict(error.to_string()),
            damaged if damaged.is_damage() => ApiError::conflict(format!(
                "the run cannot be read: {damaged}; DELETE removes it (as `baton gc --unreadable` does)"
            )),
            other => ApiError::internal(other.to_string()),
        }
    }
}

/// Every error answer as JSON, `{"error": …}`, whoever made it: axum's own
/// rejections (a path segment or query that does not parse, a method a path does
/// not take) are plain text or empty, and a client should not have to tell them
/// from the daemon's own.
pub(crate) async fn errors_as_json(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let message = if !text.is_empty() {
        text
    } else if status == StatusCode::METHOD_NOT_ALLOWED {
        "this path does not take that method (docs/serve.md lists the calls)".to_string()
    } else {
        status.canonical_reason().unwrap_or("error").to_string()
    };
    let mut answer = ApiError::new(status, message).into_response();
    // Headers such as `Allow` or `WWW-Authenticate` stay.
    for (name, value) in &parts.headers {
        if name != axum::http::header::CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            answer.headers_mut().insert(name.clone(), value.clone());
        }
    }
    answer
}

/// A path no route serves.
pub(crate) async fn no_such_path(uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!(
        "no such path `{}`: the API is under /api/v1 (docs/serve.md), the page at /",
        uri.path()
    ))
}

/// A JSON request body; a body that is not one (bad JSON, an unknown field, a
/// missing one) is answered as every error is, `{"error": …}`.
pub(crate) struct Body<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Body<T>, ApiError> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|error| ApiError::new(error.status(), error.body_text()))?;
        parse_body(&bytes).map(Body)
    }
}

/// A request body that may be left out (`{}` then).
pub(crate) struct OptionalBody<T>(pub(crate) T);

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for OptionalBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<OptionalBody<T>, ApiError> {
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|error| ApiError::new(error.status(), error.body_text()))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalBody(T::default()));
        }
        parse_body(&bytes).map(OptionalBody)
    }
}

fn parse_body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|error| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("the request body is not what this call takes: {error}"),
        )
    })
}

/// A run id from a request: well formed (so it names a directory under
/// `.baton/runs` and nothing else), and of an existing run.
pub(crate) fn known_run(store: &RunStore, run_id: &str) -> Result<(), ApiError> {
    crate::ids::RunId::parse(run_id).map_err(|error| ApiError::bad_request(error.to_string()))?;
    if !store.exists(run_id) {
        return Err(ApiError::not_found(format!("no run `{run_id}`; GET /api/v1/runs lists them")));
    }
    Ok(())
}

pub(crate) type Shared = Arc<App>;

/// Every route of the API.
pub(crate) fn router(app: Shared) -> Router {
    Router::new()
        .route("/metrics", get(crate::serve::metrics::metrics))
        .route("/api/v1/health", get(workflows::health))
        .route("/api/v1/shutdown", post(workflows::shutdown))
        .route("/api/v1/workflows", get(workflows::list))
        .route("/api/v1/workflows/rescan", post(workflows::rescan))
        .route("/api/v1/workflows/{id}", get(workflows::get_one))
        .route("/api/v1/runs", get(runs::list).post(runs::create))
        .route("/api/v1/runs/{id}", get(runs::get_one).delete(runs::delete))
        .route("/api/v1/runs/{id}/cancel", post(runs::cancel))
        .route("/api/v1/runs/{id}/agents/{agent}/continue", post(stepping::continue_agent))
        .route("/api/v1/runs/{id}/agents/{agent}/next", get(stepping::next))
        .route("/api/v1/runs/{id}/breakpoints", post(stepping::set_breakpoints))
        .route("/api/v1/runs/{id}/resume", post(runs::resume_run))
        .route("/api/v1/runs/{id}/rerun", post(runs::rerun))
        .route("/api/v1/runs/{id}/rerun-steps", get(runs::rerun_steps))
        .route("/api/v1/runs/{id}/report", get(runs::report))
        .route("/api/v1/runs/{id}/diagram", get(runs::diagram))
        .route("/api/v1/runs/{id}/steps", get(steps::timeline))
        .route("/api/v1/runs/{id}/steps/{agent}/{step}", get(steps::detail))
        .route("/api/v1/runs/{id}/asks", get(asks::list_for_run))
        .route(
            "/api/v1/runs/{id}/asks/{ask_id}",
            post(asks::answer).layer(DefaultBodyLimit::max((asks::MAX_TOTAL_BYTES + 1024 * 1024) as usize)),
        )
        .route("/api/v1/runs/{id}/asks/{ask_id}/files/{name}", get(asks::display_file))
        .route("/api/v1/asks", get(asks::list_all))
        .route("/api/v1/runs/{id}/events", get(events::run_events))
        .route("/api/v1/events", get(events::daemon_events))
        .with_state(app)
}
