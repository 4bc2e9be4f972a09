//! Observers turn bus events into side effects: trace files and console lines.
//! They only listen; nothing here can change the course of a run (seed §9–§10).

pub mod console_observer;
pub mod debug_observer;

pub use console_observer::ConsoleObserver;
pub use debug_observer::DebugObserver;
