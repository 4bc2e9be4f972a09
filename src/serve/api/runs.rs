//! `/api/v1/runs…`: list, create, inspect, cancel, resume, rerun and delete runs.
//! Each state-changing call answers with the equivalent command line (`command`),
//! so what the page does can always be done, or scripted, without it.

use std::path::{Path as FilePath, PathBuf};

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::inspect::report::{ReportDocument, report as build_report};
use crate::inspect::trace_file::{read_complete, trace_path};
use crate::model::run_state::{RunState, RunStatus};
use crate::process::group::signal_process;
use crate::serve::api::{ApiError, App, Body, OptionalBody, Shared, known_run};
use crate::serve::supervisor::{
    LaunchError, ResumeOptions, bounds, command_line, resume_args, served_record, shell_quote,
};
use crate::store::lock::RunLock;
use crate::store::removal::{DeleteError, delete_run};
use crate::store::rerun::History;
use crate::store::runs::StoreError;
use crate::text::duration::parse_duration;
use crate::workflow::target::clean_lexically;

/// A run's entry in lists and in the daemon's event stream.
pub(crate) fn summary(app: &App, run: &RunState) -> Value {
    let run_id = run.run_id.to_string();
    let holder = RunLock::holder(&app.store.run_dir(&run_id));
    summary_when(app, run, live(app, &run_id, holder.as_deref()))
}

/// A run's entry, for an answer that has read whether the run is `live` already.
fn summary_when(app: &App, run: &RunState, live: bool) -> Value {
    let run_id = run.run_id.to_string();
    json!({
        "run_id": run_id,
        "status": run.status.to_string(),
        "workflow": run.scope_dir,
        "workflow_id": app.registry.id_of(&run.scope_dir),
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "steps": run.steps_completed,
        "cost_usd": run.total_cost_usd,
        "duration_ms": run.elapsed_ms,
        "agents": run.agents.len() + run.terminated.len(),
        "asking": run.asking_agents().len(),
        "live": live,
        "served": app.supervisor.served(&run_id),
        "error": run.error,
    })
}

/// Whether a baton drives the run: one holds its lock (`holder`), or this daemon's
/// child for it has not ended yet. A child lets go of the lock a moment before it
/// exits, and until then a resume is refused as `Busy`: a client that waits for
/// `live: false` can resume at once.
fn live(app: &App, run_id: &str, holder: Option<&str>) -> bool {
    holder.is_some() || app.supervisor.drives(run_id)
}

/// The list entry of a run whose files cannot be read: `unreadable`, and why.
fn unreadable_summary(app: &App, run_id: &str, error: &StoreError) -> Value {
    json!({
        "run_id": run_id,
        "status": "unreadable",
        "workflow": null,
        "workflow_id": null,
        "live": live(app, run_id, RunLock::holder(&app.store.run_dir(run_id)).as_deref()),
        "served": app.supervisor.served(run_id),
        "error": error.to_string(),
    })
}

#[derive(Deserialize)]
pub(super) struct ListQuery {
    status: Option<String>,
    workflow: Option<String>,
    since: Option<String>,
}

