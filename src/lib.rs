//! Baton runs AI-agent workflows written as plain files: markdown prompts for
//! Claude Code and shell scripts, connected by transition tags.
//!
//! The pipeline, in the order data flows:
//! CLI (`cli`) → workflow loop (`workflow_loop`) → executors (`executor`) →
//! tag scanning and interpretation (`tag_scanner`, `interpret_output`) →
//! transitions (`apply_transition`) → persistence (`run_store`) and events
//! (`event_bus`) → observers (`observers`).

pub mod agent;
pub mod apply_transition;
pub mod backend;
pub mod claude;
pub mod cli;
pub mod config;
pub mod duration_text;
pub mod event_bus;
pub mod events;
pub mod executor;
pub mod exit_code;
pub mod failpoint;
pub mod frontmatter;
pub mod interpret_output;
pub mod journal;
pub mod observers;
pub mod policy;
pub mod print_extractor;
pub mod process_group;
pub mod process_watchdog;
pub mod resolve_cd;
pub mod retry_policy;
pub mod run_lock;
pub mod run_metrics;
pub mod run_persistence;
pub mod run_state;
pub mod run_store;
pub mod script_process;
pub mod shutdown;
pub mod state_name;
pub mod state_resolution;
pub mod step_failure;
pub mod suggestion;
pub mod tag;
pub mod tag_scanner;
pub mod task_folder;
pub mod template;
pub mod transition;
pub mod usage_limit;
pub mod workflow_loop;
pub mod workflow_target;

pub use cli::run;
