//! `/api/v1/runs/{id}/agents/{agent}/continue` and `/api/v1/runs/{id}/breakpoints`:
//! step-by-step execution from the daemon (issue 24, `docs/serve.md`).
//!
//! A run the daemon drives runs with `--on-ask json`, so an agent stopped at a
//! breakpoint keeps it live; these calls become its `continue_agent` and
//! `breakpoints` control lines (`run::control`). What can be checked is checked
//! here first, so a client gets its answer rather than a line the run ignores: the
//! agent exists (404) and is paused (409), a `goto` resolves in its workflow and a
//! `prompt` goes to a prompt state (400), breakpoint names resolve (400, with a
//! did-you-mean). Of two clients continuing one stopped agent, the first wins and the
//! second gets 409: the daemon claims the stop (the agent and its `steps_started`,
//! which its next launch raises) before it sends the line.

use std::collections::HashMap;
use std::sync::Mutex;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::json;

use crate::ids::StateName;
use crate::run::edit::check_paused;
use crate::serve::api::{ApiError, Body, OptionalBody, Shared, known_run};
use crate::serve::supervisor::shell_quote;
use crate::text::state_name;
use crate::text::suggestion::did_you_mean;
use crate::workflow::resolution::{resolve_state, resolve_states};

/// The stops a client continued: (run, agent) → the agent's `steps_started` then.
#[derive(Default)]
pub(crate) struct Claims(Mutex<HashMap<(String, String), u64>>);

impl Claims {
    /// Claim the stop of `agent` at `steps_started`; false when another client did.
    fn claim(&self, run_id: &str, agent: &str, steps_started: u64) -> bool {
        let mut claims = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let key = (run_id.to_string(), agent.to_string());
        if claims.get(&key) == Some(&steps_started) {
            return false;
        }
        claims.insert(key, steps_started);
        true
    }

    /// Let a claim go (its line could not be sent).
    fn release(&self, run_id: &str, agent: &str) {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&(run_id.to_string(), agent.to_string()));
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct Continue {
    input: Option<String>,
    goto: Option<String>,
    prompt: Option<String>,
}

pub(super) async fn continue_agent(
    State(app): State<Shared>,
    Path((run_id, agent)): Path<(String, String)>,
    OptionalBody(request): OptionalBody<Continue>,
) -> Result<impl IntoResponse, ApiError> {
    known_run(&app.store, &run_id)?;
    let run = tokio::task::block_in_place(|| app.store.load(&run_id))?;
    let Some(found) = run.agents.iter().find(|candidate| *candidate.id == *agent) else {
        if let Some(refusal) = crate::run::edit::terminated(&run, &agent) {
            return Err(ApiError::conflict(refusal.message(&agent)));
        }
        let known: Vec<&str> = run.agents.iter().map(|candidate| &*candidate.id).collect();
        let hint = did_you_mean(&agent, known.iter().copied())
            .map(|near| format!(" (did you mean `{near}`?)"))
            .unwrap_or_default();
        return Err(ApiError::not_found(format!("run `{run_id}` has no agent `{agent}`{hint}")));
    };
    check_paused(found).map_err(|refusal| ApiError::conflict(refusal.message(&agent)))?;
    let mut next: StateName = found.current_state.clone();
    if let Some(goto) = &request.goto {
        next = resolve_state(&found.scope_dir, goto).map(StateName::from).map_err(|error| {
            ApiError::bad_request(format!("goto {goto}: agent `{agent}` cannot reach it from its workflow: {error}"))
        })?;
    }
    if request.prompt.is_some() && state_name::is_script(&next) {
        return Err(ApiError::bad_request(format!(
            "a prompt replaces a prompt, but agent `{agent}` runs script `{next}` next"
        )));
    }
    if !app.supervisor.drives(&run_id) {
        return Err(ApiError::conflict(format!(
            "run `{run_id}` is not live: `baton resume {run_id} --agent {agent}` (or POST …/resume) continues it"
        )));
    }
    if !app.claims.claim(&run_id, &agent, found.steps_started) {
        return Err(ApiError::conflict(format!("agent `{agent}` was continued by another client first")));
    }
    let line = json!({"continue_agent": {
        "agent_id": agent, "input": request.input, "goto": request.goto, "prompt": request.prompt, "by": "serve",
    }});
    if let Err(error) = app.supervisor.send(&run_id, &line).await {
        app.claims.release(&run_id, &agent);
        return Err(ApiError::conflict(format!(
            "{error}: the agent can only be continued in a run this daemon drives"
        )));
    }
    let mut command = format!("baton resume {} --agent {}", shell_quote(&run_id), shell_quote(&agent));
    if let Some(input) = &request.input {
        command.push_str(&format!(" --input {}", shell_quote(input)));
    }
    if let Some(goto) = &request.goto {
        command.push_str(&format!(" --goto {}", shell_quote(goto)));
    }
    if request.prompt.is_some() {
        command.push_str(" --prompt-file PROMPT_FILE");
    }
    Ok((StatusCode::ACCEPTED, Json(json!({"agent": agent, "command": command}))))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct SetBreakpoints {
    #[serde(default)]
    before: Vec<String>,
    #[serde(default)]
    after: Vec<String>,
    #[serde(default)]
    step: bool,
}

pub(super) async fn set_breakpoints(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Body(request): Body<SetBreakpoints>,
) -> Result<impl IntoResponse, ApiError> {
    known_run(&app.store, &run_id)?;
    let run = tokio::task::block_in_place(|| app.store.load(&run_id))?;
    let resolve = |names: &[String]| {
        resolve_states(&run.scope_dir, names)
            .map_err(|(name, error)| ApiError::bad_request(format!("breakpoint {name}: {error}")))
    };
    let (before, after) = (resolve(&request.before)?, resolve(&request.after)?);
    if !app.supervisor.drives(&run_id) {
        return Err(ApiError::conflict(format!(
            "run `{run_id}` is not live: resume it with --break-before, --break-after or --step to set its breakpoints"
        )));
    }
    let line = json!({"breakpoints": {"before": before, "after": after, "step": request.step}});
    app.supervisor.send(&run_id, &line).await.map_err(|error| ApiError::conflict(error.to_string()))?;
    Ok((StatusCode::ACCEPTED, Json(json!({"before": before, "after": after, "step": request.step}))))
}

/// `GET /api/v1/runs/{id}/agents/{agent}/next`: what the agent runs next, exactly as
/// it would be sent (`inspect::next_step`, as `baton logs --next`).
pub(super) async fn next(
    State(app): State<Shared>,
    Path((run_id, agent)): Path<(String, String)>,
) -> Result<Json<serde_json::Value>, ApiError> {
    known_run(&app.store, &run_id)?;
    let run = tokio::task::block_in_place(|| app.store.load(&run_id))?;
    let Some(found) = run.agents.iter().find(|candidate| *candidate.id == *agent) else {
        return Err(ApiError::not_found(format!("run `{run_id}` has no agent `{agent}`")));
    };
    let answer = match crate::inspect::next_step::describe(&run, found) {
        Ok(next) => json!({
            "agent": agent, "state": found.current_state, "input": found.pending_result,
            "header": next.header, "session": next.session, "text": next.text,
            "kind": if next.session.is_some() { "prompt" } else { "script" },
            "prompt_replaced": found.prompt_override.is_some(),
        }),
        Err(reason) => json!({"agent": agent, "state": found.current_state, "error": reason}),
    };
    Ok(Json(answer))
}
