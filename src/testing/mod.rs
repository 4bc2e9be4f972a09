//! `baton test`: offline, deterministic tests of a workflow (`docs/testing.md`).
//!
//! A test file says what the run gets, what the model replies (per state and per
//! visit), what stubbed scripts print, how asks are answered and what must come
//! out. The run is a real one — the workflow loop, executors, policies, reminders,
//! forks and budget of `baton run` — with a scripted backend in place of Claude,
//! in a temporary `.baton` directory of its own; nothing reaches the network.
//!
//! `spec` reads a test file, `discovery` finds them, `scripted` is the model and
//! the script stubs, `runner` runs one test and checks it; `record` writes a
//! test file from a finished run (`baton test --record`).

pub(crate) mod discovery;
pub(crate) mod record;
pub(crate) mod runner;
pub(crate) mod scripted;
pub(crate) mod spec;
