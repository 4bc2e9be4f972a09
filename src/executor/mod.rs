//! State executors: one per kind of state file, behind one trait (seed §4–§7).
//!
//! The workflow loop does not know how a state runs. It asks [`Executors`] for the
//! executor of the state's file name and awaits a [`ExecutionResult`] or a
//! classified [`StepFailure`]. Executors emit `StateStarted`, their output events
//! and `StateCompleted`; the loop applies the transition.

pub mod context;
pub mod markdown;
pub mod script;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::model::agent::Agent;
use crate::run::step_failure::StepFailure;
use crate::transition::Transition;
use crate::workflow::state_name;

pub use context::ExecutionContext;

/// One step to run: a snapshot of the agent and where the step stands.
#[derive(Clone, Debug)]
pub struct StepInput {
    pub agent: Agent,
    /// This agent's step number, which names its trace files.
    pub step: u64,
    /// 1 for the first attempt, 2 after one retryable failure, …
    pub attempt: u32,
    /// The run's total cost when the step launched (R9.5).
    pub total_cost_at_launch: f64,
}

/// What a successful step produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutionResult {
    pub transition: Transition,
    /// A new session id for the agent; `None` leaves it unchanged (scripts).
    pub session_id: Option<String>,
    pub cost_usd: f64,
}

pub type StepFuture<'a> = Pin<Box<dyn Future<Output = Result<ExecutionResult, StepFailure>> + Send + 'a>>;

pub trait StateExecutor: Send + Sync {
    fn execute<'a>(&'a self, input: StepInput, context: &'a ExecutionContext) -> StepFuture<'a>;
}

/// The executors of a run, chosen by file extension (R1.7).
#[derive(Clone)]
pub struct Executors {
    pub script: Arc<dyn StateExecutor>,
    pub markdown: Arc<dyn StateExecutor>,
}

impl Executors {
    /// Scripts run with bash; prompts go to `backend`.
    pub fn standard(backend: Arc<dyn crate::backend::Backend>) -> Executors {
        Executors {
            script: Arc::new(script::ScriptExecutor),
            markdown: Arc::new(markdown::MarkdownExecutor::new(backend)),
        }
    }

    /// `.sh/.bat/.ps1` run as scripts; every other name is a prompt (R1.7).
    pub fn for_state(&self, state: &str) -> Arc<dyn StateExecutor> {
        if state_name::is_script(state) { Arc::clone(&self.script) } else { Arc::clone(&self.markdown) }
    }
}
