//! The workflow as files on disk: which scope a CLI argument names, which file
//! a state name resolves to (R1.x), and did-you-mean suggestions for both.

pub mod resolution;
pub mod state_name;
pub mod suggestion;
pub mod target;
