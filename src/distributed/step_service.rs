//! `BatonStep`, the stateless Restate service a worker serves: its handler `run`
//! executes one step inside one journaled action (`ctx.run(…).name("step")`), with
//! the same executors as a local run, and returns what the step came to and the
//! events it emitted. Restate journals that reply: a retried invocation (the
//! worker's stream was cut after the step ended) or a coordinator that re-sends
//! the same idempotency key gets it back without running the step again.
//!
//! The step runs under a worker-local [`ExecutionContext`]: a bus that collects
//! events for the reply, the worker's stop channel (raised when it drains past
//! its bound) and the worker's watchdog (the step's process groups die with the
//! worker). Dropping the handler's future — Restate cut the stream — kills the
//! step's process group (`process::group::Watched`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use restate_sdk::prelude::*;
use tokio::sync::{Semaphore, watch};

use crate::backend::{Backends, CliPaths};
use crate::distributed::carry::paths;
use crate::distributed::carry::shipped::{self, CarryError, ShippedBack, ShippedFiles, Workspace};
use crate::distributed::protocol::{Files, StepReply, StepRequest, Versions, bound_events, bound_outcome};
use crate::events::Event;
use crate::events::bus::EventBus;
use crate::events::error_kind::ErrorKind;
use crate::executor::step_failure::StepFailure;
use crate::executor::{ExecutionContext, ExecutionResult, Executors};
use crate::model::agent::PauseReason;
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;

/// What every step on this worker shares.
pub(crate) struct WorkerState {
    /// `--name`: goes into the coordinator's trace for each step it runs.
    pub(crate) name: String,
    /// The Baton this worker says it is (`BATON_TEST_WORKER_VERSION` overrides it in tests).
    pub(crate) versions: Versions,
    /// `--max-concurrent-steps`.
    pub(crate) slots: Arc<Semaphore>,
    /// Raised when the worker stops: `Kill` ends every step's process group.
    pub(crate) stop: watch::Receiver<StopLevel>,
    pub(crate) watchdog: Option<Arc<Watchdog>>,
    /// Steps running now (for the drain).
    pub(crate) running: Arc<watch::Sender<usize>>,
    /// `--dir`: where shipped steps' files are kept (`docs/distributed-files.md`).
    pub(crate) dir: std::path::PathBuf,
}

/// Counts a running step while it lives.
struct Running(Arc<watch::Sender<usize>>);

impl Running {
    fn start(counter: &Arc<watch::Sender<usize>>) -> Running {
        counter.send_modify(|count| *count += 1);
        Running(Arc::clone(counter))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.send_modify(|count| *count = count.saturating_sub(1));
    }
}

impl WorkerState {
    /// A refusal: the agent pauses with `message`; resuming after the cause is
    /// fixed runs the step again (a new attempt, so a new invocation).
    fn refuse(&self, message: String) -> StepReply {
        StepReply {
            worker: self.name.clone(),
            outcome: Err(StepFailure::pause(PauseReason::WorkerRefused, ErrorKind::WorkerRefused, message)),
            events: Vec::new(),
            shipped: None,
        }
    }

    /// A step whose shipped files cannot be put in place or sent back: retried
    /// when the cause may pass (a git remote, a disk), else the agent pauses.
    fn carry_failure(&self, request: &StepRequest, error: &CarryError) -> StepFailure {
        let message =
            format!("worker `{}` cannot run step {} of agent `{}`: {error}", self.name, request.step, request.agent.id);
        if error.is_retryable() {
            StepFailure::retryable(PauseReason::WorkerRefused, ErrorKind::WorkerRefused, message)
        } else {
            StepFailure::pause(PauseReason::WorkerRefused, ErrorKind::WorkerRefused, message)
        }
    }

    /// `--files shipped`: the step's files in place under `--dir`, and the
    /// request's agent moved to their paths.
    fn materialise(&self, files: &ShippedFiles, request: &mut StepRequest) -> Result<Workspace, StepFailure> {
        let workspace = shipped::materialise(files, &request.run_id, &self.dir, &request.settings.environment)
            .map_err(|error| self.carry_failure(request, &error))?;
        paths::agent_to_worker(&mut request.agent, &workspace).map_err(|error| {
            let message = format!(
                "worker `{}` cannot run step {} of agent `{}`: {error}",
                self.name, request.step, request.agent.id
            );
            StepFailure::pause(PauseReason::WorkerRefused, ErrorKind::WorkerRefused, message)
        })?;
        Ok(workspace)
    }

