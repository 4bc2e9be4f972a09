//! `GET /metrics` (issue 23): the daemon in Prometheus's text format
//! (OpenMetrics, as the Prometheus project's own `prometheus-client` writes it),
//! behind the same token as the API (`docs/serve.md`).
//!
//! What the daemon counts itself lives here for its lifetime: requests by method
//! and status code, event-stream clients. What describes the runs is read from
//! the store at each scrape (runs by status, live agents, steps, cost), so a run
//! started at a terminal counts as one the daemon started; the step-duration
//! histogram reads each run's trace once, then only what it gained
//! ([`RunDurations`]), so a scrape costs what happened since the last one.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::events::Event;
use crate::inspect::trace_file::{TraceTail, trace_path};
use crate::model::agent::AgentStatus;
use crate::model::run_state::RunStatus;
use crate::serve::api::{ApiError, Shared};

/// The step-duration buckets, in seconds: a script takes milliseconds, a model
/// turn seconds to minutes.
const DURATION_BUCKETS: [f64; 12] = [0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0];

/// The content type of the OpenMetrics text `prometheus-client` writes.
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: String,
}

/// One run's step durations so far, and where its trace was read to.
struct RunDurations {
    tail: TraceTail,
    /// Milliseconds, one per completed step.
    steps_ms: Vec<u64>,
}

/// What the daemon counts about itself.
pub(crate) struct DaemonMetrics {
    requests: Family<RequestLabels, Counter>,
    /// Event-stream (SSE) clients connected now.
    sse_clients: Arc<AtomicU64>,
    durations: Mutex<HashMap<String, RunDurations>>,
}

impl DaemonMetrics {
    pub(crate) fn new() -> Arc<DaemonMetrics> {
        Arc::new(DaemonMetrics {
            requests: Family::default(),
            sse_clients: Arc::new(AtomicU64::new(0)),
            durations: Mutex::new(HashMap::new()),
        })
    }

    /// A client of an event stream, counted until the value is dropped.
    pub(crate) fn sse_client(&self) -> SseClient {
        self.sse_clients.fetch_add(1, Ordering::Relaxed);
        SseClient(Arc::clone(&self.sse_clients))
    }

    fn durations_of(&self, run_dir: &std::path::Path, run_id: &str) -> Vec<u64> {
        let mut all = self.durations.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let run = all
            .entry(run_id.to_string())
            .or_insert_with(|| RunDurations { tail: TraceTail::new(trace_path(run_dir)), steps_ms: Vec::new() });
        if let Ok(text) = run.tail.read_new() {
            for line in text.lines().filter(|line| line.contains("\"StateCompleted\"")) {
                if let Ok(Event::StateCompleted { duration_ms, .. }) = serde_json::from_str::<Event>(line) {
                    run.steps_ms.push(duration_ms);
                }
            }
        }
        run.steps_ms.clone()
    }

    /// Forget runs that are gone (`baton gc`, `DELETE`).
    fn keep_only(&self, run_ids: &[String]) {
        let mut all = self.durations.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        all.retain(|run_id, _| run_ids.contains(run_id));
    }
}

/// One connected event-stream client (see [`DaemonMetrics::sse_client`]).
pub(crate) struct SseClient(Arc<AtomicU64>);

impl Drop for SseClient {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Count every request by method and status code (the refused ones too).
pub(crate) async fn count_requests(
    State(metrics): State<Arc<DaemonMetrics>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.method().as_str().to_string();
    let response = next.run(request).await;
    let labels = RequestLabels { method, code: response.status().as_u16().to_string() };
    metrics.requests.get_or_create(&labels).inc();
    response
}

/// `GET /metrics`.
pub(crate) async fn metrics(State(app): State<Shared>) -> Result<Response, ApiError> {
    let text = tokio::task::block_in_place(|| scrape(&app));
    let mut response = text.into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    Ok(response)
}

fn scrape(app: &Shared) -> String {
    let metrics = &app.metrics;
    let mut registry = Registry::with_prefix("baton");
    let runs = Family::<StatusLabels, Gauge>::default();
    let live_agents = Gauge::<i64>::default();
    let steps = Counter::<u64>::default();
    let cost = Counter::<f64, AtomicU64>::default();
    let durations = Histogram::new(DURATION_BUCKETS);
    let listed = app.store.list();
    let ids: Vec<String> = listed.iter().map(|(run_id, _)| run_id.clone()).collect();
    for (run_id, state) in &listed {
        let status = match state {
            Ok(state) => {
                steps.inc_by(state.steps_completed);
                cost.inc_by(state.total_cost_usd.max(0.0));
                if state.status == RunStatus::Running {
                    let live = state.agents.iter().filter(|agent| agent.status == AgentStatus::Active).count();
                    live_agents.inc_by(i64::try_from(live).unwrap_or(i64::MAX));
                }
                serde_json::to_value(state.status)
                    .ok()
                    .and_then(|value| value.as_str().map(str::to_string))
                    .unwrap_or_default()
            }
            Err(_) => "unreadable".to_string(),
        };
        runs.get_or_create(&StatusLabels { status }).inc();
        for ms in metrics.durations_of(&app.store.run_dir(run_id), run_id) {
            durations.observe(ms as f64 / 1000.0);
        }
    }
    metrics.keep_only(&ids);
    let sse = Gauge::<i64>::default();
    sse.set(i64::try_from(metrics.sse_clients.load(Ordering::Relaxed)).unwrap_or(i64::MAX));
    registry.register("runs", "Runs in the project, by status", runs);
    registry.register("live_agents", "Agents of running runs that are running a step or about to", live_agents);
    registry.register("steps", "Steps completed, over every run", steps);
    registry.register("cost_usd", "What every run spent, in US dollars", cost);
    registry.register("step_duration_seconds", "How long steps took", durations);
    registry.register("sse_clients", "Event-stream clients connected now", sse);
    registry.register("http_requests", "HTTP requests answered, by method and status code", metrics.requests.clone());
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut text, &registry);
    text
}
