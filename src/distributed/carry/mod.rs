//! `--files shipped`: what a worker on another machine needs to run a step, and
//! what it sends back (`docs/distributed-files.md`).
//!
//! A worker that does not share the coordinator's disk gets three things with
//! a step, each carried its own way because each has its own owner and size:
//! the workflow's files (`workflow_bundle`: packed once per run, content-hashed,
//! unpacked into a cache the worker keys by that hash), the agent's working
//! directory (`workdir`: a commit pushed to a branch of a git remote both sides
//! reach, so only what changed travels, and a conflicting edit on the
//! coordinator's side is found rather than overwritten), and the agent CLI's
//! session files (`backend::<name>::session_files`, so a `goto` continues the
//! conversation on whichever worker runs the next step). Nothing here speaks
//! the step protocol: `distributed::protocol` calls these functions on each
//! side, in the order `docs/distributed-files.md` gives.

#[cfg(test)]
mod cli_fakes;
#[cfg(test)]
mod real_cli_tests;

pub(crate) mod files_mode;
pub(crate) mod paths;
pub(crate) mod session;
pub(crate) mod shipped;
pub(crate) mod task_folder;
pub(crate) mod workdir;
pub(crate) mod workflow_bundle;
