//! Exit codes, in one place (decision A7).

/// Every agent terminated.
pub(crate) const COMPLETED: i32 = 0;
/// Bad arguments, a broken workflow, or a fatal step error.
pub(crate) const ERROR: i32 = 1;
/// Waiting for a person's answer (`<ask>` under `--on-ask pause`, or `prompt`/`json`
/// once their input ended); stdout holds the ask.
pub(crate) const ASKING: i32 = 2;
/// Paused: every remaining agent is paused (or stopped at a breakpoint); `baton
/// resume` continues.
pub(crate) const PAUSED: i32 = 3;
/// `baton serve`: another daemon serves this project already (its pid and address
/// are in the message); nothing was changed.
pub(crate) const ALREADY_SERVING: i32 = 4;
/// `baton resume --agent A` with an edit: agent A is not paused (another client
/// continued it first, or it never stopped), or another process drives the run;
/// nothing was changed (`baton serve` answers such an edit 409).
pub(crate) const CONFLICT: i32 = 5;
/// stdout was closed by its reader (`baton list | head`): 128 + SIGPIPE, quietly.
pub(crate) const BROKEN_PIPE: i32 = 141;
// 130 and 143 (interrupted by SIGINT / SIGTERM) come from `ShutdownSignal::exit_code`.
