//! Exit codes, in one place (decision A7).

/// Every agent terminated.
pub const COMPLETED: i32 = 0;
/// Bad arguments, a broken workflow, or a fatal step error.
pub const ERROR: i32 = 1;
/// Waiting for human input (`<ask>` with `--on-ask=pause`).
pub const ASKING: i32 = 2;
/// Paused: every remaining agent is paused; `baton resume` continues.
pub const PAUSED: i32 = 3;
// 130 and 143 (interrupted by SIGINT / SIGTERM) come from `ShutdownSignal::exit_code`.
