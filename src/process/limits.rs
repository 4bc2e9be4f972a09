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

/// Descriptors counted by [`open_descriptors`]: the numbers below this. Programs
/// keep their descriptors low (`select` cannot take higher ones), and one that an
/// inherited high descriptor leaves short is throttled when a spawn fails for it
/// (`run::step_outcome`), as under any miscount.
const COUNTED_DESCRIPTORS: u64 = 1024;

/// How many steps may run at once within `limit` open files, given the
/// descriptors open now.
pub(crate) fn steps_within(limit: u64) -> usize {
    let open_now = open_descriptors(0..limit.min(COUNTED_DESCRIPTORS));
    let room = limit.saturating_sub(open_now).saturating_sub(RESERVED_FILES);
    usize::try_from(room / FILES_PER_STEP).unwrap_or(usize::MAX).max(1)
}

/// How many of the descriptors `numbers` are open, with one `poll` that marks each
/// closed one `POLLNVAL`. Listing `/proc/self/fd` instead makes the kernel build an
/// entry for each descriptor the first time a process lists them: 0.24 ms median
/// (0.41 at the 90th percentile) for 15 descriptors in a new process here, against
/// 6 µs for this, and on the path to a run's first step (issue 22).
fn open_descriptors(numbers: std::ops::Range<u64>) -> u64 {
    let mut polled: Vec<libc::pollfd> = numbers
        .filter_map(|fd| libc::c_int::try_from(fd).ok())
        .map(|fd| libc::pollfd { fd, events: 0, revents: 0 })
        .collect();
    // SAFETY: `poll` reads and writes the `polled.len()` entries of a buffer we own,
    // and returns at once (timeout 0).
    let ready = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, 0) };
    if ready < 0 {
        return 16;
    }
    polled.iter().filter(|entry| entry.revents & libc::POLLNVAL == 0).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_leaves_room_for_baton_itself() {
        assert_eq!(steps_within(0), 1, "at least one step always runs");
        let open_now = open_descriptors(0..COUNTED_DESCRIPTORS);
        let steps = steps_within(open_now + RESERVED_FILES + 40) as u64;
        assert!((9..=10).contains(&steps), "{steps}");
    }

    /// Issue 22: the count that replaced listing `/proc/self/fd` counts what that
    /// listing counts. High numbers, which the other tests running beside this one
    /// in the process never reach.
    #[test]
    fn open_descriptors_are_counted_as_proc_lists_them() {
        use std::os::fd::AsRawFd;
        const HIGH: std::ops::Range<u64> = 1000..1010;
        let listed = || {
            std::fs::read_dir("/proc/self/fd")
                .expect("lists")
                .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u64>().ok())
                .filter(|fd| HIGH.contains(fd))
                .count() as u64
        };
        assert_eq!(open_descriptors(HIGH), 0);
        let null = std::fs::File::open("/dev/null").expect("opens");
        for fd in [1000, 1003, 1009] {
            // SAFETY: duplicating a descriptor we own onto a number nothing here uses.
            assert_eq!(unsafe { libc::dup2(null.as_raw_fd(), fd) }, fd);
        }
        assert_eq!((open_descriptors(HIGH), listed()), (3, 3));
        // SAFETY: closing the duplicate made above.
        unsafe { libc::close(1003) };
        assert_eq!((open_descriptors(HIGH), listed()), (2, 2));
        assert_eq!(open_descriptors(1000..1001), 1);
        for fd in [1000, 1009] {
            // SAFETY: closing the duplicates made above.
            unsafe { libc::close(fd) };
        }
        assert_eq!(open_descriptors(0..0), 0);
    }
}
