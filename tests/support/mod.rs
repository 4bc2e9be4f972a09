//! Test support: a builder that writes a workflow into a temporary project, runs
//! the real `baton` binary in it, and returns everything a test may check.

pub mod claude_cli;
pub mod fake_anthropic;
pub mod fake_claude;
pub mod test_builder;

pub use test_builder::{Outcome, Test};
