//! `/api/v1/workflows…`, `/health` and `/shutdown`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};

use crate::diagram::layout::layout;
use crate::diagram::{self, NodeKind, Style};
use crate::lint::source::LintedWorkflow;
use crate::serve::api::{ApiError, Shared};
use crate::serve::registry::WorkflowEntry;

pub(super) async fn health(State(app): State<Shared>) -> Json<Value> {
    Json(json!({
        "version": env!("CARGO_PKG_VERSION"),
        "runs_live": app.supervisor.live_count(),
        "workflows": app.registry.list().len(),
    }))
}

pub(super) async fn shutdown(State(app): State<Shared>) -> impl IntoResponse {
    let _ = app.shutdown.send(true);
    (StatusCode::ACCEPTED, Json(json!({"stopping": true})))
}

pub(super) async fn list(State(app): State<Shared>) -> Json<Value> {
    Json(json!({"workflows": app.registry.list()}))
}

pub(super) async fn rescan(State(app): State<Shared>) -> Json<Value> {
    let entries = tokio::task::block_in_place(|| app.registry.rescan());
    app.daemon_events.publish("workflows", json!({"workflows": entries.len()}));
    Json(json!({"workflows": entries}))
}

pub(super) async fn get_one(State(app): State<Shared>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let entry = app.registry.get(&id).ok_or_else(|| {
        ApiError::not_found(format!("no workflow `{id}` under the roots; GET /api/v1/workflows lists them"))
    })?;
    let (states, drawn) = tokio::task::block_in_place(|| described(&entry))?;
    let mut body = serde_json::to_value(&entry).unwrap_or_default();
    if let Some(object) = body.as_object_mut() {
        object.insert("states".into(), json!(states));
        object.insert("diagram".into(), drawn);
    }
    Ok(Json(body))
}

/// The workflow's state files and its graph, laid out.
pub(crate) fn described(entry: &WorkflowEntry) -> Result<(Vec<String>, Value), ApiError> {
    let workflow = LintedWorkflow::open(&entry.path, entry.id.clone())
        .map_err(|error| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, error.to_string()))?;
    let drawn = diagram::build(&workflow);
    let placed = layout(&drawn);
    let nodes: Vec<Value> = drawn
        .nodes
        .iter()
        .filter_map(|node| {
            let at = placed.nodes.get(&node.id)?;
            Some(json!({
                "id": node.id, "name": node.name, "kind": kind_name(node.kind), "file": node.file,
                "backend": node.backend,
                "x": at.x, "y": at.y, "width": at.width, "height": at.height,
            }))
        })
        .collect();
    let edges: Vec<Value> = drawn
        .edges
        .iter()
        .zip(&placed.edges)
        .map(|(edge, curve)| {
            json!({
                "from": edge.from, "to": edge.to, "label": edge.label,
                "style": match edge.style { Style::Solid => "solid", Style::Dashed => "dashed" },
                "path": curve.path, "label_x": curve.label_at.0, "label_y": curve.label_at.1,
            })
        })
        .collect();
    let diagram = json!({"width": placed.width, "height": placed.height, "nodes": nodes, "edges": edges});
    Ok((workflow.listing.clone(), diagram))
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Start => "start",
        NodeKind::Prompt => "prompt",
        NodeKind::Script => "script",
        NodeKind::Missing => "missing",
        NodeKind::Workflow => "workflow",
        NodeKind::End => "end",
    }
}
