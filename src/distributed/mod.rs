//! Distributed runs (issue 21): a run's steps on workers through Restate.

// `--files shipped`: called by the step protocol once it is plugged in (issue
// 21); until then only its tests call it.
#[allow(dead_code)]
pub(crate) mod carry;
