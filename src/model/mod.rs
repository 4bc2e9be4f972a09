//! The persisted model of a run: its agents and the run-wide state around them.
//! Plain data with serde derives; the loop mutates it, the store writes it.

pub(crate) mod agent;
pub(crate) mod bound;
pub(crate) mod breakpoints;
pub(crate) mod on_ask;
pub(crate) mod run_state;