pub(super) async fn list(State(app): State<Shared>, Query(query): Query<ListQuery>) -> Result<Json<Value>, ApiError> {
    let status = match &query.status {
        Some(text) => Some(RunStatus::parse(text).map_err(ApiError::bad_request)?),
        None => None,
    };
    let since = match &query.since {
        Some(text) => Some(text.parse::<jiff::Timestamp>().map_err(|error| {
            ApiError::bad_request(format!("since=`{text}` is no RFC 3339 time (2026-11-01T00:00:00Z): {error}"))
        })?),
        None => None,
    };
    let runs = tokio::task::block_in_place(|| app.store.list_in_order());
    let mut listed = Vec::new();
    // Unreadable runs first, then the readable ones newest first: the runs a person
    // looks for are the recent ones, and a damaged one needs attention.
    for (run_id, loaded) in runs.into_iter().rev() {
        let run = match loaded {
            Ok(run) => run,
            Err(error) => {
                if status.is_none() && query.workflow.is_none() && query.since.is_none() {
                    listed.push(unreadable_summary(&app, &run_id, &error));
                }
                continue;
            }
        };
        if status.is_some_and(|status| run.status != status) {
            continue;
        }
        if let Some(since) = since
            && run.created_at.parse::<jiff::Timestamp>().is_ok_and(|created| created < since)
        {
            continue;
        }
        let entry = summary(&app, &run);
        if let Some(workflow) = &query.workflow
            && entry["workflow_id"].as_str() != Some(workflow.as_str())
        {
            continue;
        }
        listed.push(entry);
    }
    Ok(Json(json!({"runs": listed})))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateRun {
    workflow: String,
    input: Option<String>,
    budget: Option<f64>,
    max_steps: Option<u64>,
    time_limit: Option<String>,
    cwd: Option<PathBuf>,
    run_id: Option<String>,
    /// Breakpoints (issue 24): states named as tags name them.
    #[serde(default)]
    break_before: Vec<String>,
    #[serde(default)]
    break_after: Vec<String>,
    #[serde(default)]
    step: bool,
}

fn check_bounds(budget: Option<f64>, max_steps: Option<u64>, time_limit: Option<&str>) -> Result<(), ApiError> {
    if budget.is_some_and(|budget| !budget.is_finite() || budget < 0.0) {
        return Err(ApiError::bad_request("budget must be a number of US dollars, 0 or more"));
    }
    if max_steps == Some(0) {
        return Err(ApiError::bad_request("max_steps must be 1 or more"));
    }
    if let Some(limit) = time_limit {
        parse_duration(limit).map_err(|error| ApiError::bad_request(format!("time_limit `{limit}`: {error}")))?;
    }
    Ok(())
}

/// A working directory a request names: an existing directory inside the
/// project or one of the roots.
fn allowed_cwd(app: &App, cwd: &FilePath) -> Result<PathBuf, ApiError> {
    if !cwd.is_absolute() {
        return Err(ApiError::bad_request(format!("cwd `{}` must be an absolute path", cwd.display())));
    }
    let clean = clean_lexically(cwd);
    let real = clean
        .canonicalize()
        .map_err(|_| ApiError::bad_request(format!("cwd `{}` is not an existing directory", cwd.display())))?;
    if !real.is_dir() {
        return Err(ApiError::bad_request(format!("cwd `{}` is not a directory", cwd.display())));
    }
    let inside = std::iter::once(&app.project)
        .chain(app.registry.roots())
        .filter_map(|allowed| allowed.canonicalize().ok())
        .any(|allowed| real.starts_with(allowed));
    if !inside {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("cwd `{}` is outside the project and the roots this daemon serves", cwd.display()),
        ));
    }
    // Baton's own files (runs, the daemon's token and inputs) are no place to work in.
    if app.store.baton_dir().canonicalize().is_ok_and(|baton_dir| real.starts_with(baton_dir)) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!(
                "cwd `{}` is inside {}, which holds Baton's own files; pick a directory of the project",
                cwd.display(),
                app.store.baton_dir().display()
            ),
        ));
    }
    Ok(real)
}

/// A child that could not take its run, as an answer.
fn launch_refused(error: LaunchError) -> ApiError {
    match error {
        LaunchError::Refused(_) => ApiError::bad_request(error.to_string()),
        LaunchError::Busy(_) => ApiError::conflict(error.to_string()),
        LaunchError::Stopping => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, error.to_string()),
        LaunchError::Spawn(_) => ApiError::internal(error.to_string()),
    }
}

/// The id for a new run: the one asked for, if it is well formed and free, else a fresh one.
fn new_run_id(app: &App, requested: Option<String>) -> Result<String, ApiError> {
    match requested {
        Some(run_id) => {
            crate::ids::RunId::parse(&run_id).map_err(|error| ApiError::bad_request(error.to_string()))?;
            if app.store.run_dir(&run_id).exists() {
                return Err(ApiError::conflict(format!("run `{run_id}` exists already")));
            }
            Ok(run_id)
        }
        None => Ok(app.store.new_run_id()),
    }
}

