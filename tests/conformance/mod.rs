//! Conformance tests named after the spec rules they check (../shared/spec/protocol.md §16).
