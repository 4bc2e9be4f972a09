//! How a step can fail, classified the way the workflow loop must react (spec §10.1).
//!
//! Executors report failures in this one shape so the loop can decide between
//! "stop the run", "try again later" and "pause this agent" without knowing
//! anything about scripts or Claude.

use crate::model::agent::PauseReason;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum FailureClass {
    /// Aborts the run once running siblings finish their step (A14).
    Fatal,
    /// Retried with backoff; after the last attempt the agent pauses with this reason (R10.1, A13).
    Retryable(PauseReason),
    /// A Claude usage limit: pause at once; `resets_at` (epoch seconds) when known (A15).
    UsageLimit { resets_at: Option<i64> },
    /// Pause the agent at once, no retry (R3.44 multi-fork validation).
    Pause(PauseReason),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StepFailure {
    pub(crate) class: FailureClass,
    /// A stable name for the trace (`ScriptError`, `ParseError`, …).
    pub(crate) error_type: &'static str,
    pub(crate) message: String,
    /// What the failed step still cost (model turns are paid for either way, R9.2).
    pub(crate) cost_usd: f64,
}

impl StepFailure {
    pub(crate) fn fatal(error_type: &'static str, message: impl Into<String>) -> StepFailure {
        StepFailure { class: FailureClass::Fatal, error_type, message: message.into(), cost_usd: 0.0 }
    }

    pub(crate) fn retryable(reason: PauseReason, error_type: &'static str, message: impl Into<String>) -> StepFailure {
        StepFailure { class: FailureClass::Retryable(reason), error_type, message: message.into(), cost_usd: 0.0 }
    }

    pub(crate) fn pause(reason: PauseReason, error_type: &'static str, message: impl Into<String>) -> StepFailure {
        StepFailure { class: FailureClass::Pause(reason), error_type, message: message.into(), cost_usd: 0.0 }
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
