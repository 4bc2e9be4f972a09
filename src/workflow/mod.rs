//! The workflow as files on disk: which scope a CLI argument names, which file
//! a state name resolves to (R1.x), which workflow a cross-workflow specifier
//! names (R13.9–R13.12), and reading a workflow of any kind through one
//! [`scope::Scope`].

pub(crate) mod ask_scan;
pub(crate) mod convert;
pub(crate) mod kept;
pub(crate) mod manifest;
pub(crate) mod remote;
pub(crate) mod resolution;
pub(crate) mod scope;
pub(crate) mod specifier;
pub(crate) mod state_file;
pub(crate) mod target;
pub(crate) mod yaml_scope;
pub(crate) mod zip_scope;
