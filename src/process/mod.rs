//! Child processes: each step runs in its own process group, which a timeout, a
//! shutdown or the watchdog (when Baton itself dies) signals as a whole.

pub mod group;
pub mod script;
pub mod watchdog;
