//! Test support: a builder that writes a workflow into a temporary project, runs
//! the real `baton` binary in it, and returns everything a test may check.

pub(crate) mod browser;
pub(crate) mod claude_cli;
pub(crate) mod codex_cli;
pub(crate) mod fake_anthropic;
pub(crate) mod fake_api;
pub(crate) mod fake_claude;
pub(crate) mod fake_openai;
pub(crate) mod haproxy;
pub(crate) mod loopback;
pub(crate) mod npm_cli;
pub(crate) mod otlp_grpc_receiver;
pub(crate) mod otlp_receiver;
pub(crate) mod phoenix;
pub(crate) mod pi_cli;
pub(crate) mod prometheus;
pub(crate) mod restate;
pub(crate) mod restate_min;
pub(crate) mod run_lock;
pub(crate) mod serve;
pub(crate) mod test_builder;
pub(crate) mod worker;

pub(crate) use test_builder::{Outcome, Test, normalize};
