//! Integration tests: every test drives the real `baton` binary on a temporary
//! workflow through [`support::Test`].

mod support;

mod ask_terminal;
mod backend_choice;
mod baton_test;
mod bounds;
mod browser_driver;
mod claude_cli_smoke;
mod claude_e2e;
mod cli;
mod codex_e2e;
mod conformance;
mod crash_resume;
mod diagram;
mod distributed;
mod distributed_harness;
mod distributed_kill;
mod distributed_shipped;
mod isolation;
mod join;
mod kill_anywhere;
mod lint;
mod logs;
mod markdown;
mod on_ask_json;
mod otel;
mod otel_phoenix;
mod pi_e2e;
mod raymond_cli;
mod readme;
mod record;
mod regression;
mod report;
mod rerun;
mod run_admin;
mod samples;
mod schema;
mod serve_api;
mod serve_browser;
mod serve_events;
mod serve_hostile;
mod serve_restart;
mod shutdown;
mod state_compat;
mod yaml_bombs;
