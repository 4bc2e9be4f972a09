//! Driving a run: the workflow loop that launches steps and handles whichever
//! finishes first, how failed steps are retried, and how a run
//! stops (signals, bounds).

pub(crate) mod retry_policy;
pub(crate) mod shutdown;
pub(crate) mod workflow_loop;
