//! Baton runs AI-agent workflows written as plain files: markdown prompts for
//! Claude Code and shell scripts, connected by transition tags.
//!
//! The folders follow the data, in the order it flows (`docs/architecture.md`):
//! `cli` → `workflow` (scope and state names) → `syntax` (prompt files, tags) →
//! `transition` → `run` (the workflow loop) → `store` and `process` → `executor`
//! → `backend` → `events` → `observers`. A module only uses modules before it in
//! that list, or the shared leaves `model`, `ids`, `text` and `exit_code`.

pub mod backend;
pub mod cli;
pub mod events;
pub mod executor;
pub mod exit_code;
pub mod model;
pub mod observers;
pub mod process;
pub mod run;
pub mod store;
pub mod syntax;
pub mod text;
pub mod transition;
pub mod workflow;

pub use cli::run;
