//! `/api/v1/runs/{id}/steps…`: the timeline of a run, and one step in full.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use crate::inspect::trace_file::{read_complete, trace_path};
use crate::inspect::transcript::StepCollector;
use crate::serve::api::{ApiError, Shared, known_run};
use crate::serve::step_detail::{self, StepDetail};

#[derive(Deserialize)]
pub(super) struct After {
    after: Option<u64>,
}

pub(super) async fn timeline(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Query(query): Query<After>,
) -> Result<Response, ApiError> {
    known_run(&app.store, &run_id)?;
    // Written straight to bytes while the timeline is at hand: a 10,000-step run's
    // answer is a megabyte, and a detour through `Value` doubled its cost.
    let bytes = tokio::task::block_in_place(|| {
        app.with_timeline(&run_id, |timeline| serde_json::to_vec(&timeline.view(query.after.unwrap_or(0))))
    })
    .map_err(|error| ApiError::internal(error.to_string()))?;
    let mut response = bytes.into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    Ok(response)
}

async fn detail_of(app: &Shared, run_id: &str, agent: &str, step: u64) -> Result<StepDetail, ApiError> {
    known_run(&app.store, run_id)?;
    if agent.is_empty() || !agent.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-') {
        return Err(ApiError::bad_request(format!("`{agent}` is no agent id")));
    }
    let path = trace_path(&app.store.run_dir(run_id));
    let trace = tokio::task::block_in_place(|| read_complete(&path))
        .map_err(|error| ApiError::internal(format!("cannot read {}: {error}", path.display())))?;
    let mut collector = StepCollector::new(agent, step);
    for line in trace.lines() {
        collector.add(line);
    }
    if !collector.found() {
        let valid = collector.what_exists("");
        return Err(ApiError::not_found(format!("run `{run_id}` has no step {step} of agent `{agent}`: {valid}")));
    }
    Ok(step_detail::detail(&collector, agent, step))
}

pub(super) async fn detail(
    State(app): State<Shared>,
    Path((run_id, agent, step)): Path<(String, String, u64)>,
) -> Result<Json<StepDetail>, ApiError> {
    detail_of(&app, &run_id, &agent, step).await.map(Json)
}