pub(super) async fn create(
    State(app): State<Shared>,
    Body(request): Body<CreateRun>,
) -> Result<impl IntoResponse, ApiError> {
    let entry = app.registry.get(&request.workflow).ok_or_else(|| {
        ApiError::not_found(format!("no workflow `{}`; GET /api/v1/workflows lists them", request.workflow))
    })?;
    check_bounds(request.budget, request.max_steps, request.time_limit.as_deref())?;
    let cwd = match &request.cwd {
        Some(cwd) => allowed_cwd(&app, cwd)?,
        None => app.project.clone(),
    };
    let run_id = new_run_id(&app, request.run_id)?;
    // `--run-id=ID`: a run id may start with `-`, which would read as a flag.
    let mut args = vec!["run".to_string(), entry.path.display().to_string(), format!("--run-id={run_id}")];
    if let Some(input) = &request.input {
        args.extend(["--input".to_string(), input.clone()]);
    }
    bounds(&mut args, request.budget, request.max_steps, request.time_limit.as_deref());
    for (flag, names) in [("--break-before", &request.break_before), ("--break-after", &request.break_after)] {
        for name in names {
            crate::workflow::resolution::resolve_state(&entry.path, name)
                .map_err(|error| ApiError::bad_request(format!("breakpoint {name}: {error}")))?;
            args.push(format!("{flag}={name}"));
        }
    }
    if request.step {
        args.push("--step".to_string());
    }
    args.extend(["--on-ask".to_string(), "json".to_string(), "-q".to_string()]);
    app.supervisor.launch(&run_id, Some(entry.id.clone()), &args, &cwd).await.map_err(launch_refused)?;
    // Where it runs is part of the command: `cd DIR && baton run …`.
    let command = match &request.cwd {
        Some(_) => format!("cd {} && {}", shell_quote(&cwd.display().to_string()), command_line(&args)),
        None => command_line(&args),
    };
    Ok((StatusCode::CREATED, Json(json!({"run_id": run_id, "command": command}))))
}

pub(super) async fn get_one(State(app): State<Shared>, Path(run_id): Path<String>) -> Result<Json<Value>, ApiError> {
    known_run(&app.store, &run_id)?;
    // Read in the order a run writes them, backwards: who drives it, its state,
    // then its trace. A run writes its end, then the end's trace line, then lets go
    // of its lock; so an answer saying "not live" and "completed" has the whole
    // trace in `trace_seq`. Read trace first, and the run could end in between:
    // "completed", not live, and one line short.
    let (holder, live_now, run, trace_seq) = tokio::task::block_in_place(|| {
        let holder = RunLock::holder(&app.store.run_dir(&run_id));
        let live_now = live(&app, &run_id, holder.as_deref());
        let run = app.store.load(&run_id)?;
        let trace_seq = app.with_timeline(&run_id, |timeline| timeline.view(u64::MAX).trace_seq);
        Ok::<_, StoreError>((holder, live_now, run, trace_seq))
    })?;
    Ok(Json(json!({
        "run": run,
        // One answer, one reading of who drives the run.
        "summary": summary_when(&app, &run, live_now),
        "live": live_now,
        "pid": holder.and_then(|pid| pid.parse::<u32>().ok()),
        "served": app.supervisor.served(&run_id),
        "driven_here": app.supervisor.drives(&run_id),
        "trace_seq": trace_seq,
    })))
}

