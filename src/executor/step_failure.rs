//! How a step can fail, classified the way the workflow loop must react (spec §10.1).
//!
//! Executors report failures in this one shape so the loop can decide between
//! "stop the run", "try again later" and "pause this agent" without knowing
//! anything about scripts or Claude.

use crate::events::error_kind::ErrorKind;
use crate::model::agent::PauseReason;
use crate::transition::interpret::InterpretError;

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum FailureClass {
    /// Aborts the run once running siblings finish their step (A14).
    Fatal,
    /// Retried with backoff; after the last attempt the agent pauses with this reason (R10.1, A13).
    Retryable(PauseReason),
    /// A Claude usage limit: pause at once; `resets_at` (epoch seconds) when known (A15).
    UsageLimit { resets_at: Option<i64> },
    /// Pause the agent at once, no retry (R3.44 multi-fork validation).
    Pause(PauseReason),
    /// The step could not start for lack of a resource (too many open files or
    /// processes): not the step's fault. It waits for a running step to finish
    /// and starts again; attempts do not count.
    Throttled,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct StepFailure {
    pub(crate) class: FailureClass,
    pub(crate) kind: ErrorKind,
    pub(crate) message: String,
    /// What the failed step still cost (model turns are paid for either way, R9.2).
    pub(crate) cost_usd: f64,
}

impl StepFailure {
    pub(crate) fn fatal(kind: ErrorKind, message: impl Into<String>) -> StepFailure {
        StepFailure { class: FailureClass::Fatal, kind, message: message.into(), cost_usd: 0.0 }
    }

    pub(crate) fn retryable(reason: PauseReason, kind: ErrorKind, message: impl Into<String>) -> StepFailure {
        StepFailure { class: FailureClass::Retryable(reason), kind, message: message.into(), cost_usd: 0.0 }
    }

    pub(crate) fn pause(reason: PauseReason, kind: ErrorKind, message: impl Into<String>) -> StepFailure {
        StepFailure { class: FailureClass::Pause(reason), kind, message: message.into(), cost_usd: 0.0 }
    }

    /// An output whose tags could not become a transition, worded by the caller:
    /// an invalid multi-fork pauses the agent (R3.44); everything else is fatal.
    pub(crate) fn of_interpretation(error: &InterpretError, message: String) -> StepFailure {
        let kind = interpretation_kind(error);
        match error {
            InterpretError::InvalidMultiFork(_) | InterpretError::CrossWorkflow { .. } => {
                StepFailure::pause(PauseReason::ValidationError, kind, message)
            }
            _ => StepFailure::fatal(kind, message),
        }
    }

    pub(crate) fn throttled(kind: ErrorKind, message: impl Into<String>) -> StepFailure {
        StepFailure { class: FailureClass::Throttled, kind, message: message.into(), cost_usd: 0.0 }
    }

    /// The same failure, having cost `cost_usd`.
    pub(crate) fn with_cost(mut self, cost_usd: f64) -> StepFailure {
        self.cost_usd = cost_usd;
        self
    }

    pub(crate) fn is_retryable(&self) -> bool {
        matches!(self.class, FailureClass::Retryable(_))
    }
}

/// What an output's tags failing to become a transition is called (both executors).
pub(crate) fn interpretation_kind(error: &InterpretError) -> ErrorKind {
    match error {
        InterpretError::NoTag => ErrorKind::NoTransitionTag,
        InterpretError::MultipleTags { .. } => ErrorKind::MultipleTransitions,
        InterpretError::Resolve(_) => ErrorKind::TargetResolutionError,
        InterpretError::Transition(_) => ErrorKind::TransitionError,
        InterpretError::InvalidMultiFork(_) => ErrorKind::InvalidMultiFork,
        InterpretError::CrossWorkflow { .. } => ErrorKind::CrossWorkflowError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_interpretation_error_has_its_own_kind() {
        assert_eq!(interpretation_kind(&InterpretError::NoTag), ErrorKind::NoTransitionTag);
        assert_eq!(interpretation_kind(&InterpretError::MultipleTags { count: 2 }), ErrorKind::MultipleTransitions);
        let failure = StepFailure::of_interpretation(&InterpretError::InvalidMultiFork("x".into()), "m".into());
        assert_eq!(failure.class, FailureClass::Pause(PauseReason::ValidationError));
    }
}
