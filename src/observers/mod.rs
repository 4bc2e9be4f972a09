//! Observers turn bus events into side effects: trace files and console lines.
//! They only listen; nothing here can change the course of a run (seed §9–§10).

pub mod console;
pub mod trace;

pub use console::ConsoleObserver;
pub use trace::DebugObserver;
