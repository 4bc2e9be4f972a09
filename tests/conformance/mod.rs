//! Conformance tests named after the spec rules they check (docs/format.md §16).

pub(crate) mod common;

mod ask;
mod backends;
mod call_stack;
mod cross_workflow;
mod failure_resume;
mod forks;
mod manifest;
mod parsing;
mod remote;
mod resolution;
mod scope_matrix;
mod script_env;
mod script_errors;
mod yaml_scope;
mod zip_scope;
