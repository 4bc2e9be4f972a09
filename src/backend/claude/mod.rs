//! The Claude Code backend: how a markdown state becomes one `claude -p` process
//! and how its stream-json output becomes text, a session, a cost and events.
//!
//! Split by concern: `command` builds the argv (R12.1, A12), `stream_reader`
//! interprets stream-json objects (R12.4–R12.11, A15), `process` runs the
//! child (own process group, prompt on stdin, idle timeout), and `backend`
//! puts them behind the [`crate::backend::Backend`] trait the markdown executor uses.

pub(crate) mod backend;
pub(crate) mod command;
pub(crate) mod process;
pub(crate) mod stream_reader;
pub(crate) mod usage_limit;
pub(crate) mod vocabulary;
