//! Child processes run in their own process group so that everything a step
//! started can be signalled together: on a timeout, a shutdown, or — through the
//! watchdog — when Baton itself dies. Shared by the script and Claude runners.

use tokio::process::Child;

use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;

/// Signal the child's whole process group.
pub(crate) fn signal_group(child: &Child, signal: libc::c_int) {
    if let Some(pid) = child.id() {
        // The child was started with process_group(0), so its pid is its group id.
        // SAFETY: killpg has no memory-safety preconditions; a stale id fails with ESRCH.
        unsafe {
            libc::killpg(pid as libc::pid_t, signal);
        }
    }
}

pub(crate) fn kill_group(child: &Child) {
    signal_group(child, libc::SIGKILL);
}

/// React to a change of the run's stop level (`None`: the sender is gone, which
/// counts as `Kill`). `Terminate` sends SIGTERM to the group once; `Kill` sends
/// SIGKILL and returns true, and the caller then reaps the child and gives up.
pub(crate) fn apply_stop_level(child: &Child, level: Option<StopLevel>, terminated: &mut bool) -> bool {
    match level.unwrap_or(StopLevel::Kill) {
        StopLevel::Kill => {
            kill_group(child);
            true
        }
        StopLevel::Terminate if !*terminated => {
            *terminated = true;
            signal_group(child, libc::SIGTERM);
            false
        }
        _ => false,
    }
}

/// Keeps a child's process group on the watchdog's list for as long as it lives.
pub(crate) struct Watched<'a> {
    watchdog: Option<&'a Watchdog>,
    group: u32,
}

impl<'a> Watched<'a> {
    /// Tell the watchdog about `child`'s group (a no-op without a watchdog).
    pub(crate) fn new(watchdog: Option<&'a Watchdog>, child: &Child) -> Watched<'a> {
        let group = child.id().unwrap_or_default();
        if let Some(watchdog) = watchdog {
            watchdog.watch(group);
        }
        Watched { watchdog, group }
    }
}

impl Drop for Watched<'_> {
    fn drop(&mut self) {
        if let Some(watchdog) = self.watchdog {
            watchdog.release(self.group);
        }
    }
}
