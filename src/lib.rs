//! Baton runs AI-agent workflows written as plain files: markdown prompts for
//! Claude Code and shell scripts, connected by transition tags.
//!
//! The folders follow the data, in the order it flows (`docs/architecture.md`):
//! `cli` → `workflow` (scope and state names) → `syntax` (prompt files, tags) →
//! `transition` → `run` (the workflow loop) → `store` and `process` → `executor`
//! → `backend` → `events` → `observers`.
//!
//! Imports only go down the layers: `cli` wires everything; `testing` (`baton
//! test`) drives `run` with a scripted backend; `run` drives
//! `executor`, `transition` and `store`; `executor` uses `backend`, `syntax`,
//! `transition` and `process`; `backend` uses `process`. The leaves — `model`,
//! `events`, `workflow`, `syntax`, `process`, `text`, `exit_code`, `idle_wake` — import
//! nothing above them, and `observers` only read `events`.

mod backend;
mod bounded_read;
mod cli;
mod diagram;
mod distributed;
mod events;
mod executor;
mod exit_code;
mod idle_wake;
mod ids;
mod inspect;
mod lint;
mod model;
mod observers;
mod process;
mod run;
mod serve;
mod store;
mod syntax;
mod testing;
mod text;
mod transition;
mod workflow;

pub use cli::run;
