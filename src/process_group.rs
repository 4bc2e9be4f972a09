//! Child processes run in their own process group so that everything a step
//! started can be signalled together: on a timeout, a shutdown, or — through the
//! watchdog — when Baton itself dies. Shared by the script and Claude runners.

use tokio::process::Child;

use crate::process_watchdog::Watchdog;

/// Signal the child's whole process group.
pub fn signal_group(child: &Child, signal: libc::c_int) {
    if let Some(pid) = child.id() {
        // The child was started with process_group(0), so its pid is its group id.
        // SAFETY: killpg has no memory-safety preconditions; a stale id fails with ESRCH.
        unsafe {
            libc::killpg(pid as libc::pid_t, signal);
        }
    }
}

pub fn kill_group(child: &Child) {
    signal_group(child, libc::SIGKILL);
}

/// Keeps a child's process group on the watchdog's list for as long as it lives.
pub struct Watched<'a> {
    watchdog: Option<&'a Watchdog>,
    group: u32,
}

impl<'a> Watched<'a> {
    /// Tell the watchdog about `child`'s group (a no-op without a watchdog).
    pub fn new(watchdog: Option<&'a Watchdog>, child: &Child) -> Watched<'a> {
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
