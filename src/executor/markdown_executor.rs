//! The markdown executor. Claude Code support is the next milestone; until then a
//! prompt state fails with a message that says so, naming the state, rather than
//! doing something surprising.

use super::{ExecutionContext, StateExecutor, StepFuture, StepInput};
use crate::events::{Event, StateType};
use crate::step_failure::StepFailure;

pub struct MarkdownExecutor;

impl StateExecutor for MarkdownExecutor {
    fn execute<'a>(&'a self, input: StepInput, context: &'a ExecutionContext) -> StepFuture<'a> {
        Box::pin(async move {
            context.bus.emit(Event::StateStarted {
                agent_id: input.agent.id.clone(),
                state: input.agent.current_state.clone(),
                state_type: StateType::Markdown,
                step: input.step,
                attempt: input.attempt,
            });
            Err(StepFailure::fatal(
                "UnsupportedState",
                format!(
                    "state `{}` is a prompt: markdown states need the Claude executor, which this version of baton does not include yet; only script states (.sh) can run",
                    input.agent.current_state
                ),
            ))
        })
    }
}