    /// `--files shipped`, after the step: what it changed sent back (after a
    /// failed step too: a local failed step leaves its changes in place), the
    /// result's workflows moved back to the coordinator's paths.
    fn send_back(
        &self,
        workspace: &Workspace,
        request: &StepRequest,
        outcome: Result<ExecutionResult, StepFailure>,
    ) -> (Result<ExecutionResult, StepFailure>, Option<Box<ShippedBack>>) {
        let sessions = match &outcome {
            Ok(result) => paths::sessions_after(&request.agent, result),
            Err(_) => paths::sessions_before(&request.agent),
        };
        let back = shipped::send_back(workspace, &sessions, &workspace.cwd, &request.settings.environment);
        match (outcome, back) {
            (Ok(mut result), Ok(back)) => {
                paths::result_to_coordinator(&mut result, workspace);
                (Ok(result), Some(Box::new(back)))
            }
            (Ok(_), Err(error)) => (Err(self.carry_failure(request, &error)), None),
            (Err(failure), back) => (Err(failure), back.ok().map(Box::new)),
        }
    }

    /// Why this worker cannot run `request`, if it cannot.
    fn refusal(&self, request: &StepRequest) -> Option<String> {
        let (ours, theirs) = (&self.versions, &request.versions);
        if ours != theirs {
            return Some(format!(
                "worker `{}` runs baton {} (step protocol {}), the run was started by baton {} (step protocol {}); \
                 run workers of the run's version, then `baton resume {}`",
                self.name, ours.baton, ours.protocol, theirs.baton, theirs.protocol, request.run_id
            ));
        }
        match &request.files {
            Files::Shared => {}
            // Its paths are made on this worker (`materialise`).
            Files::Shipped(_) => return None,
        }
        let agent = &request.agent;
        let paths = [
            ("the workflow", &agent.scope_dir),
            ("the agent's working directory", &agent.cwd),
            ("the run's directory", &request.run_dir),
        ];
        paths.into_iter().find(|(_, path)| !path.exists()).map(|(what, path)| {
            format!(
                "worker `{}` cannot run step {} of agent `{}`: {what} {} does not exist on this worker \
                 (with shared files, a worker must see the coordinator's paths: the same machine, or a shared \
                 filesystem mounted at the same place)",
                self.name,
                request.step,
                agent.id,
                path.display()
            )
        })
    }

