//! Driving a run: the workflow loop that launches steps and handles whichever
//! finishes first, how step failures are classified and retried, and how a run
//! stops (signals, bounds).

pub mod retry_policy;
pub mod shutdown;
pub mod step_failure;
pub mod workflow_loop;
