//! Driving a run: the workflow loop that launches steps and handles whichever
//! finishes first, how failed steps are retried, and how a run
//! stops (signals, bounds).

mod breakpoint;
mod cancel;
mod changes;
mod control;
pub(crate) mod edit;
pub(crate) mod join;
mod launch;
pub(crate) mod outcome;
mod questions;
pub(crate) mod retry_policy;
pub(crate) mod shutdown;
pub(crate) mod step_outcome;
mod usage_limit_wait;
pub(crate) mod workflow_loop;
mod worktree;

#[cfg(test)]
mod tests;
