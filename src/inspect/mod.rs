//! Reading a run after the fact, or while another `baton` drives it: the trace
//! (`events.jsonl`) as a reader that never writes and never trips over the line
//! being appended, and what `baton report` and `baton logs` make of it.

pub(crate) mod logs;
pub(crate) mod next_step;
pub(crate) mod report;
pub(crate) mod trace_file;
pub(crate) mod transcript;