    /// Run one step as a local run would, and say what it came to.
    pub(crate) async fn run_step(&self, mut request: StepRequest) -> StepReply {
        if let Some(message) = self.refusal(&request) {
            tracing::warn!(%message, "step refused");
            return self.refuse(message);
        }
        let Ok(_slot) = Arc::clone(&self.slots).acquire_owned().await else {
            return self.refuse(format!("worker `{}` is stopping", self.name));
        };
        let _running = Running::start(&self.running);
        let workspace = match &request.files {
            Files::Shared => None,
            Files::Shipped(files) => {
                let files = files.clone();
                match self.materialise(&files, &mut request) {
                    Ok(workspace) => Some(workspace),
                    Err(failure) => {
                        tracing::warn!(message = %failure.message, "shipped step refused");
                        return StepReply {
                            worker: self.name.clone(),
                            outcome: Err(failure),
                            events: Vec::new(),
                            shipped: None,
                        };
                    }
                }
            }
        };
        let inputs = match tempfile::Builder::new().prefix(&format!("baton-step-{}-", request.run_id)).tempdir() {
            Ok(dir) => dir,
            Err(error) => {
                return self.refuse(format!(
                    "worker `{}` cannot make a directory for the step's input files: {error}",
                    self.name
                ));
            }
        };
        let events = Arc::new(Mutex::new(Vec::new()));
        let bus = Arc::new(EventBus::new());
        let sink = Arc::clone(&events);
        bus.on_all(Arc::new(move |event: &Event| {
            sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(event.clone());
            Ok(())
        }));
        let settings = &request.settings;
        let context = ExecutionContext {
            environment: settings.environment.clone(),
            run_id: request.run_id.clone(),
            baton_dir: request.baton_dir.clone(),
            inputs_dir: inputs.path().to_path_buf(),
            bus,
            timeout: settings.timeout.clone(),
            stop: self.stop.clone(),
            watchdog: self.watchdog.clone(),
            budget_usd: settings.budget_usd,
            default_backend: settings.default_backend,
            default_model: settings.default_model.clone(),
            default_effort: settings.default_effort.clone(),
            borrowed_sessions: settings.borrowed_sessions.clone(),
            telemetry: None,
        };
        let executors = Executors::standard(worker_backends(settings.skip_permissions, &request.baton_dir));
        let input = request.input();
        tracing::info!(run = %request.run_id, agent = %input.agent.id, step = input.step, "step starts");
        let outcome = executors.for_state(&input.agent.current_state).execute(input, &context).await;
        drop(context);
        let events = std::mem::take(&mut *events.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        let (outcome, shipped) = match &workspace {
            Some(workspace) => self.send_back(workspace, &request, outcome),
            None => (outcome, None),
        };
        let outcome = bound_outcome(outcome, &request.agent.current_state);
        StepReply { worker: self.name.clone(), outcome, events: bound_events(events, &request.agent.id), shipped }
    }
}

/// The backends' CLIs on this worker: `BATON_CLAUDE_BIN` (and pi's, Codex's),
/// else `PATH`.
fn worker_backends(skip_permissions: bool, baton_dir: &std::path::Path) -> Backends {
    Backends::installed(&CliPaths::default(), &CliPaths::default(), skip_permissions, baton_dir)
}

/// The service Restate calls.
pub(crate) struct StepService {
    pub(crate) worker: Arc<WorkerState>,
}

#[restate_sdk::service(name = "BatonStep", client_visibility = "pub(crate)")]
impl StepService {
    #[handler]
    async fn run(&self, ctx: Context<'_>, request: Json<StepRequest>) -> HandlerResult<Json<StepReply>> {
        let worker = Arc::clone(&self.worker);
        let request = request.into_inner();
        let reply = ctx.run(|| async move { Ok(Json(worker.run_step(request).await)) }).name("step").await?;
        Ok(reply)
    }
}

/// The service with timeouts no step of `longest` can reach: Restate's defaults
/// (1 min of inactivity, then 10 min to abort) would abort and re-run a long step
/// forever, since a journaled action sends nothing while it runs.
pub(crate) fn definition(worker: Arc<WorkerState>, longest: Duration) -> ServiceDefinition {
    StepService { worker }
        .into_service_definition()
        .options(ServiceOptions::new().inactivity_timeout(longest).abort_timeout(longest))
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    use super::*;
    use crate::distributed::protocol::StepSettings;
    use crate::executor::context::{StateTimeout, TimeoutSource};
    use crate::executor::step_failure::FailureClass;
    use crate::ids::BackendName;
    use crate::ids::{RunId, StateName};
    use crate::model::agent::Agent;

    fn worker(name: &str) -> WorkerState {
        WorkerState {
            name: name.to_string(),
            versions: Versions::own(),
            slots: Arc::new(Semaphore::new(1)),
            stop: watch::channel(StopLevel::Run).1,
            watchdog: None,
            running: Arc::new(watch::channel(0).0),
            dir: std::env::temp_dir().join("baton-worker-unit-tests"),
        }
    }

    fn request(root: &Path, cwd: &Path) -> StepRequest {
        let agent = Agent::main(StateName::from("START.sh"), root.to_path_buf(), cwd.to_path_buf(), root.join("task"));
        StepRequest {
            versions: Versions::own(),
            run_id: RunId::from("r1".to_string()),
            run_dir: root.to_path_buf(),
            baton_dir: root.to_path_buf(),
            agent,
            step: 3,
            attempt: 1,
            total_cost_at_launch: 0.0,
            settings: StepSettings {
                environment: BTreeMap::new(),
                timeout: StateTimeout::from_seconds(600.0, TimeoutSource::Default),
                budget_usd: 0.0,
                default_backend: BackendName::Claude,
                default_model: None,
                default_effort: None,
                borrowed_sessions: BTreeSet::new(),
                skip_permissions: true,
            },
            files: Files::Shared,
        }
    }

    #[tokio::test]
    async fn a_step_whose_working_directory_the_worker_cannot_see_is_refused_naming_it() {
        let root = tempfile::tempdir().unwrap();
        let missing = root.path().join("elsewhere");
        let reply = worker("w1").run_step(request(root.path(), &missing)).await;
        let failure = reply.outcome.unwrap_err();
        assert_eq!(failure.class, FailureClass::Pause(PauseReason::WorkerRefused));
        assert_eq!(
            failure.message,
            format!(
                "worker `w1` cannot run step 3 of agent `main`: the agent's working directory {} does not exist on \
                 this worker (with shared files, a worker must see the coordinator's paths: the same machine, or a \
                 shared filesystem mounted at the same place)",
                missing.display()
            )
        );
    }
}
