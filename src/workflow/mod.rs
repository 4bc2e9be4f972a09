//! The workflow as files on disk: which scope a CLI argument names, which file
//! a state name resolves to (R1.x), which workflow a cross-workflow specifier
//! names (R13.9–R13.12), and did-you-mean suggestions.

pub(crate) mod ask_scan;
pub(crate) mod convert;
pub(crate) mod manifest;
pub(crate) mod remote;
pub(crate) mod resolution;
pub(crate) mod specifier;
pub(crate) mod state_file;
pub(crate) mod state_name;
pub(crate) mod suggestion;
pub(crate) mod target;
pub(crate) mod yaml_scope;
pub(crate) mod zip_scope;
