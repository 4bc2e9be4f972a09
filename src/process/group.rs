//! Child processes run in their own process group so that everything a step
//! started can be signalled together: on a timeout, a shutdown, or — through the
//! watchdog — when Baton itself dies. Shared by the script and Claude runners.
//!
//! When a step's own process exits, whatever it left running in its group (a
//! `cmd &` it never waited for) is ended too: SIGTERM at once, SIGKILL after
//! [`LEFTOVER_GRACE`]. A process meant to outlive its step leaves the group on
//! purpose (`setsid cmd &`), which also takes it out of the watchdog's reach.

use std::sync::Arc;
use std::time::Duration;

use tokio::process::Child;

use crate::process::pid_window::{Candidates, PidWindow};
use crate::process::proc_stat::group_has_live_process;

use crate::process::stop_level::StopLevel;
use crate::process::watchdog::{Registration, Watchdog};

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

/// Send `signal` to the one process `pid` (0 only asks whether it exists); false
/// when there is no such process we may signal. A pid that is no positive
/// `pid_t` is never signalled: 0 and -1 would reach whole groups.
pub(crate) fn signal_process(pid: u32, signal: libc::c_int) -> bool {
    match libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) with a positive pid touches no memory.
        Ok(pid) if pid > 0 => unsafe { libc::kill(pid, signal) == 0 },
        _ => false,
    }
}

/// How long a step's leftover processes get between SIGTERM and SIGKILL.
pub(crate) const LEFTOVER_GRACE: Duration = Duration::from_secs(2);

/// Send `signal` to process group `group`; false when no process is left in it.
fn signal_group_id(group: u32, signal: libc::c_int) -> bool {
    // Group 0 would be Baton's own group: never signal it.
    let Ok(group) = libc::pid_t::try_from(group) else { return false };
    if group <= 0 {
        return false;
    }
    // SAFETY: killpg has no memory-safety preconditions; a gone group fails with ESRCH.
    unsafe { libc::killpg(group, signal) == 0 }
}

/// Ask whatever is left in `group` (after its leader exited) to stop: SIGTERM.
pub(crate) fn terminate_leftovers(group: u32) {
    signal_group_id(group, libc::SIGTERM);
}

/// Wait up to `grace` for `group` to empty after [`terminate_leftovers`], then
/// SIGKILL what remains. The checks start 1 ms apart and back off to 10 ms: a
/// helper that exits on SIGTERM is usually gone within a millisecond or two, and
/// a first wait of 10 ms added that much to every Claude step whose CLI left one.
/// `window`, opened before the leader's spawn, narrows the scan of `/proc` to the
/// processes created since (`PidWindow`).
pub(crate) async fn end_leftovers(group: u32, grace: Duration, window: Option<PidWindow>) {
    let deadline = tokio::time::Instant::now() + grace;
    let mut pause = Duration::from_millis(1);
    let candidates = || window.map_or(Candidates::All, |window| window.candidates(group as i32));
    // The cheap check first: usually the group is already empty.
    while signal_group_id(group, 0) && group_has_live_process(group as i32, candidates()) {
        if tokio::time::Instant::now() >= deadline {
            signal_group_id(group, libc::SIGKILL);
            return;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(10));
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

/// Keeps a child's process group on the watchdog's list for as long as it lives,
/// and kills the group if the runner is dropped before the step settled (a
/// distributed worker's handler dropped when Restate cuts its stream, a step
/// future abandoned): an unsettled group left behind would run on, an orphan,
/// beside the step's retry.
///
/// It holds the watchdog by a shared handle, so that it can be made on the thread
/// that started the process, whichever that is (`process::spawn`).
pub(crate) struct Watched {
    watchdog: Option<(Arc<Watchdog>, Registration)>,
    group: u32,
    settled: bool,
}

impl Watched {
    /// Tell the watchdog about `child`'s group (a no-op without a watchdog).
    pub(crate) fn new(watchdog: Option<Arc<Watchdog>>, child: &Child) -> Watched {
        let group = child.id().unwrap_or_default();
        let watchdog = watchdog.map(|watchdog| {
            let registration = watchdog.watch(group);
            (watchdog, registration)
        });
        Watched { watchdog, group, settled: false }
    }

    /// The step ended the ordinary way: whatever is left in its group (a script's
    /// `keep-background` processes) is no longer this guard's to kill.
    pub(crate) fn settle(&mut self) {
        self.settled = true;
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        if !self.settled {
            signal_group_id(self.group, libc::SIGKILL);
        }
        if let Some((watchdog, registration)) = &self.watchdog {
            watchdog.release(*registration);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;

    use super::*;

    fn alive(pid: u32) -> bool {
        crate::process::proc_stat::ProcStat::read(pid as i32).is_some_and(|stat| !stat.is_zombie())
    }

    #[tokio::test]
    async fn leftovers_that_ignore_sigterm_are_killed_after_the_grace() {
        // With every process read, and with only those created since the spawn.
        for narrowed in [false, true] {
            let window = if narrowed { Some(PidWindow::open().expect("/proc/stat")) } else { None };
            // The leader exits at once; its background child ignores SIGTERM.
            let leader = tokio::process::Command::new("bash")
                .args(["-c", "trap '' TERM; sleep 30 >/dev/null & echo $!"])
                .stdout(Stdio::piped())
                .process_group(0)
                .spawn()
                .unwrap();
            let group = leader.id().unwrap();
            let output = leader.wait_with_output().await.unwrap();
            let orphan: u32 = String::from_utf8_lossy(&output.stdout).trim().parse().unwrap();
            terminate_leftovers(group);
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(alive(orphan), "SIGTERM is ignored");
            end_leftovers(group, Duration::from_millis(50), window).await;
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            while alive(orphan) && std::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert!(!alive(orphan), "SIGKILL ended it (narrowed: {narrowed})");
        }
    }

    #[tokio::test]
    async fn a_group_left_holding_only_a_zombie_counts_as_ended() {
        // The leader exits at once. Its subshell forks a `sleep 0.5`, then leaves
        // the group (`setsid`) and becomes a `sleep 5` that never reaps it: the group
        // holds one zombie, as when a CLI's `git` outlives it unreaped. (A child
        // that ended before the subshell's `exec` would be reaped by bash.)
        let window = PidWindow::open().expect("/proc/stat");
        let leader = tokio::process::Command::new("bash")
            .args(["-c", "(sleep 0.5 & exec setsid sleep 5) & exit 0"])
            .process_group(0)
            .spawn()
            .unwrap();
        let group = leader.id().unwrap();
        leader.wait_with_output().await.unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(4);
        while group_has_live_process(group as i32, Candidates::All) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(signal_group_id(group, 0), "the zombie is still in the group");
        assert!(!group_has_live_process(group as i32, Candidates::All));
        assert!(!group_has_live_process(group as i32, window.candidates(group as i32)));
        end_leftovers(group, LEFTOVER_GRACE, Some(window)).await;
    }

    #[test]
    fn group_zero_is_never_signalled() {
        assert!(!signal_group_id(0, 0));
    }
}
