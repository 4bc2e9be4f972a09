//! The persisted model of a run: its agents and the run-wide state around them.
//! Plain data with serde derives; the loop mutates it, the store writes it.

pub mod agent;
pub mod run_state;
