//! Observers turn bus events into side effects: trace files, console lines and
//! OpenTelemetry spans.
//! They only listen; nothing here can change the course of a run (seed §9–§10).

pub(crate) mod console;
pub(crate) mod otel;
pub(crate) mod step_file_queue;
pub(crate) mod step_file_writer;
pub(crate) mod trace;

pub(crate) use console::ConsoleObserver;
pub(crate) use trace::DebugObserver;
