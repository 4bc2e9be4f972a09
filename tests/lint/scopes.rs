//! Scope kinds.
