//! The coordinator's executor under `--engine restate=URL`: a step becomes one
//! invocation of `BatonStep/run` on whichever worker Restate picks. The loop,
//! its journal and its events stay this process's; the step's events come back
//! with its reply and are published here in order, so the trace, the console,
//! `status`, `report` and `serve` read a distributed run like a local one.
//!
//! Sending is record-before-act: before a step is sent, its idempotency key is
//! written to `<run>/remote-steps/<agent>.json` beside the agent as it was sent;
//! the record goes once the reply is in (it stays when the server stayed away:
//! the next attempt re-sends the same key). A coordinator killed while a step runs
//! leaves the record, and the resumed run — whose loop numbers the re-run step
//! anew — re-sends the *recorded* key for an agent that has not moved since:
//! Restate attaches it to the invocation that is still running or returns the
//! result it already has, so the step is not run twice.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::distributed::ingress::{Ingress, IngressError};
use crate::distributed::protocol::{Files, StepReply, StepRequest, StepSettings, Versions};
use crate::events::error_kind::ErrorKind;
use crate::events::{Event, StateType};
use crate::executor::step_failure::StepFailure;
use crate::executor::{ExecutionContext, ExecutionResult, StateExecutor, StepFuture, StepInput};
use crate::model::agent::{Agent, PauseReason};
use crate::process::stop_level::StopLevel;
use crate::text::state_name;

/// How long a step keeps re-sending while the server does not answer, before it
/// fails as retryable (`engine_unavailable`); `BATON_ENGINE_RETRY_SECS` changes it.
const RETRY_WINDOW: Duration = Duration::from_secs(10 * 60);
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

pub(crate) struct RemoteExecutor {
    ingress: Ingress,
    run_dir: PathBuf,
    skip_permissions: bool,
    retry_window: Duration,
    /// One warning per outage, not one per step or per try.
    warned: AtomicBool,
}

/// What `<run>/remote-steps/<agent>.json` holds while a step is out.
#[derive(Serialize, Deserialize)]
struct InFlight {
    key: String,
    step: u64,
    /// The agent as it was sent, with the fields a relaunch changes cleared.
    agent: serde_json::Value,
}

/// The agent as a relaunch of the same step would send it again: the launch's
/// own fields (its number, its new session id, the retry count, the queue mark)
/// left out.
fn launch_free(agent: &Agent) -> serde_json::Value {
    let mut agent = agent.clone();
    agent.steps_started = 0;
    agent.new_session_id = None;
    agent.retry_count = 0;
    agent.queued = false;
    agent.error = None;
    agent.pause_reason = None;
    agent.status = Default::default();
    serde_json::to_value(&agent).unwrap_or(serde_json::Value::Null)
}

impl RemoteExecutor {
    pub(crate) fn new(ingress: Ingress, run_dir: &Path, skip_permissions: bool) -> RemoteExecutor {
        let retry_window = std::env::var("BATON_ENGINE_RETRY_SECS")
            .ok()
            .and_then(|text| text.parse::<f64>().ok())
            .and_then(|seconds| crate::text::duration::seconds(seconds).ok())
            .unwrap_or(RETRY_WINDOW);
        RemoteExecutor {
            ingress,
            run_dir: run_dir.to_path_buf(),
            skip_permissions,
            retry_window,
            warned: AtomicBool::new(false),
        }
    }

    fn record_path(&self, agent: &Agent) -> PathBuf {
        self.run_dir.join("remote-steps").join(format!("{}.json", agent.id))
    }

    /// The key to send `request` under: the recorded one when a coordinator died
    /// with this very step out (the agent unchanged since, the step the next one
    /// after it), else the request's own, recorded now.
    fn key_for(&self, request: &StepRequest) -> (String, Option<u64>) {
        let path = self.record_path(&request.agent);
        let agent = launch_free(&request.agent);
        if let Some(earlier) =
            std::fs::read(&path).ok().and_then(|bytes| serde_json::from_slice::<InFlight>(&bytes).ok())
            && earlier.agent == agent
            && earlier.step < request.step
        {
            return (earlier.key, Some(earlier.step));
        }
        let key = request.idempotency_key();
        let record = InFlight { key: key.clone(), step: request.step, agent };
        let written = serde_json::to_vec(&record).map_err(std::io::Error::other).and_then(|bytes| {
            std::fs::create_dir_all(path.parent().unwrap_or(&self.run_dir))?;
            let temporary = path.with_extension("json.tmp");
            std::fs::write(&temporary, bytes)?;
            std::fs::rename(&temporary, &path)
        });
        if let Err(error) = written {
            // Only the attach after a coordinator crash is lost: the step re-runs then (A3).
            tracing::warn!(%error, path = %path.display(), "cannot record the step sent to the restate engine");
        }
        (key, None)
    }

    fn request(&self, input: &StepInput, context: &ExecutionContext) -> StepRequest {
        StepRequest {
            versions: Versions::own(),
            run_id: context.run_id.clone(),
            run_dir: self.run_dir.clone(),
            baton_dir: context.baton_dir.clone(),
            agent: input.agent.clone(),
            step: input.step,
            attempt: input.attempt,
            total_cost_at_launch: input.total_cost_at_launch,
            settings: StepSettings {
                environment: context.environment.clone(),
                timeout: context.timeout.clone(),
                budget_usd: context.budget_usd,
                default_backend: context.default_backend,
                default_model: context.default_model.clone(),
                default_effort: context.default_effort.clone(),
                borrowed_sessions: context.borrowed_sessions.clone(),
                skip_permissions: self.skip_permissions,
            },
            files: Files::Shared,
        }
    }

