//! The workflow as files on disk: which scope a CLI argument names, which file
//! a state name resolves to (R1.x), and did-you-mean suggestions for both.

pub(crate) mod resolution;
pub(crate) mod state_name;
pub(crate) mod suggestion;
pub(crate) mod target;
