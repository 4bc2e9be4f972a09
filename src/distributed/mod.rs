//! Distributed runs (issue 21): a run's steps on workers through Restate.

pub(crate) mod carry;
