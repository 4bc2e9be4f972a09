//! Child processes: each step runs in its own process group, which a timeout, a
//! shutdown or the watchdog (when Baton itself dies) signals as a whole.

pub(crate) mod executable;
pub(crate) mod git;
pub(crate) mod group;
pub(crate) mod limits;
pub(crate) mod live_groups;
pub(crate) mod pid_window;
pub(crate) mod proc_stat;
pub(crate) mod script;
pub(crate) mod spawn;
pub(crate) mod stop_level;
pub(crate) mod watchdog;
