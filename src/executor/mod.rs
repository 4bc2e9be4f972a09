//! State executors: one per kind of state file, behind one trait (seed §4–§7).
//!
//! The workflow loop does not know how a state runs. It asks [`Executors`] for the
//! executor of the state's file name and awaits a [`ExecutionResult`] or a
//! classified [`StepFailure`]. Executors emit `StateStarted`, their output events
//! and `StateCompleted`; the loop applies the transition.

pub(crate) mod context;
pub(crate) mod markdown;
pub(crate) mod script;
pub(crate) mod step_failure;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::events::Event;
use crate::events::error_kind::ErrorKind;
use crate::executor::step_failure::StepFailure;
use crate::ids::SessionId;
use crate::model::agent::Agent;
use crate::syntax::tag::Tag;
use crate::syntax::template::{TemplateInputs, variables};
use crate::text::state_name;
use crate::transition::Transition;

pub(crate) use context::ExecutionContext;

/// One step to run: a snapshot of the agent and where the step stands.
#[derive(Clone, Debug)]
pub(crate) struct StepInput {
    pub(crate) agent: Agent,
    /// This agent's step number, which names its trace files.
    pub(crate) step: u64,
    /// 1 for the first attempt, 2 after one retryable failure, …
    pub(crate) attempt: u32,
    /// The run's total cost when the step launched (R9.5).
    pub(crate) total_cost_at_launch: f64,
}

/// What a successful step produced (serde: a distributed step's reply carries it).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ExecutionResult {
    pub(crate) transition: Transition,
    /// A new session id for the agent; `None` leaves it unchanged (scripts).
    pub(crate) session_id: Option<SessionId>,
    /// With a new session id: the `uuid` of its last assistant message, if known.
    pub(crate) session_message: Option<String>,
    /// With a new session id: the backend whose conversation it is.
    pub(crate) session_backend: Option<crate::ids::BackendName>,
    pub(crate) cost_usd: f64,
}

pub(crate) type StepFuture<'a> = Pin<Box<dyn Future<Output = Result<ExecutionResult, StepFailure>> + Send + 'a>>;

pub(crate) trait StateExecutor: Send + Sync {
    fn execute<'a>(&'a self, input: StepInput, context: &'a ExecutionContext) -> StepFuture<'a>;
}

/// A warning for each tag whose opening held text that is no quoted attribute
/// (`<goto input=foo>`): raymond ignores it silently (R4.6), so does Baton, but
/// the trace and the console say so.
/// The template variables of `agent`'s current state (R6.2): its input, fork
/// attributes and the built-ins. A prompt's body and a cross-workflow tag's input
/// (R3.41) are rendered with them.
pub(crate) fn template_variables(context: &ExecutionContext, agent: &Agent) -> BTreeMap<String, String> {
    let mut variables = agent_variables(agent, &context.run_id);
    // The state after a `<join>`: the file its executor wrote (`docs/join.md`).
    if agent.join_results.is_some() {
        let path = script::results_path(&context.inputs_dir, agent);
        variables.insert("results".to_string(), path.to_string_lossy().into_owned());
    }
    variables
}

/// The template variables `agent` carries in run `workflow_id`, without `results`:
/// where a `<join>`'s results are depends on who asks (the executor writes them, an
/// inspection of a stopped agent only names them).
pub(crate) fn agent_variables(agent: &Agent, workflow_id: &str) -> BTreeMap<String, String> {
    let task_folder = agent.task_folder.to_string_lossy();
    variables(&TemplateInputs {
        input: agent.pending_result.as_deref(),
        ask_id: agent.pending_ask_id.as_deref(),
        fork_attributes: &agent.fork_attributes,
        workflow_id,
        agent_id: &agent.id,
        task_folder: &task_folder,
    })
}

pub(crate) fn warn_ignored_attributes(context: &ExecutionContext, agent: &Agent, tags: &[Tag]) {
    for tag in tags.iter().filter(|tag| !tag.ignored.is_empty()) {
        context.bus.emit(Event::ErrorOccurred {
            agent_id: agent.id.clone(),
            error_type: ErrorKind::IgnoredAttribute,
            message: format!(
                "state `{}`: ignored `{}` in <{}>: an attribute is written name=\"value\" or name='value', quoted and \
                 with no spaces around `=`",
                agent.current_state,
                tag.ignored.join(" "),
                tag.kind
            ),
            state: agent.current_state.clone(),
            is_retryable: false,
            retry_count: 0,
            max_retries: 0,
        });
    }
}

/// The executors of a run, chosen by file extension (R1.7).
#[derive(Clone)]
pub(crate) struct Executors {
    pub(crate) script: Arc<dyn StateExecutor>,
    pub(crate) markdown: Arc<dyn StateExecutor>,
}

impl Executors {
    /// Scripts run with bash; prompts go to the backend each state runs on.
    pub(crate) fn standard(backends: crate::backend::Backends) -> Executors {
        Executors {
            script: Arc::new(script::ScriptExecutor::default()),
            markdown: Arc::new(markdown::MarkdownExecutor::new(backends)),
        }
    }

    /// Every step goes to `remote` (`--engine restate=URL`: the workers run both kinds).
    pub(crate) fn remote(remote: Arc<dyn StateExecutor>) -> Executors {
        Executors { script: Arc::clone(&remote), markdown: remote }
    }

    /// `.sh/.bat/.ps1` run as scripts; every other name is a prompt (R1.7).
    pub(crate) fn for_state(&self, state: &str) -> Arc<dyn StateExecutor> {
        if state_name::is_script(state) { Arc::clone(&self.script) } else { Arc::clone(&self.markdown) }
    }
}
