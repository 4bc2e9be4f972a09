//! Which conversation a model turn continues. The markdown executor decides it
//! from the transition that led to the state (R3.15); each backend maps it to
//! its own flags (`claude::command` for Claude Code).

use crate::ids::SessionId;

/// Which conversation the invocation continues (R3.15).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SessionMode {
    /// A new conversation (first state, reset, function, fork worker).
    Fresh,
    /// Continue this session (goto, result pop, parent after fork, reminder).
    Resume(SessionId),
    /// Start from a copy of this session, leaving it untouched (a `<call>` child).
    ForkFrom(SessionId),
    /// Start from a copy of this session cut back after this assistant message, leaving
    /// the session untouched: a `baton rerun` taking over a session that the original
    /// run went on with after the step the rerun starts from.
    ForkAt(SessionId, String),
    /// Continue the latest session of the working directory, as a fork (`--continue-session`).
    ContinueAndFork,
}
