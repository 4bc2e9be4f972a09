//! Process-wide resource limits: Baton raises its own open-file limit, and
//! budgets descriptors per running step so that a wide fan-out waits for room
//! instead of failing (`docs/decisions.md`).

/// Descriptors a running step may hold at once: its stdout and stderr pipes, the
/// child handle, and the pipes of a spawn in progress.
pub(crate) const FILES_PER_STEP: u64 = 4;

/// Descriptors kept for Baton itself beyond those open at start: the journal,
/// snapshots, trace files, the watchdog pipe, the runtime.
const RESERVED_FILES: u64 = 64;

/// Raise the soft limit on open files to the hard limit, and return the limit in
/// force (`None` when it cannot be read). Failure to raise is harmless.
pub(crate) fn raise_open_file_limit() -> Option<u64> {
    // SAFETY: get/setrlimit on our own process with structs we own.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
        if limit.rlim_cur < limit.rlim_max && libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
            limit = raised;
        }
        Some(limit.rlim_cur)
    }
}

/// How many steps may run at once within `limit` open files, given the
/// descriptors open now.
pub(crate) fn steps_within(limit: u64) -> usize {
    let open_now = std::fs::read_dir("/proc/self/fd").map_or(16, |entries| entries.count() as u64);
    let room = limit.saturating_sub(open_now).saturating_sub(RESERVED_FILES);
    usize::try_from(room / FILES_PER_STEP).unwrap_or(usize::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_leaves_room_for_baton_itself() {
        assert_eq!(steps_within(0), 1, "at least one step always runs");
        let open_now = std::fs::read_dir("/proc/self/fd").unwrap().count() as u64;
        let steps = steps_within(open_now + RESERVED_FILES + 40) as u64;
        assert!((9..=10).contains(&steps), "{steps}");
    }
}