    /// Send until a reply comes, a non-transient refusal, or the retry window passes.
    async fn send(
        &self,
        key: &str,
        request: &StepRequest,
        context: &ExecutionContext,
    ) -> Result<StepReply, StepFailure> {
        let state = &request.agent.current_state;
        let body = serde_json::to_vec(request).map_err(|error| {
            StepFailure::fatal(
                ErrorKind::EngineUnavailable,
                format!("state `{state}`: cannot encode the step: {error}"),
            )
        })?;
        let body = hyper::body::Bytes::from(body);
        // The window counts from the first failure, not from the send: a step may run
        // for hours before the server goes away.
        let mut failing_since: Option<Instant> = None;
        let mut backoff = FIRST_BACKOFF;
        loop {
            let error = match self.ingress.call_step(key, body.clone()).await {
                Ok(reply) => {
                    self.warned.store(false, Ordering::Relaxed);
                    return serde_json::from_slice::<StepReply>(&reply).map_err(|error| {
                        StepFailure::fatal(
                            ErrorKind::EngineUnavailable,
                            format!(
                                "state `{state}`: the restate engine at {} answered with something that is no \
                                 step reply ({error}); is every worker running baton {}?",
                                self.ingress.url(),
                                crate::distributed::protocol::baton_version()
                            ),
                        )
                    });
                }
                Err(error) => error,
            };
            let unavailable = |error: &IngressError| {
                format!("state `{state}`: the restate engine at {} cannot run the step: {error}", self.ingress.url())
            };
            if let IngressError::Status { status: 404, .. } = error {
                return Err(StepFailure::pause(
                    PauseReason::EngineUnavailable,
                    ErrorKind::EngineUnavailable,
                    format!(
                        "{}; start a worker with `baton worker --listen ADDR --register ADMIN_URL`, then resume",
                        unavailable(&error)
                    ),
                ));
            }
            if !error.is_transient() {
                return Err(StepFailure::fatal(ErrorKind::EngineUnavailable, unavailable(&error)));
            }
            if failing_since.get_or_insert_with(Instant::now).elapsed() >= self.retry_window {
                return Err(StepFailure::retryable(
                    PauseReason::EngineUnavailable,
                    ErrorKind::EngineUnavailable,
                    format!(
                        "{} (still failing after {}); the run can be resumed once the server is back",
                        unavailable(&error),
                        crate::text::duration::seconds_phrase(self.retry_window.as_secs_f64())
                    ),
                ));
            }
            if !self.warned.swap(true, Ordering::Relaxed) {
                context.bus.emit(Event::ErrorOccurred {
                    agent_id: request.agent.id.clone(),
                    error_type: ErrorKind::EngineRetrying,
                    message: format!("{}; sending it again until it answers", unavailable(&error)),
                    state: state.clone(),
                    is_retryable: false,
                    retry_count: 0,
                    max_retries: 0,
                });
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    async fn execute_remote(
        &self,
        input: StepInput,
        context: &ExecutionContext,
    ) -> Result<ExecutionResult, StepFailure> {
        let agent = &input.agent;
        let state_type =
            if state_name::is_script(&agent.current_state) { StateType::Script } else { StateType::Markdown };
        context.bus.emit(Event::StateStarted {
            agent_id: agent.id.clone(),
            state: agent.current_state.clone(),
            state_type,
            step: input.step,
            attempt: input.attempt,
        });
        let request = self.request(&input, context);
        let (key, earlier_step) = self.key_for(&request);
        // Stopped hard (a second Ctrl-C, the end of `--grace`): the step goes on on
        // its worker, and its record stays, so `baton resume` attaches to it.
        let mut stop = context.stop.clone();
        let killed = async move {
            while *stop.borrow_and_update() < StopLevel::Kill {
                if stop.changed().await.is_err() {
                    return;
                }
            }
        };
        let reply = tokio::select! {
            reply = self.send(&key, &request, context) => reply,
            () = killed => {
                return Err(StepFailure::fatal(
                    ErrorKind::Cancelled,
                    format!(
                        "state `{}` was stopped before its worker finished it; the step goes on there, and \
                         `baton resume {}` takes its result",
                        agent.current_state, context.run_id
                    ),
                ));
            }
        };
        // A reply (whatever the step came to) or a refusal ends the invocation's
        // story; a server that stayed away may still hold it, so the record stays
        // and the next attempt (or a resume) attaches to it once the server is back.
        if !matches!(&reply, Err(failure) if failure.is_retryable()) {
            let _ = std::fs::remove_file(self.record_path(agent));
        }
        let reply = reply?;
        context.bus.emit(Event::StepRanOn {
            agent_id: agent.id.clone(),
            state: agent.current_state.clone(),
            step: input.step,
            worker: reply.worker.clone(),
        });
        for wire in reply.events {
            let mut event = wire.into_event();
            if matches!(event, Event::StateStarted { .. }) {
                continue;
            }
            // A step attached to after a crash ran under its earlier number: the
            // trace files are this launch's.
            if earlier_step.is_some() {
                renumber(&mut event, input.step);
            }
            context.bus.emit(event);
        }
        reply.outcome
    }
}

fn renumber(event: &mut Event, number: u64) {
    match event {
        Event::StateCompleted { step, .. }
        | Event::ScriptOutput { step, .. }
        | Event::ClaudeStreamOutput { step, .. }
        | Event::PromptRendered { step, .. } => *step = number,
        _ => {}
    }
}

impl StateExecutor for RemoteExecutor {
    fn execute<'a>(&'a self, input: StepInput, context: &'a ExecutionContext) -> StepFuture<'a> {
        Box::pin(self.execute_remote(input, context))
    }
}