pub(super) async fn delete(State(app): State<Shared>, Path(run_id): Path<String>) -> Result<StatusCode, ApiError> {
    known_run(&app.store, &run_id)?;
    // A run whose files are damaged can never go on: it may be deleted as it is.
    let run = match app.store.load(&run_id) {
        Err(error) if error.is_damage() => None,
        loaded => Some(loaded?),
    };
    if let Some(run) = &run
        && !matches!(run.status, RunStatus::Completed | RunStatus::Failed)
    {
        return Err(ApiError::conflict(format!(
            "run `{run_id}` is {}: only a completed or failed run can be deleted",
            run.status
        )));
    }
    match tokio::task::block_in_place(|| delete_run(&app.store, &run_id, run.as_ref())) {
        Ok(()) => {}
        Err(DeleteError::Driven) => return Err(ApiError::conflict(format!("a baton drives run `{run_id}` now"))),
        Err(error) => return Err(ApiError::internal(error.to_string())),
    }
    let _ = std::fs::remove_file(served_record(&app.store.baton_dir().join("serve"), &run_id));
    app.forget(&run_id);
    app.daemon_events.publish("deleted", json!({"run_id": run_id}));
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct Cancel {
    agent: Option<String>,
}

pub(super) async fn cancel(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    OptionalBody(request): OptionalBody<Cancel>,
) -> Result<impl IntoResponse, ApiError> {
    known_run(&app.store, &run_id)?;
    if let Some(agent) = request.agent {
        app.supervisor.send(&run_id, &json!({"cancel_agent": agent})).await.map_err(|error| {
            ApiError::conflict(format!(
                "{error}: one agent can only be cancelled in a run this daemon drives; cancel the whole run instead"
            ))
        })?;
        let command = "(no command line: one agent is cancelled through the daemon)";
        return Ok((StatusCode::ACCEPTED, Json(json!({"agent": agent, "command": command}))));
    }
    let Some(pid) = RunLock::holder(&app.store.run_dir(&run_id)).and_then(|pid| pid.parse::<u32>().ok()) else {
        return Err(ApiError::conflict(format!("run `{run_id}` is not running: nothing to cancel")));
    };
    app.supervisor.mark_cancelled(&run_id);
    if !signal_process(pid, libc::SIGINT) {
        return Err(ApiError::internal(format!("cannot signal the baton driving run `{run_id}` (pid {pid})")));
    }
    Ok((StatusCode::ACCEPTED, Json(json!({"pid": pid, "command": format!("kill -INT {pid}")}))))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct Resume {
    budget: Option<f64>,
    max_steps: Option<u64>,
    time_limit: Option<String>,
}

pub(super) async fn resume_run(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    OptionalBody(request): OptionalBody<Resume>,
) -> Result<impl IntoResponse, ApiError> {
    known_run(&app.store, &run_id)?;
    check_bounds(request.budget, request.max_steps, request.time_limit.as_deref())?;
    let run = app.store.load(&run_id)?;
    let options = ResumeOptions {
        answer: None,
        budget: request.budget,
        max_steps: request.max_steps,
        time_limit: request.time_limit,
    };
    let args = resume(&app, &run, &options).await?;
    Ok((StatusCode::ACCEPTED, Json(json!({"run_id": run_id, "command": command_line(&args)}))))
}

/// Resume `run` in a child of the daemon, if it may be resumed now; the child's arguments.
pub(crate) async fn resume(app: &App, run: &RunState, options: &ResumeOptions) -> Result<Vec<String>, ApiError> {
    resumable(app, run)?;
    let args = resume_args(&run.run_id, options);
    app.supervisor.launch(&run.run_id, None, &args, &launch_cwd(app, run)).await.map_err(launch_refused)?;
    Ok(args)
}

/// A run that may be resumed now: not finished, not driven.
fn resumable(app: &App, run: &RunState) -> Result<(), ApiError> {
    if run.status == RunStatus::Completed {
        return Err(ApiError::conflict(format!("run `{}` has completed: nothing to resume", run.run_id)));
    }
    if let Some(pid) = RunLock::holder(&app.store.run_dir(&run.run_id)) {
        return Err(ApiError::conflict(format!("run `{}` is running now (baton pid {pid})", run.run_id)));
    }
    Ok(())
}

/// Where a resumed run's process starts: where the run was launched, if it is
/// still there.
fn launch_cwd(app: &App, run: &RunState) -> PathBuf {
    if run.launch_cwd.is_dir() { run.launch_cwd.clone() } else { app.project.clone() }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Rerun {
    from: u64,
    input: Option<String>,
    run_id: Option<String>,
    budget: Option<f64>,
}

pub(super) async fn rerun(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Body(request): Body<Rerun>,
) -> Result<impl IntoResponse, ApiError> {
    known_run(&app.store, &run_id)?;
    check_bounds(request.budget, None, None)?;
    let new_id = new_run_id(&app, request.run_id)?;
    let run = app.store.load(&run_id)?;
    let mut args = vec![
        "rerun".to_string(),
        run_id.clone(),
        "--from".to_string(),
        request.from.to_string(),
        format!("--run-id={new_id}"),
    ];
    if let Some(input) = &request.input {
        args.extend(["--input".to_string(), input.clone()]);
    }
    bounds(&mut args, request.budget, None, None);
    args.extend(["--on-ask".to_string(), "json".to_string(), "-q".to_string()]);
    let cwd = launch_cwd(&app, &run);
    let workflow_id = app.registry.id_of(&run.scope_dir);
    app.supervisor.launch(&new_id, workflow_id, &args, &cwd).await.map_err(launch_refused)?;
    Ok((StatusCode::CREATED, Json(json!({"run_id": new_id, "command": command_line(&args)}))))
}

pub(super) async fn rerun_steps(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    known_run(&app.store, &run_id)?;
    let history = tokio::task::block_in_place(|| History::read(&app.store.run_dir(&run_id)))?;
    let steps: Vec<Value> = history
        .steps()
        .into_iter()
        .map(|(commit, step)| {
            json!({
                "commit": commit, "agent": step.agent_id, "state": step.from_state,
                "tag": step.transition_type, "target": step.to_state, "attributes": step.metadata,
            })
        })
        .collect();
    Ok(Json(json!({"steps": steps, "first": history.first()})))
}

pub(super) async fn report(State(app): State<Shared>, Path(run_id): Path<String>) -> Result<Json<Value>, ApiError> {
    known_run(&app.store, &run_id)?;
    let run = app.store.load(&run_id)?;
    let path = trace_path(&app.store.run_dir(&run_id));
    let trace = tokio::task::block_in_place(|| read_complete(&path))
        .map_err(|error| ApiError::internal(format!("cannot read {}: {error}", path.display())))?;
    let figures = build_report(trace.lines());
    serde_json::to_value(ReportDocument::new(&run, &figures))
        .map(Json)
        .map_err(|error| ApiError::internal(error.to_string()))
}

/// `GET /api/v1/runs/{id}/diagram`: the run's workflow graph with how often each
/// state started and where its agents are (what `baton diagram --run` draws).
pub(super) async fn diagram(State(app): State<Shared>, Path(run_id): Path<String>) -> Result<Json<Value>, ApiError> {
    known_run(&app.store, &run_id)?;
    let run = app.store.load(&run_id)?;
    let label = run.scope_dir.file_name().map(|name| name.to_string_lossy().to_string()).unwrap_or_default();
    let entry = crate::serve::registry::WorkflowEntry::unlisted(&run.scope_dir, &label);
    let (_, mut drawn) = tokio::task::block_in_place(|| super::workflows::described(&entry))?;
    // Visits from the timeline the daemon keeps (one entry per step, retries
    // folded in): no second read of a long trace.
    let visits = tokio::task::block_in_place(|| app.with_timeline(&run_id, |timeline| timeline.visits()));
    if let Some(nodes) = drawn.get_mut("nodes").and_then(Value::as_array_mut) {
        for node in nodes {
            let Some(file) = node.get("file").and_then(Value::as_str).map(str::to_string) else { continue };
            let visits = visits.get(&file).copied().unwrap_or(0);
            let agents: Vec<String> = run
                .agents
                .iter()
                .filter(|agent| *agent.current_state == *file)
                .map(|agent| agent.id.to_string())
                .collect();
            if let Some(object) = node.as_object_mut() {
                object.insert("visits".into(), json!(visits));
                object.insert("agents".into(), json!(agents));
            }
        }
    }
    Ok(Json(json!({"diagram": drawn})))
}
