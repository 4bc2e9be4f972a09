//! The names of failures in the trace.

use serde::{Deserialize, Serialize};

/// What went wrong, as the trace names it (`error_type` in `ErrorOccurred`,
/// `docs/trace-format.md`). The variant names are the stable strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum ErrorKind {
    /// A script exited non-zero, was killed, timed out, or could not start.
    ScriptError,
    /// A script printed nothing for the inactivity timeout and was killed.
    ScriptTimeout,
    /// An output held a malformed transition tag.
    ParseError,
    NoTransitionTag,
    MultipleTransitions,
    /// A tag named a state that does not resolve (R1.x).
    TargetResolutionError,
    /// A resolved tag broke an attribute rule (a `<call>` without `return`, …).
    TransitionError,
    /// A multi-fork broke R3.44; the agent pauses.
    InvalidMultiFork,
    /// A cross-workflow tag names no workflow, breaks an attribute rule, or would
    /// nest too deep (R3.30, R3.34, R3.37); the agent pauses.
    CrossWorkflowError,
    /// A tag the state's policy does not allow (R5.8).
    PolicyViolation,
    /// A policy whose single entry cannot be used implicitly.
    PolicyError,
    /// The prompt file could not be read or its frontmatter parsed.
    PromptFileError,
    /// A frontmatter field Baton does not know (a warning, not a failure).
    UnknownField,
    /// Text in a tag that is no quoted attribute, ignored (a warning, not a failure).
    IgnoredAttribute,
    ClaudeCodeError,
    ClaudeCodeTimeout,
    ClaudeCodeLimitError,
    /// The Claude Code CLI cannot be found or run.
    ClaudeNotAvailable,
    /// A backend turn was stopped by a shutdown.
    Cancelled,
    /// The distributed engine (Restate) could not be reached for a step's whole retry window.
    EngineUnavailable,
    /// A warning: the distributed engine did not answer; the step is being sent again.
    EngineRetrying,
    /// A distributed worker refused the step (another Baton version, a missing directory).
    WorkerRefused,
}

impl ErrorKind {
    /// Reported, but the step goes on.
    pub(crate) fn is_warning(self) -> bool {
        matches!(self, ErrorKind::UnknownField | ErrorKind::IgnoredAttribute | ErrorKind::EngineRetrying)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_kinds_serialise_to_the_trace_names() {
        for (kind, name) in [
            (ErrorKind::ScriptError, "ScriptError"),
            (ErrorKind::NoTransitionTag, "NoTransitionTag"),
            (ErrorKind::ClaudeCodeLimitError, "ClaudeCodeLimitError"),
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), serde_json::json!(name));
        }
    }
}
